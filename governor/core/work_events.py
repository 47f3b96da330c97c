"""The events of a work item and its attempts (SPEC §3, §6.1): created, started, continued,
finished, accepted, cancelled, reopened, retried.

Rules: as every event (``governor.core.events``): frozen, unknown fields rejected; an
attempt is numbered from 1 per item and run under one run id per spawn.
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    ConfigDict,
    Field,
)

from governor.core.event_fields import (
    AcceptanceReport,
    AccountName,
    EventBase,
    Id,
    Name,
    Outcome,
    ReasonRequired,
    Signature,
    Text,
    UtcTime,
    WorkId,
)
from governor.core.evidence import Evidence, FailureClass
from governor.core.numbers import Count, PosCount, Position, Usd, WaitS
from governor.core.observation import Usage


class WorkCreated(EventBase):
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


class AttemptStarted(EventBase):
    type: Literal["attempt.started"] = "attempt.started"
    work_id: WorkId
    attempt: Position
    run_id: Id
    trigger: Literal["initial", "retry"] = "initial"


class AttemptContinued(EventBase):
    type: Literal["attempt.continued"] = "attempt.continued"
    work_id: WorkId
    attempt: Position
    run_id: Id


class AttemptFinished(EventBase):
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
    account: AccountName | None = None
    """The account the refused call ran under, when its usage window was spent (SPEC
    §13.2); absent otherwise and from older histories."""
    resets_at: UtcTime | None = None
    """When the vendor said that account's usage window reopens (SPEC §13.2)."""


class WorkAccepted(EventBase):
    type: Literal["work.accepted"] = "work.accepted"
    work_id: WorkId


class WorkCancelled(EventBase):
    type: Literal["work.cancelled"] = "work.cancelled"
    work_id: WorkId


class WorkReopened(EventBase):
    type: Literal["work.reopened"] = "work.reopened"
    work_id: WorkId


class WorkRetried(ReasonRequired):
    type: Literal["work.retried"] = "work.retried"
    work_id: WorkId
