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
    * The fold notes the work items whose decision an event may change (``touched``: the
      item it names, and the items depending on one it settles), so that ``decide`` takes
      only their decisions again (``governor.core.memo``).
    * The same failure again (SPEC §12.10): each item, and the planner, keep the run of
      their *charged* failures in a row that share one recorded signature. An uncharged
      failure neither extends nor breaks it; a success (a usable proposal for the planner),
      a failure without a signature, ``work.retried`` / ``work.reopened`` (the item's) and
      ``goal.resumed`` (the planner's) end it. The fold never reads the limit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Literal, Protocol, Self, TypeVar, assert_never

from governor.core.budgets import ledger
from governor.core.event_fields import Outcome, PlanTrigger
from governor.core.events import (
    AttemptFinished,
    AttemptStarted,
    BudgetRaised,
    Event,
    GoalCreated,
    PlanFailed,
    PlanProposed,
    PlanRequested,
    WorkCreated,
)
from governor.core.evidence import Evidence, FailureClass, effective_class
from governor.core.numbers import later
from governor.core.policy import Policy, default_milestones

_State = TypeVar("_State")


class Kept(Protocol):
    """What ``decide`` keeps on a view between calls (``governor.core.memo.DecisionMemo``,
    read above the view): the view only copies it with itself."""

    def copy(self) -> Self: ...


PlanStatus = Literal["requested", "proposed", "failed", "applied", "rejected", "completed"]


@dataclass(slots=True)
class PlanState:
    """One plan: requested, then proposed or failed, then applied, rejected or completed."""

    plan_id: str
    sequence: int
    trigger: PlanTrigger
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
    open_items: int = 0
    """Its work items neither accepted nor cancelled."""
    accepted_items: int = 0
    """Its work items accepted: a plan with none did not complete (``_milestone``)."""


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
    same_failures: int = 0
    """Its charged failures in a row sharing ``signature`` (SPEC §12.10)."""
    signature: str | None = None
    """The signature of that run of failures."""


@dataclass(frozen=True, slots=True)
class Parked:
    """The goal's open park on a failing upstream (``goal.parked``, not yet resumed)."""

    upstream: str
    profile: str
    since: datetime
    """When the upstream was first seen failing."""
    until: datetime
    """Its next probe when the goal was parked."""
    at: datetime
    """When the goal was parked."""


@dataclass(slots=True)
class GoalView:
    """Everything the decision rules need about one goal. Mutated in place by the fold."""

    goal_id: str = ""
    created: GoalCreated | None = None
    policy: Policy = field(default_factory=Policy.model_construct)  # ``Policy()`` (policy.py)
    seq: int = 0
    last_at: datetime | None = None
    plans: dict[str, PlanState] = field(default_factory=dict)
    latest_plan: PlanState | None = None
    active_plan: PlanState | None = None
    plans_used: int = 0
    plans_uncharged: int = 0
    consecutive_uncharged_plans: int = 0
    """Trailing finished uncharged plan failures (since the last charged plan or resume)."""
    milestones: int = 0
    """Applied plans that completed: every work item settled (accepted or cancelled), one
    at least accepted (SPEC §5 ``max_milestones``; decision record 0002)."""
    work: dict[str, WorkState] = field(default_factory=dict)
    items_by_plan: dict[str, list[str]] = field(default_factory=dict)
    attempts_used: int = 0
    attempts_uncharged: int = 0
    running_items: int = 0
    """Items holding a parallel slot: an attempt in flight, and not cancelled (SPEC §11.6)."""
    runtime_s: float = 0.0
    cost_usd: float = 0.0
    cancelled: bool = False
    completed: bool = False
    guidance: str | None = None
    """The reason of the latest ``goal.resumed`` (for a decision: the answer)."""
    parked: Parked | None = None
    """The open park on a failing upstream, if any (SPEC §11.10)."""
    outage_wait_s: float = 0.0
    """Seconds spent parked in parks that ended (``goal.resumed``)."""
    same_plan_failures: int = 0
    """The planner's charged failures in a row sharing ``plan_signature`` (SPEC §12.10)."""
    plan_signature: str | None = None
    """The signature of that run of planner failures."""
    dependents: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)
    """Work id -> the items that depend on it (derived from ``work``)."""
    touched: set[str] = field(default_factory=set, compare=False, repr=False)
    """Work items whose decision may have changed since ``decide`` last took them in."""
    decided: Kept | None = field(default=None, compare=False, repr=False)
    """The work item decisions last taken on this view (``decide`` keeps them)."""

    def copy(self) -> GoalView:
        """An independent snapshot: state objects are copied, frozen events are shared."""
        plans = {k: _copy_plan(p) for k, p in self.plans.items()}
        latest = plans[self.latest_plan.plan_id] if self.latest_plan is not None else None
        active = plans[self.active_plan.plan_id] if self.active_plan is not None else None
        clone = _copy_view(self)
        clone.plans, clone.latest_plan, clone.active_plan = plans, latest, active
        clone.work = {k: _copy_work(w) for k, w in self.work.items()}
        clone.items_by_plan = {k: list(v) for k, v in self.items_by_plan.items()}
        clone.dependents = {k: list(v) for k, v in self.dependents.items()}
        clone.touched = set(self.touched)
        clone.decided = self.decided.copy() if self.decided is not None else None
        return clone

    @property
    def charged_replans(self) -> int:
        """Planner invocations that count: every plan but those that failed uncharged."""
        return self.plans_used - self.plans_uncharged

    @property
    def charged_attempts(self) -> int:
        """Worker attempts across the goal that count: every attempt but uncharged failures."""
        return self.attempts_used - self.attempts_uncharged

    @property
    def plan_continuations(self) -> int:
        """The latest plan's continuations (0 before the first plan)."""
        latest = self.latest_plan
        return latest.continuations if latest is not None else 0

    @property
    def ended(self) -> str | None:
        """The event that ended the goal (``plan.completed`` or ``goal.cancelled``), if one
        did: no event of the goal may follow it (SPEC §11.2)."""
        if self.completed:
            return "plan.completed"
        return "goal.cancelled" if self.cancelled else None

    def items_of(self, plan: PlanState | None) -> list[WorkState]:
        """The work items of a plan, in creation order."""
        if plan is None:
            return []
        return [self.work[w] for w in self.items_by_plan.get(plan.plan_id, ())]


def _shallow(cls: type[_State]) -> Callable[[_State], _State]:
    """A shallow copy of a state dataclass, built by its constructor from every field
    (several times faster than ``copy.copy``; ``GoalView.copy`` takes a few per call)."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    assert all(f.init for f in fields), "every field is set by the constructor"
    get = attrgetter(*(f.name for f in fields))
    return lambda state: cls(*get(state))


_copy_plan = _shallow(PlanState)
_copy_work = _shallow(WorkState)
_copy_view = _shallow(GoalView)


def _elapsed(start: datetime | None, end: datetime) -> float:
    return max((end - start).total_seconds(), 0.0) if start is not None else 0.0


def _finish_plan(view: GoalView, plan: PlanState, at: datetime) -> None:
    view.runtime_s += _elapsed(plan.run_started_at, at)
    plan.run_started_at = None


def _window(
    view: GoalView,
    failure_class: FailureClass | None,
    consecutive: int,
    event: PlanFailed | AttemptFinished,
) -> tuple[int, datetime | None]:
    """The uncharged window after a finished run, and when an upstream cooldown ends.

    A charged outcome (no class that passed the gate) resets the window; an uncharged one
    extends it, and an upstream one waits ``UpstreamBackoff.wait_s`` of the window's length.
    """
    if failure_class is None:
        return 0, None
    consecutive += 1
    if failure_class != "upstream":
        return consecutive, None
    wait = view.policy.upstream_backoff.wait_s(consecutive, event.retry_after_s)
    return consecutive, later(event.at, wait)


def _again(count: int, current: str | None, signature: str | None) -> tuple[int, str | None]:
    """The run of same failures after a charged failure of ``signature`` (SPEC §12.10):
    one more when it repeats the run's, a new run of one when it differs, none without one."""
    if signature is None:
        return 0, None
    return (count + 1 if signature == current else 1), signature


def _plan_failed(view: GoalView, event: PlanFailed) -> None:
    plan = view.plans.get(event.plan_id)
    if plan is None:
        return
    if event.cost_usd:
        view.cost_usd += event.cost_usd
    _finish_plan(view, plan, event.at)
    plan.status = "failed"
    plan.failure = event
    plan.failure_class = effective_class("failed", event.failure_class, event.evidence)
    view.consecutive_uncharged_plans, plan.not_before = _window(
        view, plan.failure_class, view.consecutive_uncharged_plans, event
    )
    if plan.failure_class is None:  # charged: it extends or breaks the planner's run
        view.same_plan_failures, view.plan_signature = _again(
            view.same_plan_failures, view.plan_signature, event.signature
        )
    else:
        view.plans_uncharged += 1


def _attempt_started(view: GoalView, event: AttemptStarted) -> None:
    item = view.work.get(event.work_id)
    if item is None:
        return
    if not (item.running or item.cancelled):  # it takes a parallel slot (``_slot``)
        view.running_items += 1
    item.attempts_used += 1
    item.charged_attempts += 1
    item.attempt = event.attempt
    item.run_id = event.run_id
    item.running = True
    item.fresh = False
    item.continuations = 0
    item.run_started_at = event.at
    item.outcome = item.finish = item.failure_class = item.not_before = None
    view.attempts_used += 1
    view.touched.add(item.work_id)


def _attempt_finished(view: GoalView, event: AttemptFinished) -> None:
    item = view.work.get(event.work_id)
    if item is None or event.attempt != item.attempt or not item.running:
        return
    if not item.cancelled:  # it frees its parallel slot (``_slot``)
        view.running_items -= 1
    item.running = False
    if (started := item.run_started_at) is not None and (
        elapsed := (event.at - started).total_seconds()  # ``_elapsed``, inline
    ) > 0:
        view.runtime_s += elapsed
    if event.cost_usd:
        view.cost_usd += event.cost_usd
    item.run_started_at = None
    item.outcome = event.outcome
    item.finish = event
    view.touched.add(item.work_id)
    # ``effective_class`` has nothing to gate without a class (most finished runs)
    failure_class = (
        None
        if event.failure_class is None
        else effective_class(event.outcome, event.failure_class, event.evidence)
    )
    item.failure_class = failure_class
    if failure_class is None:  # charged: the window resets (``_window``)
        item.consecutive_uncharged, item.not_before = 0, None
        if event.outcome == "succeeded":
            item.same_failures, item.signature = 0, None
        else:  # a charged failure extends or breaks the run of same failures
            item.same_failures, item.signature = _again(
                item.same_failures, item.signature, event.signature
            )
        return
    item.consecutive_uncharged, item.not_before = _window(
        view, failure_class, item.consecutive_uncharged, event
    )
    item.charged_attempts -= 1
    view.attempts_uncharged += 1


def _budget_raised(view: GoalView, event: BudgetRaised) -> None:
    budget = ledger(event.ledger)
    value: float | int = int(event.to) if budget.whole else event.to
    if budget.scope != "item":
        update: dict[str, float | int] = {budget.field: value}
        policy = view.policy
        if budget.field == "max_replans" and policy.max_milestones == default_milestones(
            policy.max_replans
        ):  # a default max_milestones follows the replans up (SPEC §12.1)
            update["max_milestones"] = max(policy.max_milestones, default_milestones(int(value)))
        view.policy = policy.model_copy(update=update)
    elif (item := view.work.get(event.work_id or "")) is not None:
        setattr(item, budget.field, value)
        view.touched.add(item.work_id)


def _milestone(view: GoalView, plan: PlanState | None) -> int:
    """1 when ``plan`` is an applied plan that completed, else 0: its items are all settled
    and one at least was accepted (a plan whose items were all cancelled achieved nothing,
    as goal rule 6 reads it: decision record 0002)."""
    if plan is None or plan.status != "applied" or plan.open_items:
        return 0
    return int(plan.accepted_items > 0)


def _slot(item: WorkState) -> int:
    """1 when the item holds a parallel slot: its attempt is in flight and it is not
    cancelled (a cancelled item is settled even if its last attempt never finished)."""
    return int(item.running and not item.cancelled)


def _settle(view: GoalView, item: WorkState, *, accepted: bool, cancelled: bool) -> None:
    """Accept, cancel or reopen an item, keeping its plan's open items, the milestones and
    the parallel slots."""
    plan = view.plans.get(item.plan_id)
    before = _milestone(view, plan)
    was_open, was_accepted = not (item.accepted or item.cancelled), item.accepted
    view.running_items -= _slot(item)
    item.accepted, item.cancelled = accepted, cancelled
    view.running_items += _slot(item)
    if plan is not None:
        plan.open_items += int(not (accepted or cancelled)) - int(was_open)
        plan.accepted_items += int(accepted) - int(was_accepted)
    view.milestones += _milestone(view, plan) - before
    view.touched.add(item.work_id)
    view.touched.update(view.dependents.get(item.work_id, ()))


def _work_created(view: GoalView, event: WorkCreated) -> None:
    view.work[event.work_id] = WorkState(
        work_id=event.work_id,
        plan_id=event.plan_id,
        spec=event,
        max_attempts=event.max_attempts,
        max_uncharged_attempts=event.max_uncharged_attempts,
    )
    for dependency in event.depends_on:
        view.dependents.setdefault(dependency, []).append(event.work_id)
    view.touched.add(event.work_id)
    plan = view.plans.get(event.plan_id)
    before = _milestone(view, plan)
    view.items_by_plan.setdefault(event.plan_id, []).append(event.work_id)
    if plan is not None:
        plan.open_items += 1
    view.milestones += _milestone(view, plan) - before


def _plan_requested(view: GoalView, event: PlanRequested) -> None:
    plan = PlanState(
        plan_id=event.plan_id,
        sequence=event.sequence,
        trigger=event.trigger,
        run_started_at=event.at,
    )
    view.plans[event.plan_id] = plan
    view.latest_plan = plan
    view.plans_used += 1


def evolve(view: GoalView, event: Event) -> GoalView:  # noqa: PLR0912, PLR0915 - one case per event type
    """Apply one event to the view, in place, and return it.

    Cases dispatch on ``event.type`` (the most frequent first) and read only attributes,
    so an event's compiled struct (``governor.core.wire.decoder.decode_struct``) folds alike.
    """
    view.seq = event.seq
    view.last_at = event.at
    match event.type:
        case "attempt.started":
            _attempt_started(view, event)
        case "attempt.finished":
            _attempt_finished(view, event)
        case "attempt.continued":
            item = view.work.get(event.work_id)
            if item is not None and item.running and item.attempt == event.attempt:
                item.continuations += 1
                item.run_id = event.run_id
                item.run_started_at = event.at
                view.touched.add(item.work_id)
        case "plan.requested":
            _plan_requested(view, event)
        case "plan.continued":
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                plan.continuations += 1
                plan.run_started_at = event.at
        case "plan.proposed":
            plan = view.plans.get(event.plan_id)
            if event.cost_usd and plan is not None:  # every agent call counts (SPEC §12.5)
                view.cost_usd += event.cost_usd
            if plan is not None:
                _finish_plan(view, plan, event.at)
                plan.status = "proposed"
                plan.proposal = event
                view.consecutive_uncharged_plans = 0
                view.same_plan_failures, view.plan_signature = 0, None
        case "plan.failed":
            _plan_failed(view, event)
        case "plan.applied":
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                before = _milestone(view, plan)
                plan.status = "applied"
                plan.work_ids = event.work_ids
                view.active_plan = plan
                view.milestones += _milestone(view, plan) - before
        case "plan.rejected":
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                plan.status = "rejected"
                plan.rejection = event.reason
        case "plan.completed":
            plan = view.plans.get(event.plan_id)
            if event.cost_usd and plan is not None:
                view.cost_usd += event.cost_usd
            if plan is not None:
                plan.status = "completed"
            view.completed = True
        case "work.created":
            _work_created(view, event)
        case "work.accepted":
            if (item := view.work.get(event.work_id)) is not None:
                _settle(view, item, accepted=True, cancelled=item.cancelled)
        case "work.cancelled":
            if (item := view.work.get(event.work_id)) is not None:
                _settle(view, item, accepted=item.accepted, cancelled=True)
        case "work.reopened":
            if (item := view.work.get(event.work_id)) is not None:
                _settle(view, item, accepted=False, cancelled=False)
                # an attempt still in flight (cancelled before it finished) stays current
                item.fresh = not item.running
                item.consecutive_uncharged = 0
                item.same_failures, item.signature = 0, None
        case "work.retried":
            if (item := view.work.get(event.work_id)) is not None:
                item.fresh = True
                item.consecutive_uncharged = 0
                item.same_failures, item.signature = 0, None
                item.guidance = event.reason
                view.touched.add(item.work_id)
        case "goal.parked":
            if view.parked is None:
                view.parked = Parked(
                    event.upstream, event.profile, event.since, event.until, event.at
                )
        case "goal.resumed":
            if view.parked is not None:
                view.outage_wait_s += max((event.at - view.parked.at).total_seconds(), 0.0)
                view.parked = None
            view.consecutive_uncharged_plans = 0
            view.same_plan_failures, view.plan_signature = 0, None
            view.guidance = event.reason
            if view.latest_plan is not None and view.latest_plan.status == "failed":
                view.latest_plan.resumed = True
        case "goal.cancelled":
            view.cancelled = True
        case "budget.raised":
            _budget_raised(view, event)
        case "goal.created":
            view.goal_id = event.goal_id
            view.created = event
            view.policy = event.policy
        case _:
            assert_never(event.type)
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
    "evolve",
    "fold",
    "project",
]
