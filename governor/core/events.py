"""Every event of a goal's stream, as frozen pydantic models in one discriminated union.

Rules (SPEC §3):
    * One stream per goal, ordered by ``seq`` (1, 2, 3 … no gaps).
    * Every event carries ``schema_version``, ``goal_id``, ``seq``, ``type``, ``at``
      (RFC 3339, UTC), ``actor`` and an optional ``reason``; type-specific fields sit
      beside them at the top level.
    * Unknown types and unknown fields are rejected, in nested objects too.
    * A ``type`` string never changes once shipped; old shapes are upgraded by the
      upcasters in ``governor.core.wire.upcast``, never by loosening these models.

A work item's events live in ``governor.core.work_events``, an event's parts and the
fields every event carries in ``governor.core.event_fields``; the union holds them all.
The JSON codec lives in ``governor.core.wire.codec``; nothing else turns events into bytes.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import (
    ConfigDict,
    Field,
    model_validator,
)

from governor.core.budget_events import (
    BudgetDeclined,
    BudgetExpired,
    BudgetGranted,
    BudgetRequested,
)
from governor.core.budgets import ledger
from governor.core.event_fields import (
    AccountName,
    EventBase,
    Id,
    Milestone,
    Name,
    PlanTrigger,
    PoolName,
    Profile,
    ReasonRequired,
    Sha256,
    Signature,
    Text,
    UtcTime,
    WorkId,
    WorkSpec,
)
from governor.core.evidence import Evidence, FailureClass
from governor.core.numbers import MAX_RUNTIME_S, Position, Usd, WaitS
from governor.core.observation import Usage
from governor.core.policy import LedgerName, Policy, check_policy_value
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


class GoalCreated(EventBase):
    type: Literal["goal.created"] = "goal.created"
    title: Name
    objective: Text
    acceptance: tuple[Text, ...] = ()
    policy: Policy = Policy.model_construct()  # ``Policy()``'s value (see ``policy.py``)
    profiles: dict[Name, Profile]
    planner: Name
    worker: Name
    pools: tuple[PoolName, ...] | None = None
    """The pools whose budgets the goal spends (SPEC §13.6); absent: none."""

    @model_validator(mode="after")
    def _profiles_exist(self) -> GoalCreated:
        for role, name in (("planner", self.planner), ("worker", self.worker)):
            if name not in self.profiles:
                raise ValueError(f"{role} profile '{name}' is not among the profiles")
        return self


class PlanRequested(EventBase):
    type: Literal["plan.requested"] = "plan.requested"
    plan_id: Id
    sequence: Position
    trigger: PlanTrigger
    fingerprint: Sha256


class PlanContinued(EventBase):
    type: Literal["plan.continued"] = "plan.continued"
    plan_id: Id


class PlanProposed(EventBase):
    """The planner returned a valid proposal.

    ``evidence`` is set only when the planner run took more than one in-agent try: it
    then carries ``tries`` (SPEC §11.9) and nothing else.
    """

    type: Literal["plan.proposed"] = "plan.proposed"
    plan_id: Id
    decision: Literal["apply", "complete"]
    rationale: Text = ""
    work: tuple[WorkSpec, ...] = ()
    milestone: Milestone | None = None
    evidence: Evidence | None = None
    cost_usd: Usd | None = None
    """What the vendor reported the planner call cost (SPEC §12.5)."""
    usage: Usage | None = None
    """The tokens the vendor reported the planner call used."""

    @model_validator(mode="after")
    def _shape(self) -> PlanProposed:
        if self.decision == "complete" and self.work:
            raise ValueError("a 'complete' proposal has no work")
        if self.decision == "apply" and not self.work:
            raise ValueError("an 'apply' proposal needs at least one work item")
        keys = [spec.key for spec in self.work]
        if len(set(keys)) != len(keys):
            raise ValueError("work keys must be unique")
        return self


class PlanFailed(EventBase):
    """The planner run failed, or its reply failed validation.

    For a ``decision``, ``error`` carries the question the planner asks a person.
    """

    model_config = ConfigDict(populate_by_name=True)

    type: Literal["plan.failed"] = "plan.failed"
    plan_id: Id
    failure_class: FailureClass | None = Field(default=None, alias="class")
    error: Text | None = None
    evidence: Evidence | None = None
    retry_after_s: WaitS | None = None
    cost_usd: Usd | None = None
    """What the vendor reported the planner call cost, charged or not (SPEC §12.5)."""
    usage: Usage | None = None
    signature: Signature | None = None
    """What makes this failure the same as another (SPEC §12.10); absent from older
    histories and from a planner run that was lost."""
    account: AccountName | None = None
    """The account the refused call ran under, when its usage window was spent (SPEC
    §13.2); absent otherwise and from older histories."""
    resets_at: UtcTime | None = None
    """When the vendor said that account's usage window reopens (SPEC §13.2)."""


class PlanApplied(EventBase):
    type: Literal["plan.applied"] = "plan.applied"
    plan_id: Id
    work_ids: tuple[WorkId, ...] = ()


class PlanRejected(ReasonRequired):
    type: Literal["plan.rejected"] = "plan.rejected"
    plan_id: Id


class PlanCompleted(EventBase):
    """A ``complete`` proposal was accepted: the goal succeeded.

    ``cost_usd`` and ``usage`` are optional (SPEC §12.5); governor records a planner
    call's cost on the event of the call (``plan.proposed``), so it never sets them here.
    """

    type: Literal["plan.completed"] = "plan.completed"
    plan_id: Id
    cost_usd: Usd | None = None
    usage: Usage | None = None


class GoalResumed(ReasonRequired):
    type: Literal["goal.resumed"] = "goal.resumed"


class GoalParked(EventBase):
    """The goal waits, uncharged, because an upstream it would call is failing (SPEC §11.10).

    Recorded once per outage, when the upstream's shared health first stops the goal from
    calling it; ``goal.resumed`` (by ``governor``, naming the probe and the outage span)
    ends the park.
    """

    type: Literal["goal.parked"] = "goal.parked"
    upstream: Name
    """The failing upstream: harness, endpoint and model family."""
    profile: Name
    """The goal's profile whose calls reach it."""
    since: UtcTime
    """When the upstream was first seen failing."""
    until: UtcTime
    """Its next probe, when the goal was parked."""

    @model_validator(mode="after")
    def _until_not_before_since(self) -> GoalParked:
        if self.until < self.since:
            raise ValueError("until must not be before since")
        return self


class GoalCancelled(EventBase):
    type: Literal["goal.cancelled"] = "goal.cancelled"


class BudgetRaised(ReasonRequired):
    type: Literal["budget.raised"] = "budget.raised"
    ledger: LedgerName
    work_id: WorkId | None = None
    to: Annotated[float, Field(ge=0, le=MAX_RUNTIME_S, allow_inf_nan=False)]
    """The new limit: a valid value of the policy field the ledger lifts."""

    @model_validator(mode="after")
    def _work_id_matches_ledger(self) -> BudgetRaised:
        budget = ledger(self.ledger)
        per_item = budget.scope == "item"
        if per_item and not self.work_id:
            raise ValueError(f"ledger '{self.ledger}' needs a work_id")
        if not per_item and self.work_id:
            raise ValueError(f"ledger '{self.ledger}' is goal-wide and takes no work_id")
        if budget.whole and self.to != int(self.to):
            raise ValueError(f"ledger '{self.ledger}' counts whole numbers")
        problem = check_policy_value(budget.field, self.to)
        if problem:
            raise ValueError(f"ledger '{self.ledger}': {problem}")
        return self


Event = Annotated[
    GoalCreated
    | PlanRequested
    | PlanContinued
    | PlanProposed
    | PlanFailed
    | PlanApplied
    | PlanRejected
    | PlanCompleted
    | WorkCreated
    | AttemptStarted
    | AttemptContinued
    | AttemptFinished
    | WorkAccepted
    | WorkCancelled
    | WorkReopened
    | WorkRetried
    | GoalResumed
    | GoalParked
    | GoalCancelled
    | BudgetRaised
    | BudgetRequested
    | BudgetGranted
    | BudgetDeclined
    | BudgetExpired,
    Field(discriminator="type"),
]
"""Any event of a goal's stream."""

EVENT_CLASSES: Final[dict[str, type[EventBase]]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        GoalCreated,
        PlanRequested,
        PlanContinued,
        PlanProposed,
        PlanFailed,
        PlanApplied,
        PlanRejected,
        PlanCompleted,
        WorkCreated,
        AttemptStarted,
        AttemptContinued,
        AttemptFinished,
        WorkAccepted,
        WorkCancelled,
        WorkReopened,
        WorkRetried,
        GoalResumed,
        GoalParked,
        GoalCancelled,
        BudgetRaised,
        BudgetRequested,
        BudgetGranted,
        BudgetDeclined,
        BudgetExpired,
    )
}
"""Every event type string and the class that carries it."""

EVENT_TYPES: Final = frozenset(EVENT_CLASSES)
