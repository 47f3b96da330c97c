"""The goal view: everything the rules need about one goal, as the fold keeps it (SPEC §6).

Rules:
    * ``GoalView`` holds the goal's counters, its plans (``PlanState``), its work items
      (``WorkState``, only the latest attempt of each), and its open park (``Parked``).
      The fold (``governor.core.fold``) mutates it in place; ``view.copy()`` takes a
      snapshot.
    * Every budget's counter is one attribute of the view or of a work item
      (``governor.core.budgets``): ``charged_replans``, ``charged_attempts`` and
      ``plan_continuations`` are derived from the fields they count.
    * The fold notes on the view the items an event may have changed the decision of
      (``touched``); the view's one ``governor.core.rules.decider.Decider`` takes them in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import Literal, TypeVar

from governor.core.event_fields import Outcome, PlanTrigger
from governor.core.events import GoalCreated, PlanFailed, PlanProposed
from governor.core.evidence import Evidence, FailureClass
from governor.core.policy import Policy
from governor.core.work_events import AttemptFinished, WorkCreated

_State = TypeVar("_State")


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
    answered: bool = False
    """A ``work.retried`` with no attempt since: its reason is the one answer (one per stop)."""
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


@dataclass(frozen=True, slots=True)
class BudgetRequest:
    """The goal's open request for more budget (``budget.requested``, SPEC §13.7)."""

    budget: str
    """``pool:<name>``, or the goal's own ledger (``cost``, ``total_attempts``, ``replans``)."""
    usd: float | None
    attempts: int | None
    renews_at: datetime | None
    """When the pool renews (the goal goes on by itself then); None: only a grant helps."""
    reason: str
    at: datetime
    declined: bool = False


@dataclass(frozen=True, slots=True)
class OpenGrant:
    """A grant on the goal's own ledger that will expire (``budget.granted``)."""

    budget: str
    usd: float | None
    attempts: int | None
    expires_at: datetime


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
    windows: frozenset[str] = frozenset()
    """Work items whose latest attempt was refused by its account's spent usage window
    (SPEC §13.2): the ones ``governor.core.rules.fleet``'s fleet.6 reads."""
    same_plan_failures: int = 0
    """The planner's charged failures in a row sharing ``plan_signature`` (SPEC §12.10)."""
    plan_signature: str | None = None
    """The signature of that run of planner failures."""
    budget_request: BudgetRequest | None = None
    """The open request for more budget, if any (SPEC §13.7)."""
    open_grants: tuple[OpenGrant, ...] = ()
    """Grants on the goal's own ledgers not yet expired (``budget.expired``)."""
    dependents: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)
    """Work id -> the items that depend on it (derived from ``work``)."""
    touched: set[str] = field(default_factory=set, compare=False, repr=False)
    """Work items whose decision may have changed since the view's decider last took
    them in (``governor.core.rules.decider``)."""

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


__all__ = [
    "Evidence",
    "GoalView",
    "PlanState",
    "WorkState",
]
