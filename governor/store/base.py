"""The event store's contract: its values, its protocol, and the rules every backend shares.

Rules (SPEC §8):
    * The store is the only durable truth: one stream per goal, ``seq`` gapless from 1.
    * ``append`` is one transaction: the fencing check (the lease given is still the
      goal's current lease), the expected-seq check, the insert and the summary upsert.
      Any failure writes nothing.
    * Lease tokens strictly increase per goal, forever (a release keeps the token).
      Expiry only *permits* a takeover; it is the takeover (a new token) that fences
      the old holder out. Liveness of a process is never consulted.
    * The injected clock is the only time source; settings are read by ``open_store``.

Backends subclass :class:`governor.store.engine.BaseEventStore`, which holds the logic
that decides; a backend only stores and fetches.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Protocol

from governor.core.decide import decide
from governor.core.events import Event
from governor.core.ledger import charged_attempts, charged_replans
from governor.core.view import GoalView, fold

Clock = Callable[[], datetime]
"""Returns the current time, timezone-aware UTC."""

ACTIVE_STATUSES: Final = ("ready", "waiting", "running")
"""Goal statuses a scheduler may have to act on (``due`` looks only at these)."""

ERRORS_KEPT: Final = 100
"""How many recent service errors the registry keeps (older ones are dropped)."""


def utc_now() -> datetime:
    """The default clock: the current time in UTC."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to drive one goal until ``expires_at`` (SPEC §8).

    ``token`` is the fencing token: it strictly increases per goal, and an append made
    under a lease is refused once the goal's current lease carries another token.
    """

    goal_id: str
    holder: str
    token: int
    expires_at: datetime

    def is_expired(self, now: datetime) -> bool:
        """Whether another holder may take the lease over at ``now``."""
        return self.expires_at <= now


@dataclass(frozen=True, slots=True)
class Usage:
    """How much of one goal-wide budget is spent: raw runs, charged runs, and the limit."""

    used: int
    charged: int
    limit: int


def usage_row(usage: Usage | None) -> tuple[int | None, int | None, int | None]:
    """A usage as the three columns a backend stores (NULLs for none)."""
    return (None, None, None) if usage is None else (usage.used, usage.charged, usage.limit)


def usage_of(columns: Sequence[int | None]) -> Usage | None:
    """The usage three stored columns hold; None when the row predates them."""
    used, charged, limit = columns
    if used is None or charged is None or limit is None:
        return None
    return Usage(int(used), int(charged), int(limit))


@dataclass(frozen=True, slots=True)
class GoalSummary:
    """One denormalised row per goal, written in the transaction of the append it follows.

    It is a cache of ``decide(project(events), now)`` for listing and scheduling; the
    events stay the truth. The fields after ``updated_at`` are None in a row written
    before the store kept them (schema version 2); the next append fills them in.
    """

    goal_id: str
    title: str
    seq: int
    status: str
    next_action: str
    blocked_on: str | None
    not_before: datetime | None
    updated_at: datetime
    rule: str | None = None
    """The decision rule that fired (``goal.4``)."""
    reason: str | None = None
    """The decision's reason, as ``governor status`` prints it."""
    replans: Usage | None = None
    """Planner runs: used, charged, ``max_replans``."""
    attempts: Usage | None = None
    """Worker attempts across the goal: used, charged, ``max_total_attempts``."""

    @property
    def due_at(self) -> datetime:
        """When a scheduler should look at the goal: ``not_before`` while waiting."""
        if self.status == "waiting" and self.not_before is not None:
            return self.not_before
        return self.updated_at

    def is_due(self, now: datetime) -> bool:
        """Ready, running (its runner may have died), or waiting with ``not_before`` passed."""
        if self.status == "waiting":
            return self.due_at <= now
        return self.status in ACTIVE_STATUSES


@dataclass(frozen=True, slots=True)
class WorkerBeat:
    """One service worker's row of the registry: who it is, and what it is doing now.

    Written by the worker at every heartbeat; ``governor service status`` reads them.
    A row whose ``heartbeat_at`` is old belongs to a worker that died.
    """

    worker_id: str
    host: str
    pid: int
    started_at: datetime
    heartbeat_at: datetime
    goal_id: str | None = None
    """The goal the worker is stepping, None while it looks for work or sleeps."""
    step_started_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ServiceError:
    """An infrastructure error a service worker met while stepping a goal (never an event)."""

    at: datetime
    worker_id: str
    goal_id: str | None
    error: str


def summarize(view: GoalView, now: datetime) -> GoalSummary:
    """The summary row of a goal: its view and the decision taken at ``now``.

    Raises:
        ValueError: when the view holds no ``goal.created``.
    """
    if view.created is None or view.last_at is None:
        raise ValueError("cannot summarise a goal without goal.created")
    decision = decide(view, now, with_ledger=False)
    return GoalSummary(
        goal_id=view.goal_id,
        title=view.created.title,
        seq=view.seq,
        status=decision.status,
        next_action=decision.next_action,
        blocked_on=decision.blocked_on,
        not_before=decision.not_before,
        updated_at=view.last_at,
        rule=decision.rule,
        reason=decision.reason,
        replans=Usage(view.plans_used, charged_replans(view), view.policy.max_replans),
        attempts=Usage(view.attempts_used, charged_attempts(view), view.policy.max_total_attempts),
    )


def append_folded(
    store: EventStore,
    view: GoalView,
    events: Sequence[Event],
    now: datetime,
    *,
    lease: Lease | None = None,
) -> None:
    """Append events built on ``view``, folding them into it first, with the summary after them.

    Raises what ``append`` raises; the view then holds events the store refused, and the
    caller reloads it.
    """
    expected = view.seq
    fold(view, events)
    store.append(
        view.goal_id, events, expected_seq=expected, lease=lease, summary=summarize(view, now)
    )


class EventStore(Protocol):
    """Where goal streams, their summaries and their leases live (SPEC §8).

    A store object is not meant to be shared between processes; open one per process
    (and, for best throughput, one per thread).
    """

    def append(
        self,
        goal_id: str,
        events: Sequence[Event],
        *,
        expected_seq: int,
        lease: Lease | None = None,
        summary: GoalSummary | None = None,
    ) -> int:
        """Append events numbered ``expected_seq + 1 ..`` in one transaction.

        Returns the new last seq. Raises ``ConcurrencyConflictError`` when the stream
        does not end at ``expected_seq``, ``LeaseError`` when ``lease`` is no longer the
        goal's current lease, ``ValueError`` for a malformed batch; nothing is written
        then. Without ``summary`` the store derives it by folding the stream.
        """
        ...

    def load(self, goal_id: str, *, after_seq: int = 0) -> Iterator[Event]:
        """The goal's events after ``after_seq``, in order; ``NotFoundError`` if unknown."""
        ...

    def last_seq(self, goal_id: str) -> int:
        """The seq of the goal's last event; 0 when the goal does not exist."""
        ...

    def goals(
        self,
        *,
        statuses: Collection[str] | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[GoalSummary]:
        """Summaries of every goal (or those with one of ``statuses``), by goal id.

        ``offset`` and ``limit`` give one page of that list (``limit=None``: to the end).
        """
        ...

    def due(self, now: datetime, *, limit: int = 100) -> list[GoalSummary]:
        """Goals a scheduler should tick at ``now``, most overdue first."""
        ...

    def goal_counts(self) -> dict[str, int]:
        """How many goals have each status (statuses with no goal are left out)."""
        ...

    def soonest_wakeup(self) -> datetime | None:
        """The earliest ``not_before`` among waiting goals; None when no goal waits."""
        ...

    def acquire_lease(self, goal_id: str, holder: str, *, ttl_s: float) -> Lease:
        """Take the goal's lease if it is free or expired; ``LeaseError`` names the holder."""
        ...

    def renew_lease(self, lease: Lease, *, ttl_s: float) -> Lease:
        """Extend a lease still current; ``LeaseError`` if it was taken over or released."""
        ...

    def release_lease(self, lease: Lease) -> None:
        """Give the lease up; nothing happens if it was already taken over."""
        ...

    def current_lease(self, goal_id: str) -> Lease | None:
        """The goal's lease (perhaps expired, not yet taken over), or None."""
        ...

    # --- the service registry: shared by the workers of ``governor serve`` -------------

    def heartbeat(self, worker: WorkerBeat) -> None:
        """Insert or replace the worker's registry row."""
        ...

    def remove_worker(self, worker_id: str) -> None:
        """Drop the worker's row (a worker that stops cleanly); no-op when absent."""
        ...

    def workers(self) -> list[WorkerBeat]:
        """Every worker's row, by worker id."""
        ...

    def add_service_error(self, error: ServiceError) -> None:
        """Remember an error, keeping only the ``ERRORS_KEPT`` most recent ones."""
        ...

    def service_errors(self, *, limit: int = 20) -> list[ServiceError]:
        """The most recent errors, newest first."""
        ...

    def close(self) -> None:
        """Release the store's resources; the object is unusable afterwards."""
        ...
