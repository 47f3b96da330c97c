"""Every text rendering of the ``governor`` command: values in, text out, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from governor.core.text import count, stamp

if TYPE_CHECKING:  # types only: a read command does not import the analyses (start-up)
    from governor.analysis.divergence import WhatIf
    from governor.analysis.explain import Explanation
    from governor.analysis.fleet import FleetRun
    from governor.analysis.outages import Savings
    from governor.analysis.replay import ReplayStep
    from governor.analysis.unblock import Unblock
    from governor.core.classify import SpawnResult
    from governor.core.decision import Decision
    from governor.core.events import Event
    from governor.core.ledger import Ledger
    from governor.core.summary import GoalSummary
    from governor.core.upstream import UpstreamHealth
    from governor.service.status import ServiceStatus


def format_budget(charged: int, limit: int, uncharged: int = 0) -> str:
    """``charged/limit (+N uncharged)``, the ledger's one-glance form."""
    extra = f" (+{uncharged} uncharged)" if uncharged else ""
    return f"{charged}/{limit}{extra}"


def format_ledger(ledger: Ledger) -> str:
    """The ledger in a few aligned lines."""
    r, a = ledger.replans, ledger.attempts
    lines = [
        f"  replans   {format_budget(r.charged, r.limit, r.uncharged)}"
        + (f", {r.consecutive_uncharged} uncharged in a row" if r.consecutive_uncharged else ""),
        f"  attempts  {format_budget(a.charged, a.limit, a.used - a.charged)}",
        f"  runtime   {ledger.runtime_s:.1f}s   cost ${ledger.cost_usd:.2f}",
    ]
    for work_id, w in ledger.work.items():
        lines.append(
            f"  {work_id:<24} {w.status:<16} "
            f"{format_budget(w.charged_attempts, w.limit, w.attempts_used - w.charged_attempts)}"
        )
    return "\n".join(lines)


def format_decision(decision: Decision) -> str:
    """A decision as ``status/next_action [on X]: reason``."""
    head = f"{decision.status}/{decision.next_action}"
    if decision.blocked_on:
        head += f" [on {decision.blocked_on}]"
    if decision.exhausted:
        head += f" [{decision.exhausted} exhausted]"
    if decision.not_before:
        head += f" [until {stamp(decision.not_before)}]"
    return f"{head}: {decision.reason}"


def format_step(step: ReplayStep) -> str:
    """One replay line: the event, then the decision after it and the rule that fired."""
    return (
        f"{step.seq:>6}  {step.type:<18} -> {format_decision(step.decision)}  ({step.decision.rule})"
        + _why(step.read)
    )


def _why(event: Event) -> str:
    """A resume's own reason under its replay line (governor's names the probe and the
    outage), and a failure's signature (SPEC §12.10: what "the same failure" compares).

    Reads attributes only: a replay step may hold the event's compiled struct."""
    if event.type == "goal.resumed" or event.type == "work.retried":  # noqa: PLR1714 - narrows for mypy
        return f"\n{'':8}{event.type} by {event.actor}: {event.reason}"
    if (event.type == "plan.failed" or event.type == "attempt.finished") and event.signature:  # noqa: PLR1714
        return f"\n{'':8}signature {event.signature}"
    return ""


def format_validation(
    source: str, events: int, goal_id: str, final: Decision, notes: Sequence[str]
) -> str:
    """The report of a history that passed validation."""
    lines = [
        f"ok: {source}: {events} events, goal {goal_id}, now {final.status}/{final.next_action}"
    ]
    lines += [f"note: {source}: {note}" for note in notes]
    return "\n".join(lines)


def format_blockers(found: Sequence[Unblock]) -> list[str]:
    """Every blocker, what unblocks most first: whose it is, governor's reason, what clears
    it and its commands; an agent's question is quoted as data on a line of its own."""
    lines = [f"blockers ({len(found)}, what unblocks most first):"]
    for k, u in enumerate(found, 1):
        b = u.blocker
        lines.append(f"  {format_blocker_line(k, u)}")
        if b.asked is not None:
            lines.append(f"     the agent asked (its words, not a command): {quoted(b.asked)}")
        lines.append(f"     to clear it: {u.todo}")
        lines += [f"     run: {command}" for command in u.commands]
    return lines


def format_blocker_line(k: int, u: Unblock) -> str:
    """A blocker's line: its rank, kind, what it holds, whose it is, governor's reason."""
    b = u.blocker
    where = b.work_id or ("plan " + b.plan_id if b.plan_id else "the goal")
    whose = "a person" if b.person else "governor"
    return f"{k}. {b.kind} ({where}; waits on {whose}): {b.reason}"


def quoted(text: str, limit: int = 500) -> str:
    """An agent's text as one JSON string: quoted, control characters and line breaks
    escaped, so it can pass neither for governor's words nor for terminal codes."""
    import json  # noqa: PLC0415 - start-up (a read command)

    shown = text if len(text) <= limit else text[:limit] + "…"
    return json.dumps(shown, ensure_ascii=False)


def format_status(
    goal_id: str,
    title: str,
    decision: Decision,
    runs: Sequence[tuple[str, str]] = (),
    found: Sequence[Unblock] = (),
) -> str:
    """A goal's status block: what it is doing, why, its ledger, its last runs, and —
    when more than one thing holds it — every blocker (``found``).

    ``runs`` are ``(what, description)`` pairs (``governor.core.charges.describe``):
    each says charged or not charged, and the run's in-agent tries.
    """
    lines = [
        f"goal {goal_id}: {title}" if title else f"goal {goal_id}",
        f"  {format_decision(decision)}",
        f"  rule {decision.rule}",
        "ledger:",
        format_ledger(decision.ledger),
    ]
    if runs:
        lines.append("last runs:")
        lines += [f"  {what:<24} {description}" for what, description in runs]
    if len(found) > 1:
        lines += format_blockers(found)
    return "\n".join(lines)


def format_summaries(
    store: str,
    rows: Sequence[GoalSummary],
    statuses: Sequence[str] = (),
    found: Mapping[str, Sequence[Unblock]] | None = None,
) -> str:
    """``governor list``: which store, then one line per goal, and under a goal each of its
    blockers (``found``, by goal), as ``status`` numbers them (``format_blocker_line``)."""
    which = f" with status {' or '.join(statuses)}" if statuses else ""
    if not rows:
        hint = "" if statuses else " (governor new GOAL_FILE creates one)"
        return f"no goals{which} in the store {store}{hint}"
    count = f"{len(rows)} goal{'s' if len(rows) != 1 else ''}{which}"
    lines = [f"store {store}: {count}"]
    for row in rows:
        lines.append(format_summary_row(row))
        held = (found or {}).get(row.goal_id, ())
        lines += [f"    {format_blocker_line(k, u)}" for k, u in enumerate(held, 1)]
    return "\n".join(lines)


def format_summary_row(summary: GoalSummary) -> str:
    """One line of ``governor list``."""
    state = f"{summary.status}/{summary.next_action}"
    on = f"[on {summary.blocked_on}]" if summary.blocked_on else ""
    line = f"{summary.goal_id:<32} {state:<28} {on:<16} {summary.title}"
    if summary.status == "blocked" and summary.blocked_on == "operator":
        line += "  (needs a person: a budget grant)"  # SPEC §13.7
    return line


def format_event(event: Event) -> str:
    """One line of ``governor events``: seq, time, type, actor and what it says."""
    from governor.core.wire.codec import to_dict  # noqa: PLC0415 - start-up: list reads no event

    detail = {k: v for k, v in to_dict(event).items() if k not in _COMMON}
    text = ", ".join(f"{k}={_short(v)}" for k, v in detail.items())
    return f"{event.seq:>5}  {stamp(event.at)}  {event.type:<18} {event.actor:<16} {text}"


_COMMON = frozenset({"schema_version", "goal_id", "seq", "at", "actor", "type"})


def _short(value: object, limit: int = 80) -> str:
    import orjson  # noqa: PLC0415 - start-up: only ``events`` shows values (~15 ms to import)

    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_timeline(step: ReplayStep) -> str:
    """One timeline line: when the decision changed, to what, and by which rule."""
    return (
        f"{step.seq:>6}  {stamp(step.at)}  {step.type:<18} {format_decision(step.decision)}  ({step.decision.rule})"
        + _why(step.read)
    )


def format_whatif(
    result: WhatIf, overrides: dict[str, object], *, header: str | None = None
) -> str:
    """A what-if result in a few lines (``header``: instead of the overrides')."""
    changed = ", ".join(f"{k}={v}" for k, v in overrides.items())
    lines = [header or f"under {changed}:"]
    if result.divergence is not None:
        d = result.divergence
        lines.append(
            f"  diverges at seq {d.seq} ({d.event_type}): {format_decision(d.decision)}  ({d.decision.rule})"
        )
        lines += _exhausted_items(d.decision)
    verdict = {
        "same": "the same outcome as recorded",
        "stopped_earlier": "the goal would have stopped (a known outcome)",
        "censored": "the goal would have gone on past what was recorded (censored: unknown)",
    }[result.outcome]
    lines.append(f"  {verdict}")
    lines.append(f"  recorded:    {format_decision(result.recorded_final)}")
    other = "today:      " if header else "other policy:"
    lines.append(f"  {other} {format_decision(result.final)}")
    return "\n".join(lines)


def _exhausted_items(decision: Decision) -> list[str]:
    """The items a decision's ledger shows spent (what a what-if's policy exhausts, which the
    goal's own decision, naming the next item to run, does not say)."""
    work = decision.ledger.work if decision.ledger else {}
    return [
        f"    {work_id} is budget_exhausted: {ledger.charged_attempts} of its {ledger.limit} "
        "attempts charged"
        for work_id, ledger in work.items()
        if ledger.status == "budget_exhausted"
    ]


def format_explanation(ex: Explanation) -> str:
    """Why a goal stopped, its last failures, and the advice."""
    d = ex.decision
    lines = [
        f"goal {ex.goal_id}: {format_decision(d)}",
        f"  rule {d.rule}",
        "ledger:",
        format_ledger(d.ledger),
    ]
    if ex.failures:
        lines.append("last failures:")
        for f in ex.failures:
            lines.append(f"  seq {f.seq:<5} {f.what:<22} {f.why}")
    lines.append(f"advice: {ex.advice}")
    if len(ex.blockers) > 1:
        lines += format_blockers(ex.blockers)
    return "\n".join(lines)


def format_service_status(status: ServiceStatus) -> str:
    """``service status``: workers, goals by status, the soonest wake-up, recent errors."""
    lines = [f"workers: {len(status.workers)}"]
    for w in status.workers:
        doing = f"stepping {w.beat.goal_id}" if w.beat.goal_id else "idle"
        health = f"STALE: silent {w.silent_s:.0f}s" if w.stale else f"beat {w.silent_s:.1f}s ago"
        lines.append(
            f"  {w.beat.worker_id:<32} pid {w.beat.pid:<7} since {stamp(w.beat.started_at)}  "
            f"{health}  {doing}"
        )
    counts = ", ".join(f"{n} {s}" for s, n in sorted(status.goals.items())) or "none"
    lines.append(f"goals: {counts}")
    due = f"{status.due_now}+" if status.due_now >= 1000 else str(status.due_now)
    lines.append(f"due now: {due}")
    if status.reprobed:
        lines.append(
            f"due at the next re-probe: {status.reprobed} (stopped on a missing binary; "
            "serve looks again every --reprobe seconds, default 30)"
        )
    wake = stamp(status.soonest_wakeup) if status.soonest_wakeup else "no goal waits"
    lines.append(f"soonest wake-up: {wake}")
    lines.append(f"upstreams: {len(status.upstreams) or 'none recorded'}")
    lines += [f"  {line}" for line in _upstream_lines(status.upstreams)]
    lines.append(f"recent errors: {len(status.errors) or 'none'}")
    for e in status.errors:
        where = f" goal {e.goal_id}" if e.goal_id else ""
        first = (e.error.splitlines() or [""])[0]
        lines.append(f"  {stamp(e.at)} {e.worker_id}{where}: {first[:200]}")
    return "\n".join(lines)


def _upstream_lines(records: Sequence[UpstreamHealth]) -> list[str]:
    from governor.core.outage_text import shown_name  # noqa: PLC0415 - start-up (list)

    lines = []
    for r in records:
        name = shown_name(r.upstream)
        if r.healthy and not r.answered:
            lines.append(f"{name}: never answered (no call has reached it yet)")
            continue
        if r.healthy:
            last = (
                f"; last outage {stamp(r.outage_started)} to {stamp(r.recovered_at)}"
                if r.outage_started and r.recovered_at
                else ""
            )
            lines.append(f"{name}: healthy{last}")
            continue
        due = r.probe_due_at
        if r.is_account:  # a spent usage window (SPEC §13.2): no probe, a reset time
            lines.append(
                f"{name}: usage window SPENT since {stamp(r.failing_since) if r.failing_since else '?'}"
                f" (last status {r.last_status or 'unknown'}), reopens {stamp(due) if due else '?'}"
                f" (no probe), {count(r.parked or 0, 'goal')} parked"
            )
            continue
        lines.append(
            f"{name}: FAILING since {stamp(r.failing_since) if r.failing_since else '?'}"
            f" (last status {r.last_status or 'unknown'}), {count(r.probes, 'probe')} refused, "
            f"next probe {stamp(due) if due else '?'}, {count(r.parked or 0, 'goal')} parked"
        )
    return lines


def format_fleet(run: FleetRun) -> str:
    """``simulate --fleet``: what reached the shared vendor, and what the outages cost."""
    t = run.tally
    waits = sorted(w for w in run.recoveries_s() if w != float("inf"))
    back = f"median {waits[len(waits) // 2]:.0f}s, at most {waits[-1]:.0f}s" if waits else "none"
    return (
        f"the vendor got {t.calls} calls ({t.refused} refused, {count(t.probes, 'probe')}); "
        f"{count(t.parks, 'park')}, {count(t.manual_resumes, 'manual resume')}; "
        f"from an outage's end to a goal's next call: {back}"
    )


def format_savings(spared: Savings) -> str:
    """``tune``'s last line: the refused calls of the corpus the fleet rule would spare."""
    if not spared.refused:
        return "fleet outages: no call of the corpus was refused by its upstream"
    return (
        f"fleet outages: {count(spared.outages, 'outage')}, {count(spared.refused, 'refused call')}; "
        f"with the fleet rule {spared.sent} would have reached the vendor ({spared.saved} saved)"
    )


def format_upstreams(records: Sequence[UpstreamHealth]) -> str:
    """``upstreams``: each upstream's state, its outage, its next probe, its parked goals."""
    if not records:
        return "no upstream recorded yet (records appear with the first agent call)"
    return "\n".join(_upstream_lines(records))


def format_probe(result: SpawnResult) -> str:
    """What one agent call came to, and whether the rules would charge it."""
    from governor.core.evidence import is_uncharged  # noqa: PLC0415 - start-up (list)
    from governor.core.remedy import (  # noqa: PLC0415 - start-up (list)
        GENERIC_BILLING_REMEDY,
        GENERIC_REMEDY,
        never_reached_line,
    )

    if result.ok:
        reply = (result.reply or "").strip().replace("\n", " ")
        return f"ok in {result.duration_s:.1f}s: {reply[:300]}"
    e = result.evidence
    charged = "uncharged" if is_uncharged("failed", result.failure_class, e) else "charged"
    declared = "".join(f" {k}={v}" for k, v in (("source", e.source), ("ref", e.ref)) if v)
    lines = [
        f"failed: class {result.failure_class or 'none'} ({charged}), rule {e.rule or 'none'}",
        f"evidence: effects={e.effects} output={e.output} refusal={e.refusal}{declared}",
    ]
    if result.retry_after_s is not None:
        lines.append(f"retry after: {result.retry_after_s:g}s")
    if result.rule == "credential":
        lines.append(f"credential refused: {result.credential or GENERIC_REMEDY}")
    if result.rule == "billing":
        lines.append(f"out of credit or quota: {result.billing or GENERIC_BILLING_REMEDY}")
    if result.rule == "no-response" and result.failure_class == "environment":
        lines.append(never_reached_line(result.endpoint))
    if result.error:
        lines.append("error: " + result.error.strip().replace("\n", "\n       "))
    return "\n".join(lines)
