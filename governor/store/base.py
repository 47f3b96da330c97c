"""The event store's contract: its values, its protocol, and the rules every backend shares.

Rules (SPEC §8):
    * The store is the only durable truth: one stream per goal, ``seq`` gapless from 1.
    * ``append`` is one transaction: the fencing check (the lease given is still the
      goal's current lease), the expected-seq check, the insert and the summary upsert.
      Any failure writes nothing.
    * Lease tokens strictly increase per goal, forever (a release keeps the token).
      Expiry only *permits* a takeover; it is the takeover (a new token) that fences
      the old holder out. Liveness of a process is never consulted.
    * The injected clock (``governor.clock``) is the only time source; settings are read
      by ``open_store``.
    * The summary row records the stream's last seq and checksum chain head: a stream
      that ends elsewhere, or whose rows do not reproduce the chain, is corrupt.
    * Its values are owned elsewhere: the summary row by the core
      (``governor.core.summary``), the registry records by the service
      (``governor.registry``). The store keeps them; it takes no goal decision itself
      (a summary it must derive comes from the core).

Backends subclass :class:`governor.store.engine.BaseEventStore`, which holds the logic
that decides; a backend only stores and fetches.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from governor.core.summary import NEEDS_PERSON, GoalSummary, Usage
from governor.registry import AgentRecord, ServiceError, WorkerBeat

if TYPE_CHECKING:  # types only: ``list`` opens a store without the models (start-up)
    from governor.core.events import Event
    from governor.core.pools import PoolEvent, PoolState
    from governor.core.upstream import UpstreamHealth
    from governor.store.findings import CheckTally, Finding
    from governor.store.pools import PoolWrite


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


GoalOrder = Literal["goal_id", "attention"]
"""How a listing is ordered: by goal id, or by what needs attention first (the rank of
``governor.core.summary.attention``, then the most recent change, then goal id)."""


@dataclass(frozen=True, slots=True)
class GoalQuery:
    """Which goals a listing holds (every condition given must hold), and their order."""

    statuses: tuple[str, ...] | None = None
    """One of these statuses (None: any)."""
    needs_person: bool = False
    """Only goals that wait on a person (``attention`` 0)."""
    search: str | None = None
    """Text the goal id or the title contains, ignoring the case of ASCII letters."""
    order: GoalOrder = "goal_id"

    def matches(self, summary: GoalSummary) -> bool:
        """Whether a summary belongs to the listing (the in-memory backend's filter)."""
        if self.statuses is not None and summary.status not in self.statuses:
            return False
        if self.needs_person and summary.attention != NEEDS_PERSON:
            return False
        needle = ascii_lower(self.search or "")
        return needle in ascii_lower(summary.goal_id) or needle in ascii_lower(summary.title)

    def sort_key(self, summary: GoalSummary) -> tuple[int, float, str]:
        """The position of a summary in the order (the in-memory backend's sort)."""
        if self.order == "goal_id":
            return (0, 0.0, summary.goal_id)
        return (summary.attention, -summary.updated_at.timestamp(), summary.goal_id)


def ascii_lower(text: str) -> str:
    """``text`` with ASCII capitals made small, and nothing else changed (as SQL's
    ``lower`` in SQLite; the search compares both sides so)."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def usage_row(usage: Usage | None) -> tuple[int | None, int | None, int | None]:
    """A usage as the three columns a backend stores (NULLs for none)."""
    return (None, None, None) if usage is None else (usage.used, usage.charged, usage.limit)


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
        pools: PoolWrite | None = None,
    ) -> int:
        """Append events numbered ``expected_seq + 1 ..`` in one transaction.

        Returns the new last seq. Raises ``ConcurrencyConflictError`` when the stream
        does not end at ``expected_seq``, ``LeaseError`` when ``lease`` is no longer the
        goal's current lease, ``ValueError`` for a malformed batch; nothing is written
        then. Without ``summary`` the store derives it by folding the stream.

        ``pools``: pool events to append in the same transaction, after those checks and
        with the pools held as ``change_pools`` holds them (a call's start and its
        reservation, its finish and its settlement); anything its ``change`` raises
        writes nothing, the goal's events included.
        """
        ...

    def append_new(
        self, goal_id: str, events: Iterable[Event], summary_of: Callable[[], GoalSummary]
    ) -> int:
        """Store a whole new stream (``goal.created`` first) in one transaction, in pages.

        For a stream too long to hold in memory (an import of 10^6 events): ``events`` is
        read once, inside the transaction, a page at a time; each page is checked and
        encoded as an ``append`` batch is; ``summary_of()`` is called after the last event
        and must be the summary at its seq. Returns the last seq. Anything raised (by the
        events' source, a check or the store) rolls all of it back. Raises
        ``ConcurrencyConflictError`` when the goal already has events.
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
        needs_person: bool = False,
        search: str | None = None,
        order: GoalOrder = "goal_id",
    ) -> list[GoalSummary]:
        """Summaries of every goal (or those with one of ``statuses``, waiting on a person,
        or whose id or title holds ``search``), by goal id or by ``attention``.

        ``offset`` and ``limit`` give one page of that list (``limit=None``: to the end).
        """
        ...

    def count_goals(
        self,
        *,
        statuses: Collection[str] | None = None,
        needs_person: bool = False,
        search: str | None = None,
    ) -> int:
        """How many goals ``goals`` would list with the same conditions."""
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

    # --- agent processes (SPEC §11.11) ----------------------------------------------------

    def add_agent(self, agent: AgentRecord, *, lease: Lease | None = None) -> None:
        """Record an agent process of the goal; ``LeaseError`` (nothing written) when
        ``lease`` is no longer the goal's current lease."""
        ...

    def remove_agent(self, agent: AgentRecord) -> None:
        """Forget an agent process; a no-op when it is not recorded."""
        ...

    def agents(self, goal_id: str) -> list[AgentRecord]:
        """The agent processes recorded for the goal, oldest first."""
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

    def reschedule(self, summary: GoalSummary) -> bool:
        """Replace the goal's summary (no event) if its last seq is still ``summary.seq``."""
        ...

    # --- upstream health: shared by every runner (SPEC §11.10) ---------------------------

    def upstreams(self) -> list[UpstreamHealth]:
        """Every upstream's record, by name, with the number of goals parked on it."""
        ...

    def upstream_health(self, names: Collection[str]) -> dict[str, UpstreamHealth]:
        """The records of the upstreams named (those that have one)."""
        ...

    def change_upstream(
        self, name: str, change: Callable[[UpstreamHealth | None], UpstreamHealth | None]
    ) -> UpstreamHealth | None:
        """Apply a transition to the upstream's record in one transaction, writing only when
        it changes it, and move the goals parked on it; the new record, or None."""
        ...

    # --- pools: budgets shared by goals (SPEC §13.6) ------------------------------------

    def pool_events(self, name: str) -> list[PoolEvent]:
        """The pool's events in order (empty for a pool never set)."""
        ...

    def pool_state(self, name: str) -> PoolState | None:
        """The pool's folded state, or None for a pool never set."""
        ...

    def pool_states(self) -> list[PoolState]:
        """Every pool's state (deleted ones too), by name."""
        ...

    def change_pools(
        self,
        names: Sequence[str],
        change: Callable[[Mapping[str, PoolState]], Mapping[str, Sequence[dict[str, Any]]]],
    ) -> dict[str, PoolState]:
        """Append the pool events ``change(states)`` returns (pool name -> the fields of
        each event but ``pool`` and ``seq``) in one transaction that holds every pool
        named; the pools' new states. Anything ``change`` raises writes nothing."""
        ...

    # --- checking the store (``governor store check``) ----------------------------------

    def check(
        self,
        *,
        repair: bool = False,
        tally: CheckTally | None = None,
    ) -> Iterator[Finding]:
        """Check every stream, summary and row; with ``repair`` mend what is derived (never
        an event). Yields each difference found (``governor.store.checks``)."""
        ...

    def close(self) -> None:
        """Release the store's resources; the object is unusable afterwards."""
        ...
