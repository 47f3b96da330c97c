"""A goal's timeline: every planner and worker run, and every act of governance, in order.

Rules:
    * One pass over the events. A run starts at ``plan.requested`` / ``attempt.started``
      (its row sits at that seq), a continuation restarts its clock, and its outcome
      closes it. A run with no outcome yet is in flight.
    * Whether a run was charged, and why, is ``governor.core.charges``'s verdict (the
      core's one definition, in words); a run in flight counts as charged (SPEC §6).
    * Everything else a person or governor did (applied, accepted, retried, resumed,
      raised, cancelled …) is a note; ``work.created`` is told by its plan's note.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from governor.core.charges import charges
from governor.core.event_fields import Profile
from governor.core.events import (
    BudgetRaised,
    Event,
    GoalCreated,
    PlanApplied,
    PlanCompleted,
    PlanContinued,
    PlanFailed,
    PlanProposed,
    PlanRejected,
    PlanRequested,
)
from governor.core.evidence import Evidence
from governor.core.work_events import (
    AttemptContinued,
    AttemptFinished,
    AttemptStarted,
    WorkAccepted,
    WorkCancelled,
    WorkCreated,
    WorkReopened,
    WorkRetried,
)

IN_FLIGHT = "charged: in flight (a run counts as charged until it fails uncharged)"


@dataclass(slots=True)
class Run:
    """One planner or worker run, from its request to its outcome."""

    kind: Literal["plan", "attempt"]
    what: str
    """``plan p2 (replan)`` or ``p1-api attempt 2``."""
    who: str
    """The profile that ran, with its harness and model: ``worker (codex, gpt-5)``."""
    seq: int
    started_at: datetime
    last_start: datetime
    """The start of its latest run (a continuation restarts the clock)."""
    continuations: int = 0
    end_seq: int | None = None
    ended_at: datetime | None = None
    outcome: str = "in flight"
    failure_class: str | None = None
    charged: bool = True
    why: str = IN_FLIGHT
    evidence: Evidence | None = None
    error: str | None = None
    detail: str | None = None
    """What it produced: the proposal, or the worker's summary and acceptance report."""
    cost_usd: float | None = None

    @property
    def duration_s(self) -> float | None:
        """How long its latest run took; None while in flight."""
        if self.ended_at is None:
            return None
        return max((self.ended_at - self.last_start).total_seconds(), 0.0)


@dataclass(frozen=True, slots=True)
class Note:
    """An event that is not part of a run: governance, by an operator or by governor."""

    seq: int
    at: datetime
    type: str
    actor: str
    text: str
    reason: str | None


Entry = Run | Note


def _who(profiles: dict[str, Profile], name: str) -> str:
    profile = profiles.get(name)
    if profile is None:
        return name
    return f"{name} ({profile.harness}{f', {profile.model}' if profile.model else ''})"


def _proposal(event: PlanProposed) -> str:
    lines = [f"{event.decision}: {event.rationale}" if event.rationale else event.decision]
    lines += [f"{event.plan_id}-{w.key}: {w.title}" for w in event.work]
    return "\n".join(lines)


def _report(event: AttemptFinished) -> str | None:
    lines = [event.reason] if event.reason else []
    if event.acceptance is not None:
        for verdict in ("satisfied", "unsatisfied", "unknown"):
            lines += [f"{verdict}: {c}" for c in getattr(event.acceptance, verdict)]
    return "\n".join(lines) or None


def _note_text(event: Event) -> str:
    match event:
        case GoalCreated():
            return f"goal created: {event.title}"
        case PlanApplied():
            return f"plan {event.plan_id} applied: {', '.join(event.work_ids)}"
        case BudgetRaised():
            item = f" of {event.work_id}" if event.work_id else ""
            return f"{event.ledger} budget{item} raised to {event.to:g}"
        case WorkAccepted() | WorkCancelled() | WorkReopened() | WorkRetried():
            return f"{event.work_id} {event.type.removeprefix('work.')}"
        case PlanRejected() | PlanCompleted():
            return f"plan {event.plan_id} {event.type.removeprefix('plan.')}"
        case _:
            return event.type.replace(".", " ")


class _Builder:
    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.open: dict[str, Run] = {}
        self.profiles: dict[str, Profile] = {}
        self.planner = "planner"
        self.work_profiles: dict[str, str] = {}

    def start(self, key: str, run: Run) -> None:
        self.open[key] = run
        self.entries.append(run)

    def restart(self, key: str, at: datetime) -> None:
        if (run := self.open.get(key)) is not None:
            run.continuations += 1
            run.last_start = at

    def finish(self, key: str, event: PlanProposed | PlanFailed | AttemptFinished) -> None:
        run = self.open.pop(key, None)
        if run is None:
            return
        run.end_seq, run.ended_at = event.seq, event.at
        charge = next(charges([event]), None)
        if charge is not None:
            run.charged, run.why = charge.charged, charge.why
        run.cost_usd = event.cost_usd  # a planner call's cost too (SPEC §12.5)
        if isinstance(event, PlanProposed):
            run.outcome, run.detail = "proposed", _proposal(event)
            return
        run.failure_class, run.evidence, run.error = (
            event.failure_class,
            event.evidence,
            event.error,
        )
        if isinstance(event, PlanFailed):
            run.outcome = "failed"
        else:
            run.outcome, run.detail = event.outcome, _report(event)

    def add(self, event: Event) -> None:
        match event:
            case PlanRequested():
                what = f"plan {event.plan_id} ({event.trigger})"
                who = _who(self.profiles, self.planner)
                self.start(event.plan_id, Run("plan", what, who, event.seq, event.at, event.at))
            case AttemptStarted():
                what = f"{event.work_id} attempt {event.attempt}"
                profile = self.work_profiles.get(event.work_id, "worker")
                run = Run(
                    "attempt", what, _who(self.profiles, profile), event.seq, event.at, event.at
                )
                self.start(f"{event.work_id}#{event.attempt}", run)
            case PlanContinued():
                self.restart(event.plan_id, event.at)
            case AttemptContinued():
                self.restart(f"{event.work_id}#{event.attempt}", event.at)
            case PlanProposed() | PlanFailed():
                self.finish(event.plan_id, event)
            case AttemptFinished():
                self.finish(f"{event.work_id}#{event.attempt}", event)
            case WorkCreated():
                self.work_profiles[event.work_id] = event.profile
            case _:
                if isinstance(event, GoalCreated):
                    self.profiles, self.planner = dict(event.profiles), event.planner
                self.entries.append(
                    Note(
                        event.seq,
                        event.at,
                        event.type,
                        event.actor,
                        _note_text(event),
                        event.reason,
                    )
                )


def timeline(events: Iterable[Event]) -> list[Entry]:
    """The runs and notes of a history, in the order they began."""
    builder = _Builder()
    for event in events:
        builder.add(event)
    return builder.entries
