"""The goal view: everything the rules need, as an incremental fold of the event stream.

Rules (SPEC §6):
    * ``project(events)`` folds from nothing; ``fold(view, events)`` continues a view;
      ``evolve(view, event)`` applies one event. Each event costs O(1): nothing is
      re-read, and no list of past attempts is kept.
    * The fold is *in place*: a view belongs to whoever folds it. ``view.copy()`` takes
      a snapshot when one is needed. ``fold(project(h[:k]), h[k:]) == project(h)``.
    * Counting uses ``governor.core.evidence.is_uncharged`` and nothing else: a pending
      plan or attempt counts as charged until it fails uncharged; a continuation adds
      nothing; only a finished uncharged failure extends a consecutive window.
    * The fold trusts its input. ``governor.core.history`` checks a stream before it is
      stored or replayed; an event the fold cannot place is ignored, not guessed at.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, assert_never

from governor.core.events import (
    AttemptContinued,
    AttemptFinished,
    AttemptStarted,
    BudgetRaised,
    Event,
    GoalCancelled,
    GoalCreated,
    GoalResumed,
    Outcome,
    PlanApplied,
    PlanCompleted,
    PlanContinued,
    PlanFailed,
    PlanProposed,
    PlanRejected,
    PlanRequested,
    PlanTrigger,
    WorkAccepted,
    WorkCancelled,
    WorkCreated,
    WorkReopened,
    WorkRetried,
)
from governor.core.evidence import Evidence, FailureClass, effective_class
from governor.core.policy import LEDGER_FIELDS, Policy, UpstreamBackoff

PlanStatus = Literal["requested", "proposed", "failed", "applied", "rejected", "completed"]


def backoff_s(backoff: UpstreamBackoff, consecutive: int, retry_after_s: float | None) -> float:
    """Wait after the ``consecutive``-th uncharged upstream failure (SPEC §6).

    ``max(min(max_s, initial_s * factor ** (n - 1)), retry_after_s)``. It cannot overflow:
    a power too large for a float is past ``max_s`` by far, so the wait is ``max_s``.
    """
    exponent = max(consecutive - 1, 0)
    try:
        grown = backoff.initial_s * backoff.factor**exponent
    except OverflowError:
        grown = backoff.max_s
    return max(min(backoff.max_s, grown), retry_after_s or 0.0)


@dataclass(slots=True)
class PlanState:
    """One plan: requested, then proposed or failed, then applied, rejected or completed."""

    plan_id: str
    sequence: int
    trigger: PlanTrigger
    requested_at: datetime
    run_started_at: datetime | None
    status: PlanStatus = "requested"
    continuations: int = 0
    proposal: PlanProposed | None = None
    failure: PlanFailed | None = None
    failure_class: FailureClass | None = None
    """The class the rules act on: set only when the failure passed the gate."""
    not_before: datetime | None = None
    resumed: bool = False
    """An operator (or the runner's re-probe) cleared this plan's stop."""
    work_ids: tuple[str, ...] = ()
    rejection: str | None = None


@dataclass(slots=True)
class WorkState:
    """One work item and the ledger of its attempts (only the latest attempt is kept)."""

    work_id: str
    plan_id: str
    spec: WorkCreated
    max_attempts: int
    max_uncharged_attempts: int
    accepted: bool = False
    cancelled: bool = False
    attempts_used: int = 0
    charged_attempts: int = 0
    consecutive_uncharged: int = 0
    fresh: bool = True
    """No attempt since creation, the last ``work.reopened`` or the last ``work.retried``."""
    attempt: int = 0
    run_id: str | None = None
    running: bool = False
    continuations: int = 0
    run_started_at: datetime | None = None
    outcome: Outcome | None = None
    finish: AttemptFinished | None = None
    failure_class: FailureClass | None = None
    """The class the rules act on for the latest failure: set only when it passed the gate."""
    not_before: datetime | None = None
    guidance: str | None = None
    """The reason of the latest ``work.retried`` (for a decision: the answer)."""


@dataclass(slots=True)
class GoalView:
    """Everything the decision rules need about one goal. Mutated in place by the fold."""

    goal_id: str = ""
    created: GoalCreated | None = None
    policy: Policy = field(default_factory=Policy)
    seq: int = 0
    last_at: datetime | None = None
    plans: dict[str, PlanState] = field(default_factory=dict)
    latest_plan: PlanState | None = None
    active_plan: PlanState | None = None
    plans_used: int = 0
    plans_uncharged: int = 0
    planner_consecutive_uncharged: int = 0
    work: dict[str, WorkState] = field(default_factory=dict)
    items_by_plan: dict[str, list[str]] = field(default_factory=dict)
    attempts_used: int = 0
    attempts_uncharged: int = 0
    running_items: int = 0
    runtime_s: float = 0.0
    cost_usd: float = 0.0
    cancelled: bool = False
    completed: bool = False
    guidance: str | None = None
    """The reason of the latest ``goal.resumed`` (for a decision: the answer)."""

    def copy(self) -> GoalView:
        """An independent snapshot: state objects are copied, frozen events are shared."""
        plans = {k: copy.copy(p) for k, p in self.plans.items()}
        latest = plans[self.latest_plan.plan_id] if self.latest_plan is not None else None
        active = plans[self.active_plan.plan_id] if self.active_plan is not None else None
        clone = copy.copy(self)
        clone.plans, clone.latest_plan, clone.active_plan = plans, latest, active
        clone.work = {k: copy.copy(w) for k, w in self.work.items()}
        clone.items_by_plan = {k: list(v) for k, v in self.items_by_plan.items()}
        return clone

    def items_of(self, plan: PlanState | None) -> list[WorkState]:
        """The work items of a plan, in creation order."""
        if plan is None:
            return []
        return [self.work[w] for w in self.items_by_plan.get(plan.plan_id, ())]


def _elapsed(start: datetime | None, end: datetime) -> float:
    return max((end - start).total_seconds(), 0.0) if start is not None else 0.0


def _finish_plan(view: GoalView, plan: PlanState, at: datetime) -> None:
    view.runtime_s += _elapsed(plan.run_started_at, at)
    plan.run_started_at = None


def _plan_failed(view: GoalView, event: PlanFailed) -> None:
    plan = view.plans.get(event.plan_id)
    if plan is None:
        return
    _finish_plan(view, plan, event.at)
    plan.status = "failed"
    plan.failure = event
    plan.failure_class = effective_class("failed", event.failure_class, event.evidence)
    if plan.failure_class is None:
        view.planner_consecutive_uncharged = 0
        return
    view.plans_uncharged += 1
    view.planner_consecutive_uncharged += 1
    if plan.failure_class == "upstream":
        wait = backoff_s(
            view.policy.upstream_backoff, view.planner_consecutive_uncharged, event.retry_after_s
        )
        plan.not_before = event.at + timedelta(seconds=wait)


def _attempt_started(view: GoalView, event: AttemptStarted) -> None:
    item = view.work.get(event.work_id)
    if item is None:
        return
    if item.running:
        view.running_items -= 1
    item.attempts_used += 1
    item.charged_attempts += 1
    item.attempt = event.attempt
    item.run_id = event.run_id
    item.running = True
    item.fresh = False
    item.continuations = 0
    item.run_started_at = event.at
    item.outcome = None
    item.finish = None
    item.failure_class = None
    item.not_before = None
    view.attempts_used += 1
    view.running_items += 1


def _attempt_finished(view: GoalView, event: AttemptFinished) -> None:
    item = view.work.get(event.work_id)
    if item is None or event.attempt != item.attempt or not item.running:
        return
    item.running = False
    view.running_items -= 1
    view.runtime_s += _elapsed(item.run_started_at, event.at)
    view.cost_usd += event.cost_usd or 0.0
    item.run_started_at = None
    item.outcome = event.outcome
    item.finish = event
    item.failure_class = effective_class(event.outcome, event.failure_class, event.evidence)
    if item.failure_class is None:
        item.consecutive_uncharged = 0
        return
    item.charged_attempts -= 1
    item.consecutive_uncharged += 1
    view.attempts_uncharged += 1
    if item.failure_class == "upstream":
        wait = backoff_s(
            view.policy.upstream_backoff, item.consecutive_uncharged, event.retry_after_s
        )
        item.not_before = event.at + timedelta(seconds=wait)


def _budget_raised(view: GoalView, event: BudgetRaised) -> None:
    if event.work_id is not None:
        item = view.work.get(event.work_id)
        if item is None:
            return
        if event.ledger == "attempts":
            item.max_attempts = int(event.to)
        else:
            item.max_uncharged_attempts = int(event.to)
        return
    name = LEDGER_FIELDS[event.ledger]
    value: float | int = event.to if event.ledger in ("runtime", "cost") else int(event.to)
    view.policy = view.policy.model_copy(update={name: value})


def _work_created(view: GoalView, event: WorkCreated) -> None:
    view.work[event.work_id] = WorkState(
        work_id=event.work_id,
        plan_id=event.plan_id,
        spec=event,
        max_attempts=event.max_attempts,
        max_uncharged_attempts=event.max_uncharged_attempts,
    )
    view.items_by_plan.setdefault(event.plan_id, []).append(event.work_id)


def _plan_requested(view: GoalView, event: PlanRequested) -> None:
    plan = PlanState(
        plan_id=event.plan_id,
        sequence=event.sequence,
        trigger=event.trigger,
        requested_at=event.at,
        run_started_at=event.at,
    )
    view.plans[event.plan_id] = plan
    view.latest_plan = plan
    view.plans_used += 1


def evolve(view: GoalView, event: Event) -> GoalView:  # noqa: PLR0912, PLR0915 - one case per event type
    """Apply one event to the view, in place, and return it."""
    view.seq = event.seq
    view.last_at = event.at
    match event:
        case AttemptStarted():
            _attempt_started(view, event)
        case AttemptFinished():
            _attempt_finished(view, event)
        case AttemptContinued():
            item = view.work.get(event.work_id)
            if item is not None and item.running and item.attempt == event.attempt:
                item.continuations += 1
                item.run_id = event.run_id
                item.run_started_at = event.at
        case PlanRequested():
            _plan_requested(view, event)
        case PlanContinued():
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                plan.continuations += 1
                plan.run_started_at = event.at
        case PlanProposed():
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                _finish_plan(view, plan, event.at)
                plan.status = "proposed"
                plan.proposal = event
                view.planner_consecutive_uncharged = 0
        case PlanFailed():
            _plan_failed(view, event)
        case PlanApplied():
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                plan.status = "applied"
                plan.work_ids = event.work_ids
                view.active_plan = plan
        case PlanRejected():
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                plan.status = "rejected"
                plan.rejection = event.reason
        case PlanCompleted():
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                plan.status = "completed"
            view.completed = True
        case WorkCreated():
            _work_created(view, event)
        case WorkAccepted():
            if (item := view.work.get(event.work_id)) is not None:
                item.accepted = True
        case WorkCancelled():
            if (item := view.work.get(event.work_id)) is not None:
                item.cancelled = True
        case WorkReopened():
            if (item := view.work.get(event.work_id)) is not None:
                item.accepted = item.cancelled = False
                item.fresh = True
                item.consecutive_uncharged = 0
        case WorkRetried():
            if (item := view.work.get(event.work_id)) is not None:
                item.fresh = True
                item.consecutive_uncharged = 0
                item.guidance = event.reason
        case GoalResumed():
            view.planner_consecutive_uncharged = 0
            view.guidance = event.reason
            if view.latest_plan is not None and view.latest_plan.status == "failed":
                view.latest_plan.resumed = True
        case GoalCancelled():
            view.cancelled = True
        case BudgetRaised():
            _budget_raised(view, event)
        case GoalCreated():
            view.goal_id = event.goal_id
            view.created = event
            view.policy = event.policy
        case _:
            assert_never(event)
    return view


def fold(view: GoalView, events: Iterable[Event]) -> GoalView:
    """Apply events to the view in order, in place, and return it."""
    for event in events:
        evolve(view, event)
    return view


def project(events: Iterable[Event]) -> GoalView:
    """The view of a stream, folded from nothing."""
    return fold(GoalView(), events)


__all__ = [
    "Evidence",
    "GoalView",
    "PlanState",
    "WorkState",
    "backoff_s",
    "evolve",
    "fold",
    "project",
]
