"""Every ``--json`` shape of governor, defined once: plain values, in a fixed key order.

Rules:
    * ``decision_fields`` and ``ledger_record`` are the shape SPEC §9 pins for one line of
      ``replay --json`` (``step_record``): keep them stable. Every other shape that holds
      a decision holds ``decision_record``: the same fields after the ``rule`` that fired.
    * Times are RFC 3339 UTC ending in ``Z``; absent values are ``null``.
    * The ``tune --json`` object (``tune_record``) is pinned by SPEC §9 too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from governor.core.text import stamp

if TYPE_CHECKING:  # types only: a read command does not import the analyses (start-up)
    from datetime import datetime

    from governor.analysis.divergence import WhatIf
    from governor.analysis.explain import Explanation
    from governor.analysis.fleet import FleetRun
    from governor.analysis.model import Model
    from governor.analysis.outages import Savings
    from governor.analysis.replay import ReplayStep
    from governor.analysis.tune_corpus import TuneReport
    from governor.analysis.unblock import Unblock
    from governor.core.decision import Decision
    from governor.core.ledger import AttemptLedger, Ledger, ReplanLedger, WorkLedger
    from governor.core.question import Question
    from governor.core.summary import GoalSummary
    from governor.core.upstream import UpstreamHealth
    from governor.core.view import GoalView
    from governor.service.status import ServiceStatus
    from governor.store.base import Lease

Record = dict[str, Any]


def replans_record(r: ReplanLedger) -> Record:
    return {
        "used": r.used,
        "charged": r.charged,
        "uncharged": r.uncharged,
        "consecutive_uncharged": r.consecutive_uncharged,
        "limit": r.limit,
        "remaining": r.remaining,
    }


def attempts_record(a: AttemptLedger) -> Record:
    return {"used": a.used, "charged": a.charged, "limit": a.limit, "remaining": a.remaining}


def work_ledger_record(w: WorkLedger) -> Record:
    return {
        "status": w.status,
        "next_action": w.next_action,
        "attempts_used": w.attempts_used,
        "charged_attempts": w.charged_attempts,
        "consecutive_uncharged": w.consecutive_uncharged,
        "continuations": w.continuations,
        "limit": w.limit,
        "remaining": w.remaining,
    }


def ledger_record(ledger: Ledger) -> Record:
    """The ledger as plain values, in the shape SPEC §9 pins."""
    return {
        "replans": replans_record(ledger.replans),
        "attempts": attempts_record(ledger.attempts),
        "work": {work_id: work_ledger_record(w) for work_id, w in ledger.work.items()},
        "runtime_s": float(ledger.runtime_s),
        "cost_usd": float(ledger.cost_usd),
    }


def decision_head(decision: Decision) -> Record:
    """A decision's public fields but its ledger (which ``decision_fields`` puts last)."""
    return {
        "status": decision.status,
        "next_action": decision.next_action,
        "blocked_on": decision.blocked_on,
        "exhausted": decision.exhausted,
        "reason": decision.reason,
        "not_before": stamp(decision.not_before) if decision.not_before else None,
    }


def decision_fields(decision: Decision) -> Record:
    """A decision's public fields, as one line of ``replay --json`` holds them (no rule)."""
    return {**decision_head(decision), "ledger": ledger_record(decision.ledger)}


def decision_record(decision: Decision) -> Record:
    """A decision with the rule that fired: what every ``--json`` but replay's prints."""
    return {"rule": decision.rule, **decision_fields(decision)}


def step_head(seq: int, event_type: str, decision: Decision) -> Record:
    """One line of ``replay --json`` but its ledger (which ``step_record`` puts last)."""
    return {"seq": seq, "type": event_type, **decision_head(decision)}


def step_record(step: ReplayStep) -> Record:
    """One line of ``replay --json`` (SPEC §9)."""
    return {
        **step_head(step.seq, step.type, step.decision),
        "ledger": ledger_record(step.decision.ledger),
    }


def created_record(view: GoalView) -> Record:
    """``new --json``."""
    return {"goal_id": view.goal_id, "seq": view.seq}


def run_record(goal_id: str, outcome: str, decision: Decision) -> Record:
    """``run --json`` and ``tick --json``: how the drive ended, and the decision then."""
    return {"goal_id": goal_id, "outcome": outcome, **decision_record(decision)}


def verb_record(goal_id: str, decision: Decision) -> Record:
    """An operator verb's ``--json``: the goal's decision after it."""
    return {"goal_id": goal_id, **decision_record(decision)}


def question_record(asked: Question | None) -> Record | None:
    """The question a goal waits on (None: none), as ``status --json`` and the API show it."""
    if asked is None:
        return None
    return {
        "asker": asked.asker,
        "text": asked.text,
        "work_id": asked.work_id,
        "plan_id": asked.plan_id,
        "attempt": asked.attempt,
    }


def blocker_record(u: Unblock) -> Record:
    """One blocker of ``status --json``, ``explain --json`` and the API."""
    b = u.blocker
    return {
        "kind": b.kind,
        "work_id": b.work_id,
        "plan_id": b.plan_id,
        "waits_on": "person" if b.person else "governor",
        "reason": b.reason,
        "rule": b.rule,
        "unblocks": b.unblocks,
        "asked": b.asked,
        "reprobed": b.reprobed,
        "todo": u.todo,
        "commands": list(u.commands),
    }


def status_record(
    view: GoalView, decision: Decision, lease: Lease | None, found: Sequence[Unblock] = ()
) -> Record:
    """``status GOAL --json``: the decision, its question (null when none), every blocker
    (what unblocks most first) and the lease."""
    from governor.core.question import question  # noqa: PLC0415 - start-up (a read command)

    return {
        "goal_id": view.goal_id,
        "title": view.created.title if view.created else "",
        "seq": view.seq,
        **decision_record(decision),
        "question": question_record(question(view, decision)),
        "blockers": [blocker_record(u) for u in found],
        "lease": None
        if lease is None
        else {"holder": lease.holder, "expires_at": stamp(lease.expires_at)},
    }


def summary_record(row: GoalSummary, found: Sequence[Unblock] = ()) -> Record:
    """One line of ``list --json``: the summary and every blocker (``found``: as
    ``status --json``'s, empty for a goal no blocker holds)."""
    return {
        "goal_id": row.goal_id,
        "title": row.title,
        "seq": row.seq,
        "status": row.status,
        "next_action": row.next_action,
        "blocked_on": row.blocked_on,
        "not_before": stamp(row.not_before) if row.not_before else None,
        "updated_at": stamp(row.updated_at),
        "needs_person": row.attention == 0,
        "blockers": [blocker_record(u) for u in found],
    }


def imported_record(goal_id: str, events: int, notes: Sequence[str]) -> Record:
    """``import --json``."""
    return {"goal_id": goal_id, "events": events, "notes": list(notes)}


def valid_record(
    path: str, events: int, goal_id: str, notes: Sequence[str], final: Decision
) -> Record:
    """One line of ``validate --json`` for a history that passed."""
    return {
        "file": path,
        "valid": True,
        "events": events,
        "goal_id": goal_id,
        "notes": list(notes),
        **decision_record(final),
    }


def invalid_record(path: str, line: int | None, error: str) -> Record:
    """One line of ``validate --json`` for a history that broke a rule."""
    return {"file": path, "valid": False, "line": line, "error": error}


def whatif_record(history: str, overrides: dict[str, Any], result: WhatIf) -> Record:
    """``replay --policy … --json``: one object per history."""
    d = result.divergence
    return {
        "history": history,
        "overrides": overrides,
        "policy": result.policy.model_dump(mode="json"),
        "outcome": result.outcome,
        "known": result.known,
        "divergence": None
        if d is None
        else {"seq": d.seq, "type": d.event_type, "kind": d.kind, **decision_record(d.decision)},
        "final": decision_record(result.final),
        "recorded_final": decision_record(result.recorded_final),
    }


def explanation_record(ex: Explanation) -> Record:
    """``explain --json``."""
    return {
        "goal_id": ex.goal_id,
        **decision_record(ex.decision),
        "failures": [
            {
                "seq": f.seq,
                "what": f.what,
                "class": f.failure_class,
                "rule": f.rule,
                "charged": f.charged,
                "why": f.why,
                "error": f.error,
                "evidence": f.evidence.model_dump(mode="json") if f.evidence else None,
            }
            for f in ex.failures
        ],
        "change": None
        if ex.change is None
        else {"field": ex.change.field, "from": ex.change.before, "to": ex.change.after},
        "advice": ex.advice,
        "commands": list(ex.commands),
        "blockers": [blocker_record(u) for u in ex.blockers],
    }


def tune_record(report: TuneReport) -> Record:
    """The ``tune --json`` object (SPEC §9), with what issue 16 added: each row's ``basis``,
    the ``model_checks`` and the ``bootstrap`` replicates behind the intervals; and the
    grid points SPEC §12.1 refuses (``infeasible``: each policy and why, never estimated)."""
    return {
        "corpus": {"histories": report.histories, "events": report.events},
        "policies": [
            {
                "policy": e.overrides,
                "success_rate": e.success_rate,
                "success_ci": list(e.success_ci),
                "planner_calls": {"charged": e.planner_calls[0], "uncharged": e.planner_calls[1]},
                "attempts": {"charged": e.attempts[0], "uncharged": e.attempts[1]},
                "wall_s": e.wall_s,
                "cost_usd": e.cost_usd,
                "censored_share": e.censored_share,
                "pareto": e.pareto,
                "basis": e.basis,
            }
            for e in report.estimates
        ],
        "recommended": {"policy": report.recommended.overrides, "why": report.why},
        "model_checks": [
            {
                "check": c.name,
                "statistic": c.statistic,
                "observed": c.observed,
                "replicated": c.replicated,
                "count": c.count,
                "distance": c.distance,
                "p_value": c.p_value,
                "poor": c.poor,
            }
            for c in report.checks
        ],
        "bootstrap": report.bootstrap,
        "infeasible": [{"policy": policy, "why": why} for policy, why in report.infeasible],
    }


def tuned_record(report: TuneReport, spared: Savings) -> Record:
    """``tune --json``: the SPEC §9 object, ``fleet``: the corpus's outages and the calls
    the fleet rule would save (SPEC §11.10), and last ``infeasible`` (SPEC §12.1)."""
    record = tune_record(report)
    infeasible = record.pop("infeasible")
    return {
        **record,
        "fleet": {
            "outages": spared.outages,
            "refused_calls": spared.refused,
            "sent_under_fleet_rule": spared.sent,
            "calls_saved": spared.saved,
        },
        "holdout": {
            "cut_share": report.holdout.cut_share,
            "success_error_per_completed": report.holdout.per_completed.get("success", 0.0),
        },
        "infeasible": infeasible,
    }


def simulated_record(
    model: Model, *, histories: int, events: int, folder: str, seed: int, statuses: dict[str, int]
) -> Record:
    """``simulate --json``: what was written, and the model it came from."""
    return {
        "histories": histories,
        "events": events,
        "out": folder,
        "seed": seed,
        "statuses": statuses,
        "model": asdict(model),
    }


def simulated_fleet_record(simulated: Record, run: FleetRun) -> Record:
    """``simulate --fleet --json``: ``simulated_record``'s object and ``fleet``: what reached
    the shared vendor and what the outages cost."""
    return {**simulated, "fleet": _fleet(run)}


def _fleet(run: FleetRun) -> Record:
    import statistics  # noqa: PLC0415 - start-up: the read commands need no statistics

    t, waits = run.tally, [w for w in run.recoveries_s() if w != float("inf")]
    return {
        "vendor_calls": t.calls,
        "refused_calls": t.refused,
        "probes": t.probes,
        "parks": t.parks,
        "manual_resumes": t.manual_resumes,
        "outages": [[start, end] for start, end in run.outages],
        "recovery_s": {
            "goals": len(waits),
            "median": statistics.median(waits) if waits else None,
            "max": max(waits) if waits else None,
        },
    }


def upstream_record(record: UpstreamHealth) -> Record:
    """``upstreams --json`` (one line per upstream), and each of ``service status``'s:
    its state, the outage it is in (or the last one), its next probe, the goals parked on it."""

    def at(when: datetime | None) -> str | None:
        return stamp(when) if when else None

    return {
        "upstream": record.upstream,
        "harness": record.harness,
        "endpoint": record.endpoint,
        "model_family": record.model_family,
        "state": "healthy" if record.healthy else "failing",
        **(
            {"kind": "account", "reopens_at": at(record.next_probe_at)} if record.is_account else {}
        ),
        "failing_since": at(record.failing_since),
        "last_status": record.last_status,
        "retry_after_s": record.retry_after_s,
        "next_probe_at": at(record.probe_due_at),
        "probes_refused": record.probes,
        "refusals": record.refusals,
        "parked_goals": record.parked or 0,
        "answered": record.answered,
        "last_outage": {
            "started": at(record.outage_started),
            "ended": at(record.recovered_at),
            "ended_by": record.recovered_by,
        }
        if record.recovered_at
        else None,
        "updated_at": stamp(record.updated_at),
    }


def service_record(status: ServiceStatus) -> Record:
    """``service status --json``: the same facts as the text, for scripts."""
    return {
        "at": stamp(status.at),
        "workers": [
            {
                "worker_id": w.beat.worker_id,
                "host": w.beat.host,
                "pid": w.beat.pid,
                "started_at": stamp(w.beat.started_at),
                "heartbeat_at": stamp(w.beat.heartbeat_at),
                "silent_s": round(w.silent_s, 3),
                "stale": w.stale,
                "goal_id": w.beat.goal_id,
                "step_started_at": stamp(w.beat.step_started_at)
                if w.beat.step_started_at
                else None,
            }
            for w in status.workers
        ],
        "goals": dict(sorted(status.goals.items())),
        "due_now": status.due_now,
        "due_at_reprobe": status.reprobed,
        "soonest_wakeup": stamp(status.soonest_wakeup) if status.soonest_wakeup else None,
        "errors": [
            {"at": stamp(e.at), "worker_id": e.worker_id, "goal_id": e.goal_id, "error": e.error}
            for e in status.errors
        ],
        "upstreams": [upstream_record(u) for u in status.upstreams],
    }
