"""The values that cross Temporal: the workflow's input and outcome, and each activity's
request and answer. Plain dataclasses of governor's own values, so the pydantic data
converter carries them (events, runs, health records, leases) as JSON.

Rules:
    * Activities answer with observations (what a run came to, what the store holds);
      the workflow builds every event itself on its own view.
    * Nothing here does I/O; the workflow imports it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

from governor.core.events import Event
from governor.core.policy import Grants
from governor.core.pools import Figure, Refusal
from governor.core.summary import GoalSummary
from governor.core.upstream import UpstreamHealth
from governor.core.wire.codec import encode
from governor.store.base import Lease
from governor.workflow.run import PlannerRun, WorkerRun

Health = dict[str, UpstreamHealth]
"""Profile name -> the shared health record of the upstream it reaches (probe-able ones)."""


def digest(event: Event) -> str:
    """The fence on one stored event: what the workflow folded at its seq is what the store
    holds there (``activities.behind``). Made by the activities, from the store's reading."""
    return hashlib.sha256(encode(event)).hexdigest()[:32]


def contents(events: list[Event]) -> str:
    """The fence on what an append wrote: the digest of its events' stored encodings."""
    hashed = hashlib.sha256()
    for event in events:
        hashed.update(encode(event))
        hashed.update(b"\n")
    return hashed.hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class DriveSettings:
    """How a goal's workflow drives it; fixed when it starts (``governor temporal start``)."""

    lease_ttl_s: float = 300.0
    """The goal's lease outlives a workflow nobody runs by this much (renewed every third)."""
    call_heartbeat_s: float = 30.0
    """An agent call not heard from for this long is lost (then continued, SPEC §6.3);
    its worker kills the agent once it cannot reach the server for half of it."""
    kill_grace_s: float = 10.0
    """How long a continuation waits for a lost call's agent on another machine to go."""
    reprobe_s: float = 60.0
    """How often a goal stopped on a missing binary looks for it again."""
    max_history: int = 4000
    """Temporal history events after which the workflow continues as new."""
    store_timeout_s: float = 60.0
    """A store activity (an append, a load) not done in this long is tried again (it is
    safe to: its worker may have died)."""
    visibility: bool = True
    """Keep the search attributes (``names.SEARCH_ATTRIBUTES``) and the memo."""


@dataclass(frozen=True, slots=True)
class GoalStart:
    """The workflow's input (also across continue-as-new)."""

    goal_id: str
    settings: DriveSettings = field(default_factory=DriveSettings)
    lease: Lease | None = None
    """The goal's lease, taken by whoever started the workflow (None: claim it)."""


@dataclass(frozen=True, slots=True)
class GoalOutcome:
    """How the workflow ended: the goal ended, or another driver took its lease."""

    goal_id: str
    status: str
    reason: str
    taken_over_by: str | None = None


@dataclass(frozen=True, slots=True)
class LoadRequest:
    goal_id: str
    after_seq: int
    limit: int = 500
    digest: str | None = None
    """The digest of the event at ``after_seq`` the workflow folded (None: not known)."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """A page of the goal's events after ``after_seq``, and the health of its upstreams."""

    events: list[Event]
    more: bool
    health: Health
    digest: str | None = None
    """The digest of the last event in ``events``."""
    behind: str | None = None
    """Why the store does not hold what the workflow folded (a restore, a lossy failover)."""


@dataclass(frozen=True, slots=True)
class AppendRequest:
    goal_id: str
    expected_seq: int
    events: list[Event]
    lease: Lease
    summary: GoalSummary
    digest: str | None = None
    """The digest of the event at ``expected_seq`` the workflow folded (None: not known)."""


@dataclass(frozen=True, slots=True)
class Appended:
    """What became of an append.

    ``done``: the events are in the store (now, or by an earlier try whose answer was
    lost); ``newer`` are the events stored after them (or, when not done, after
    ``expected_seq``: fold them and build again). ``taken_over_by`` names the holder of
    the goal's lease when it is no longer ours; ``refused`` is the store's one-line
    refusal of the events (and ``refused_as`` its error class).
    """

    done: bool
    newer: list[Event]
    health: Health
    taken_over_by: str | None = None
    refused: str | None = None
    refused_as: str | None = None
    digest: str | None = None
    """The digest of the goal's last event after the append (or after ``newer``)."""
    behind: str | None = None
    """Why the store does not hold what the workflow folded: nothing was appended."""
    content: str | None = None
    """``contents`` of the events appended (when done): a local activity's history keeps
    its answer, not its input, so replay checks what the workflow wrote against this."""


@dataclass(frozen=True, slots=True)
class LeaseAnswer:
    """The lease renewed or claimed, or who holds it instead."""

    lease: Lease | None
    held_by: str | None = None
    behind: str | None = None
    """Why the store does not hold what the workflow folded (checked on a renewal)."""


@dataclass(frozen=True, slots=True)
class CallRequest:
    """One planner run (``plan_id``) or one worker run (``work_id``, ``run_id``)."""

    goal_id: str
    lease: Lease
    plan_id: str | None = None
    work_id: str | None = None
    run_id: str | None = None
    lost: tuple[str, ...] = ()
    """Runs (a plan id, a run id) that were lost: their agents must be gone first."""
    kill_grace_s: float = 10.0
    ready_update: bool = False
    """Ask the workflow to record the start with ``names.READY_UPDATE`` (it answers once
    it is recorded) instead of signalling ``READY_SIGNAL`` and reading the store until
    the start is there (calls of workflows whose code predates the update)."""


@dataclass(frozen=True, slots=True)
class Observed:
    """What a call came to: a planner's run, a worker's run, or the exception that ended
    it (``crash``, recorded as the charged failure it is); ``held``: it did not run, its
    upstream being known to fail; all None: the run was settled by someone else before it
    started, so nothing ran."""

    planner: PlannerRun | None = None
    worker: WorkerRun | None = None
    crash: str | None = None
    held: str | None = None
    """The call did not run: the upstream it would reach is failing (its name)."""


@dataclass(frozen=True, slots=True)
class ReprobeRequest:
    goal_id: str
    work_id: str | None
    """The item stopped on the environment (None: the planner)."""


@dataclass(frozen=True, slots=True)
class Recovery:
    """An environment stop whose cause is gone: the item (None: the planner) and why."""

    work_id: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class ProbeRequest:
    goal_id: str
    profile: str
    """The parked profile, whose upstream's probe is due."""


@dataclass(frozen=True, slots=True)
class Probed:
    """Whether this goal ran the probe, and the health after it."""

    probed: bool
    health: Health


@dataclass(frozen=True, slots=True)
class LeaseRequest:
    """Claim the goal's lease (``lease`` None), or renew ``lease``."""

    goal_id: str
    ttl_s: float
    lease: Lease | None = None
    seq: int = 0
    """On a renewal: the seq the workflow folded up to, and that event's digest."""
    digest: str | None = None


@dataclass(frozen=True, slots=True)
class ReserveRequest:
    """Reserve calls against every pool of the goal, in order (SPEC §13.6)."""

    goal_id: str
    calls: list[tuple[str, str]]
    """(the call's id in the pools, the profile that runs it)."""


@dataclass(frozen=True, slots=True)
class Reservations:
    """The calls reserved (the first of ``calls``, in order), and the refusal of the next
    one: the figure it asked for, and the refusing pool's ``grants`` rule."""

    held: list[str]
    refusal: Refusal | None = None
    ask: Figure | None = None
    grants: Grants | None = None
    need: Figure | None = None
    """What the goal needs to finish, forecast from the store (SPEC §13.7): the request's
    amount (None: no data, or an answer recorded before it was asked)."""


@dataclass(frozen=True, slots=True)
class SettleRequest:
    """Settle each call's reservation with its recorded figure (None: release it)."""

    goal_id: str
    figures: list[tuple[str, Figure | None]]


@dataclass(frozen=True, slots=True)
class PoolGrantRequest:
    """A grant the pool's own rule allows (``pool.granted``, actor ``policy``)."""

    goal_id: str
    pool: str
    figure: Figure
    expires_s: float | None
    rule: str
    at: datetime
    """The workflow's time of the refusal: a retried grant finds the one it made."""


@dataclass(frozen=True, slots=True)
class ExpectRequest:
    """What a call of ``profile`` is expected to spend (``drive.pools.expected_figure``)."""

    goal_id: str
    profile: str
    asking: bool = False
    """Answer what a request asks instead (``core.pools.asked_usd``/``asked_attempts``:
    the forecast's need to finish, else one more call's cost and one attempt)."""
