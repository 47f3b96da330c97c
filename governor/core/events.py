"""Every event of a goal's stream, as frozen pydantic models in one discriminated union.

Rules (SPEC §3):
    * One stream per goal, ordered by ``seq`` (1, 2, 3 … no gaps).
    * Every event carries ``schema_version``, ``goal_id``, ``seq``, ``type``, ``at``
      (RFC 3339, UTC), ``actor`` and an optional ``reason``; type-specific fields sit
      beside them at the top level.
    * Unknown types and unknown fields are rejected, in nested objects too.
    * A ``type`` string never changes once shipped; old shapes are upgraded by the
      upcasters in ``governor.core.wire.upcast``, never by loosening these models.

The JSON codec lives in ``governor.core.wire.codec``; nothing else turns events into bytes.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from governor.core.budgets import ledger
from governor.core.evidence import Evidence, FailureClass
from governor.core.numbers import MAX_RUNTIME_S, Count, PosCount, Position, TimeoutS, Usd, WaitS
from governor.core.observation import Usage
from governor.core.policy import LedgerName, Policy, check_policy_value
from governor.core.signature import SIGNATURE_LIMIT

SCHEMA_VERSION: Final = 1

ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
"""Goal, plan and run ids: safe as file names, cannot escape a folder."""
KEY_PATTERN: Final = r"^[a-z0-9][a-z0-9-]{0,31}$"
"""Work keys inside a proposal; a work id is ``<plan_id>-<key>``."""
WORK_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,140}$"
TEXT_LIMIT: Final = 2000


RFC3339: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:?\d{2})"
)
"""An RFC 3339 date-time (``T`` or a space between date and time, seconds required, a
zone required), as the history format writes ``at``; ``+0000`` is read as ``+00:00``."""


def check_time_text(value: object) -> object:
    """A time as written: an RFC 3339 string (or a ``datetime`` given from Python), never
    a number, a date alone or a time without seconds, which pydantic would otherwise read
    (SPEC §3: ``at`` is RFC 3339 UTC). The compiled decoder reads only such strings."""
    if isinstance(value, datetime) or (isinstance(value, str) and RFC3339.fullmatch(value)):
        return value
    raise ValueError("must be an RFC 3339 time in UTC, e.g. 2026-03-01T10:00:00Z")


def check_utc(value: datetime) -> datetime:
    """A time in UTC, or ``ValueError`` (the compiled decoder checks the same inline)."""
    if value.utcoffset() != timedelta(0):
        raise ValueError("must be UTC (end in Z or +00:00)")
    return value if value.tzinfo is UTC else value.replace(tzinfo=UTC)


Id = Annotated[str, Field(pattern=ID_PATTERN)]
WorkId = Annotated[str, Field(pattern=WORK_ID_PATTERN)]
Key = Annotated[str, Field(pattern=KEY_PATTERN)]
UtcTime = Annotated[datetime, BeforeValidator(check_time_text), AfterValidator(check_utc)]
Text = Annotated[str, Field(max_length=TEXT_LIMIT)]
Name = Annotated[str, Field(min_length=1, max_length=200)]
Reason = Annotated[str, Field(min_length=1, max_length=TEXT_LIMIT)]
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Signature = Annotated[str, Field(min_length=1, max_length=SIGNATURE_LIMIT)]
"""A failure's signature (``governor.core.signature``; SPEC §12.10)."""

Harness = Literal["codex", "claude", "command", "python", "scripted"]
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
PlanTrigger = Literal["initial", "replan", "milestone", "retry"]
Outcome = Literal["succeeded", "failed", "timed_out", "lost", "abandoned"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Profile(_Frozen):
    """How one agent is run (SPEC §7)."""

    harness: Harness
    model: Name | None = None
    instructions: Annotated[str, Field(max_length=20000)] | None = None
    timeout_s: TimeoutS = 600.0
    """Wall-clock limit of one spawn, in seconds, at most 30 days. Default 600."""
    max_attempts: int = Field(default=2, ge=1, le=20)
    """In-agent spawn attempts (tenacity), not the work budget. Default 2."""
    env: tuple[EnvName, ...] = ()
    """Names of variables passed through the scrubbed environment."""
    args: tuple[str, ...] = ()
    """Harness arguments (for ``command``: the executable and its arguments)."""
    probe: tuple[str, ...] | None = None
    """The harness arguments of this agent's upstream health probe, used instead of ``args``
    (SPEC §11.10): for ``command`` an executable and its arguments, for ``python`` a
    ``module:function``, for ``scripted`` a scenario file. ``codex`` and ``claude`` probe
    with the profile itself; a profile that cannot probe is never parked. Default none."""
    upstream: Name | None = None
    """The name of the upstream this agent's calls reach (SPEC §12.9): profiles that
    declare the same name share one health record and park together, whatever their
    harness. Default: the harness's own identity (codex and claude: harness, endpoint and
    model family; command, python, scripted: the agent itself)."""


class WorkSpec(_Frozen):
    """One work item as a planner proposes it."""

    key: Key
    title: Name
    objective: Text
    acceptance: tuple[Text, ...] = ()
    depends_on: tuple[WorkId, ...] = ()
    """Earlier keys of the same proposal, or ids of accepted work."""
    profile: Name | None = None


class Milestone(_Frozen):
    title: Name
    objective: Text


class AcceptanceReport(_Frozen):
    """Per-criterion results of an attempt, as the worker reported them."""

    satisfied: tuple[Text, ...] = ()
    unsatisfied: tuple[Text, ...] = ()
    unknown: tuple[Text, ...] = ()


class _Event(_Frozen):
    schema_version: Literal[1] = SCHEMA_VERSION
    goal_id: Id
    seq: Position
    at: UtcTime
    actor: Name = "governor"
    reason: Reason | None = None


class _ReasonRequired(_Event):
    @model_validator(mode="after")
    def _has_reason(self) -> _ReasonRequired:
        if not self.reason:
            raise ValueError("a reason is required")
        return self


class GoalCreated(_Event):
    type: Literal["goal.created"] = "goal.created"
    title: Name
    objective: Text
    acceptance: tuple[Text, ...] = ()
    policy: Policy = Policy.model_construct()  # ``Policy()``'s value (see ``policy.py``)
    profiles: dict[Name, Profile]
    planner: Name
    worker: Name

    @model_validator(mode="after")
    def _profiles_exist(self) -> GoalCreated:
        for role, name in (("planner", self.planner), ("worker", self.worker)):
            if name not in self.profiles:
                raise ValueError(f"{role} profile '{name}' is not among the profiles")
        return self


class PlanRequested(_Event):
    type: Literal["plan.requested"] = "plan.requested"
    plan_id: Id
    sequence: Position
    trigger: PlanTrigger
    fingerprint: Sha256


class PlanContinued(_Event):
    type: Literal["plan.continued"] = "plan.continued"
    plan_id: Id


class PlanProposed(_Event):
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


class PlanFailed(_Event):
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


class PlanApplied(_Event):
    type: Literal["plan.applied"] = "plan.applied"
    plan_id: Id
    work_ids: tuple[WorkId, ...] = ()


class PlanRejected(_ReasonRequired):
    type: Literal["plan.rejected"] = "plan.rejected"
    plan_id: Id


class PlanCompleted(_Event):
    """A ``complete`` proposal was accepted: the goal succeeded.

    ``cost_usd`` and ``usage`` are optional (SPEC §12.5); governor records a planner
    call's cost on the event of the call (``plan.proposed``), so it never sets them here.
    """

    type: Literal["plan.completed"] = "plan.completed"
    plan_id: Id
    cost_usd: Usd | None = None
    usage: Usage | None = None


class WorkCreated(_Event):
    type: Literal["work.created"] = "work.created"
    work_id: WorkId
    plan_id: Id
    title: Name
    objective: Text
    acceptance: tuple[Text, ...] = ()
    depends_on: tuple[WorkId, ...] = ()
    profile: Name
    max_attempts: PosCount
    max_uncharged_attempts: Count


class AttemptStarted(_Event):
    type: Literal["attempt.started"] = "attempt.started"
    work_id: WorkId
    attempt: Position
    run_id: Id
    trigger: Literal["initial", "retry"] = "initial"


class AttemptContinued(_Event):
    type: Literal["attempt.continued"] = "attempt.continued"
    work_id: WorkId
    attempt: Position
    run_id: Id


class AttemptFinished(_Event):
    """The terminal record of one run of a work item.

    For a ``decision``, ``error`` carries the question the worker asks a person; the
    worker's summary of what it did, when it gave one, is the event's ``reason``.
    """

    model_config = ConfigDict(populate_by_name=True)

    type: Literal["attempt.finished"] = "attempt.finished"
    work_id: WorkId
    attempt: Position
    run_id: Id
    outcome: Outcome
    failure_class: FailureClass | None = Field(default=None, alias="class")
    error: Text | None = None
    evidence: Evidence | None = None
    acceptance: AcceptanceReport | None = None
    cost_usd: Usd | None = None
    retry_after_s: WaitS | None = None
    usage: Usage | None = None
    """The tokens the vendor reported the run used (SPEC §12.5)."""
    signature: Signature | None = None
    """What makes this failure the same as another (SPEC §12.10): set on a ``failed`` or
    ``timed_out`` run; absent from older histories."""


class WorkAccepted(_Event):
    type: Literal["work.accepted"] = "work.accepted"
    work_id: WorkId


class WorkCancelled(_Event):
    type: Literal["work.cancelled"] = "work.cancelled"
    work_id: WorkId


class WorkReopened(_Event):
    type: Literal["work.reopened"] = "work.reopened"
    work_id: WorkId


class WorkRetried(_ReasonRequired):
    type: Literal["work.retried"] = "work.retried"
    work_id: WorkId


class GoalResumed(_ReasonRequired):
    type: Literal["goal.resumed"] = "goal.resumed"


class GoalParked(_Event):
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


class GoalCancelled(_Event):
    type: Literal["goal.cancelled"] = "goal.cancelled"


class BudgetRaised(_ReasonRequired):
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
    | BudgetRaised,
    Field(discriminator="type"),
]
"""Any event of a goal's stream."""

EVENT_CLASSES: Final[dict[str, type[_Event]]] = {
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
    )
}
"""Every event type string and the class that carries it."""

EVENT_TYPES: Final = frozenset(EVENT_CLASSES)
