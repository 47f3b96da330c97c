"""Pure renderers for the ``governor`` command: values in, text out, no I/O."""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from governor.analysis.explain import Explanation
from governor.analysis.replay import ReplayStep
from governor.analysis.whatif import WhatIf
from governor.core.codec import to_dict
from governor.core.decision import Decision, stamp
from governor.core.events import Event
from governor.core.ledger import Ledger
from governor.store.base import GoalSummary


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
    event = step.event
    return f"{event.seq:>6}  {event.type:<18} -> {format_decision(step.decision)}  ({step.decision.rule})"


def format_validation(
    source: str, events: int, goal_id: str, final: Decision, notes: Sequence[str]
) -> str:
    """The report of a history that passed validation."""
    lines = [
        f"ok: {source}: {events} events, goal {goal_id}, now {final.status}/{final.next_action}"
    ]
    lines += [f"note: {source}: {note}" for note in notes]
    return "\n".join(lines)


def format_status(
    goal_id: str, title: str, decision: Decision, runs: Sequence[tuple[str, str]] = ()
) -> str:
    """A goal's status block: what it is doing, why, its ledger, and its last runs.

    ``runs`` are ``(what, description)`` pairs (``governor.analysis.charges.describe``):
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
    return "\n".join(lines)


def format_summary_row(summary: GoalSummary) -> str:
    """One line of ``governor list``."""
    state = f"{summary.status}/{summary.next_action}"
    on = f"[on {summary.blocked_on}]" if summary.blocked_on else ""
    return f"{summary.goal_id:<32} {state:<28} {on:<16} {summary.title}"


def format_event(event: Event) -> str:
    """One line of ``governor events``: seq, time, type, actor and what it says."""
    detail = {k: v for k, v in to_dict(event).items() if k not in _COMMON}
    text = ", ".join(f"{k}={_short(v)}" for k, v in detail.items())
    return f"{event.seq:>5}  {stamp(event.at)}  {event.type:<18} {event.actor:<16} {text}"


_COMMON = frozenset({"schema_version", "goal_id", "seq", "at", "actor", "type"})


def _short(value: object, limit: int = 80) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_timeline(step: ReplayStep) -> str:
    """One timeline line: when the decision changed, to what, and by which rule."""
    event = step.event
    return f"{event.seq:>6}  {stamp(event.at)}  {event.type:<18} {format_decision(step.decision)}  ({step.decision.rule})"


def format_whatif(result: WhatIf, overrides: dict[str, object]) -> str:
    """A what-if result in a few lines."""
    changed = ", ".join(f"{k}={v}" for k, v in overrides.items())
    lines = [f"under {changed}:"]
    if result.divergence is not None:
        d = result.divergence
        lines.append(
            f"  diverges at seq {d.seq} ({d.event_type}): {format_decision(d.decision)}  ({d.decision.rule})"
        )
    verdict = {
        "same": "the same outcome as recorded",
        "stopped_earlier": "the goal would have stopped (a known outcome)",
        "censored": "the goal would have gone on past what was recorded (censored: unknown)",
    }[result.outcome]
    lines.append(f"  {verdict}")
    lines.append(f"  recorded:    {format_decision(result.recorded_final)}")
    lines.append(f"  other policy: {format_decision(result.final)}")
    return "\n".join(lines)


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
    return "\n".join(lines)
