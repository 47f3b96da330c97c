"""The backend-neutral half of every event store: checks, fencing, leases, paged reads.

Rules (SPEC §8; the values and the contract are in ``governor.store.base``):
    * Every decision a store takes is taken here, once: whether a batch may be appended,
      whether a lease is still current, whether it may be taken over, what a summary
      says when the caller gave none, and whether a stored row is sound.
    * A backend provides a write transaction that serialises writers of a goal, a read
      context, and storage primitives that neither check nor decide. Driver errors are
      translated to ``StoreError`` by the backend, once, with ``raise ... from exc``.
    * Reads are paged, so loading a long stream holds one page at a time and no lock
      between pages; a load returns the stream as it was when ``load`` was called.
    * The service registry (worker rows, recent errors) is written in transactions
      keyed ``REGISTRY_KEY``, which no goal id can equal (goal ids hold no ``:``).
    * A stream never rewinds silently: the summary row records the last seq and the head
      of a checksum chain over every row's CRC (``chain``), written in each append's
      transaction. A stream that ends before (or goes on after) the seq recorded is
      corrupt wherever it is read — load, last seq, append — and a full load that does
      not reproduce the chain head is corrupt too: rows deleted or replaced behind the
      store's back are reported (``CorruptEventError``), never taken for a shorter or
      other history.
    * Upstream health records are kept by ``governor.store.health``, and ``governor store
      check`` is ``governor.store.checks`` (both parts of every store). Rows other than
      events are decoded by ``governor.store.tables`` in the backends, so a damaged one is a
      ``DamagedRowError`` naming it wherever it is read.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from datetime import datetime
from itertools import islice
from types import TracebackType
from typing import TYPE_CHECKING, Final, Generic, Self

from governor.clock import Clock, utc_now
from governor.core.summary import GoalSummary, summarize
from governor.errors import (
    ConcurrencyConflictError,
    CorruptEventError,
    NotFoundError,
    StoreError,
)
from governor.registry import ERRORS_KEPT, AgentRecord, ServiceError, WorkerBeat
from governor.store.base import GoalOrder, GoalQuery, Lease, ascii_lower
from governor.store.checks import StoreChecks
from governor.store.health import HealthRecords
from governor.store.leases import LeaseRecords
from governor.store.pools import PoolRecords, PoolWrite
from governor.store.primitives import StoragePrimitives, Tx
from governor.store.stored import StreamHead, chain

if TYPE_CHECKING:  # the codec and the fold are imported where a store reads or writes
    # events, so that reading summaries (``governor list``) imports no model (start-up)
    from governor.core.events import Event


REGISTRY_KEY: Final = "service:registry"
"""The ``_write`` key of registry transactions: never a goal id (those hold no ``:``)."""


class BaseEventStore(
    LeaseRecords[Tx],
    HealthRecords[Tx],
    PoolRecords[Tx],
    StoreChecks[Tx],
    StoragePrimitives[Tx],
    ABC,
    Generic[Tx],
):
    """The event store contract, implemented over a backend's storage primitives."""

    page_size: int = 1000
    """Rows fetched per read while loading a stream."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock = clock or utc_now

    # --- the contract -----------------------------------------------------------------

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
        """Append events in one transaction; see ``governor.store.base.EventStore.append``."""
        from governor.store.rows import to_rows  # noqa: PLC0415 - start-up (see the imports)

        rows = to_rows(goal_id, events, expected_seq)
        last = rows[-1].seq
        _check_companions(goal_id, last, lease, summary)
        wanted = sorted(set(pools.names)) if pools is not None else []
        with self._write_pooled(goal_id, wanted) as (tx, found):
            if lease is not None:
                self._check_current(
                    tx,
                    lease,
                    f"the lease of {lease.holder} (token {lease.token}) is no longer current: "
                    "{}; nothing was written",
                )
            head = self._checked_head(tx, goal_id)
            if head.last != expected_seq:
                raise ConcurrencyConflictError(
                    goal_id, expected_seq=expected_seq, actual_seq=head.last
                )
            if summary is None:
                summary = self._derive_summary(tx, goal_id, events)
            drafted = None
            if pools is not None and wanted:
                drafted = self._draft_pools(tx, wanted, pools.change, found)
            head_after = chain(self._chain_at(tx, goal_id, head), (r.crc for r in rows))
            self._insert(tx, goal_id, rows)
            self._put_summary(tx, summary, head_after)
            if drafted is not None:
                self._write_pools(tx, drafted)
        return last

    def append_new(
        self, goal_id: str, events: Iterable[Event], summary_of: Callable[[], GoalSummary]
    ) -> int:
        """Store a whole new stream in one transaction, a page of rows at a time; see
        ``governor.store.base.EventStore.append_new``."""
        from governor.store.rows import to_rows  # noqa: PLC0415 - start-up (see the imports)

        last = 0
        with self._write(goal_id) as tx:
            actual = self._checked_head(tx, goal_id).last
            if actual != 0:
                raise ConcurrencyConflictError(goal_id, expected_seq=0, actual_seq=actual)
            source, head = iter(events), 0
            while page := list(islice(source, self.page_size)):
                rows = to_rows(goal_id, page, last)
                self._insert(tx, goal_id, rows)
                last, head = rows[-1].seq, chain(head, (r.crc for r in rows))
            if last == 0:
                raise ValueError(f"goal {goal_id}: nothing to append")
            summary = summary_of()
            _check_companions(goal_id, last, None, summary)
            self._put_summary(tx, summary, head)
        return last

    def load(self, goal_id: str, *, after_seq: int = 0) -> Iterator[Event]:
        """The goal's events after ``after_seq``, in order, up to its last seq at this call.

        Raises:
            NotFoundError: when the goal is not in the store (raised by this call).
            CorruptEventError: while iterating, at a row that cannot be read back.
        """
        if after_seq < 0:
            raise ValueError(f"after_seq must be >= 0, not {after_seq}")
        with self._read() as tx:
            head = self._checked_head(tx, goal_id)
        if head.last == 0:
            raise NotFoundError(f"goal {goal_id!r} is not in the store")
        return self._pages(goal_id, after_seq, head.last, head.chain if after_seq == 0 else None)

    def last_seq(self, goal_id: str) -> int:
        """The seq of the goal's last event; 0 when the goal does not exist.

        Raises:
            CorruptEventError: when the stream ends elsewhere than the store recorded.
        """
        with self._read() as tx:
            return self._checked_head(tx, goal_id).last

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
        """Summaries of every goal, or of those that meet every condition given: a status
        of ``statuses``, waiting on a person, an id or title holding ``search``.

        One page of them with ``offset`` and ``limit``, in goal id order, or by
        ``attention`` (then the most recent change first, then goal id).
        """
        if offset < 0 or (limit is not None and limit < 0):
            raise ValueError(f"offset and limit must be >= 0, not {offset} and {limit}")
        query = _query(statuses, needs_person, search, order)
        if query is None or limit == 0:
            return []
        with self._read() as tx:
            return self._summaries(tx, query, offset, limit)

    def count_goals(
        self,
        *,
        statuses: Collection[str] | None = None,
        needs_person: bool = False,
        search: str | None = None,
    ) -> int:
        """How many goals ``goals`` lists with the same conditions."""
        query = _query(statuses, needs_person, search, "goal_id")
        if query is None:
            return 0
        with self._read() as tx:
            return self._count(tx, query)

    def due(self, now: datetime, *, limit: int = 100) -> list[GoalSummary]:
        """Ready, running, or waiting with ``not_before <= now``; by due time, then goal id."""
        if limit < 1:
            return []
        with self._read() as tx:
            return self._due(tx, now, limit)

    def goal_counts(self) -> dict[str, int]:
        """How many goals have each status (statuses with no goal are left out)."""
        with self._read() as tx:
            return self._goal_counts(tx)

    def soonest_wakeup(self) -> datetime | None:
        """The earliest ``not_before`` among waiting goals; None when no goal waits."""
        with self._read() as tx:
            return self._soonest_wakeup(tx)

    def add_agent(self, agent: AgentRecord, *, lease: Lease | None = None) -> None:
        """Record an agent process of the goal, fenced like an append by ``lease``.

        Raises:
            LeaseError: ``lease`` is no longer the goal's current lease (nothing written).
        """
        with self._write_local(agent.goal_id) as tx:
            if lease is not None:
                self._check_current(
                    tx,
                    lease,
                    f"the lease of {lease.holder} (token {lease.token}) is no longer current: "
                    "{}; the agent was not recorded",
                )
            self._put_agent(tx, agent)

    def remove_agent(self, agent: AgentRecord) -> None:
        """Forget an agent process (it was reaped or ended); a no-op when not recorded."""
        with self._write_local(agent.goal_id) as tx:
            self._delete_agent(tx, agent)

    def agents(self, goal_id: str) -> list[AgentRecord]:
        """The agent processes recorded for the goal, oldest first."""
        with self._read() as tx:
            return self._agents(tx, goal_id)

    def heartbeat(self, worker: WorkerBeat) -> None:
        """Insert or replace the worker's registry row."""
        with self._write(REGISTRY_KEY) as tx:
            self._put_worker(tx, worker)

    def remove_worker(self, worker_id: str) -> None:
        """Drop the worker's row; a no-op when it is not there."""
        with self._write(REGISTRY_KEY) as tx:
            self._delete_worker(tx, worker_id)

    def workers(self) -> list[WorkerBeat]:
        """Every worker's row, by worker id."""
        with self._read() as tx:
            return self._workers(tx)

    def add_service_error(self, error: ServiceError) -> None:
        """Remember an error; only the ``ERRORS_KEPT`` most recent ones are kept."""
        with self._write(REGISTRY_KEY) as tx:
            self._insert_error(tx, error, ERRORS_KEPT)

    def service_errors(self, *, limit: int = 20) -> list[ServiceError]:
        """The most recent errors, newest first."""
        if limit < 1:
            return []
        with self._read() as tx:
            return self._errors(tx, limit)

    def reschedule(self, summary: GoalSummary) -> bool:
        """Replace the goal's summary if its last seq is still ``summary.seq`` (no event is
        written: a decision taken later, or with the upstreams' health, may differ from the
        one the last append stored). False when the goal moved on meanwhile."""
        with self._write(summary.goal_id) as tx:
            head = self._checked_head(tx, summary.goal_id)
            if head.last != summary.seq:
                return False
            self._put_summary(tx, summary, self._chain_at(tx, summary.goal_id, head))
        return True

    def close(self) -> None:
        """Release the store's resources (nothing to release by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- the rules behind the contract ------------------------------------------------

    def _checked_head(self, tx: Tx, goal_id: str) -> StreamHead:
        """The stream's head; ``CorruptEventError`` when it ends elsewhere than recorded."""
        head = self._head(tx, goal_id)
        if head.recorded is None or head.recorded == head.last:
            return head
        if head.last < head.recorded:
            missing = head.recorded - head.last
            raise CorruptEventError(
                goal_id,
                head.last + 1,
                f"the stream ends at event {head.last}, but the store recorded "
                f"{head.recorded}: its last {missing} row{'s' if missing > 1 else ''} "
                "were deleted",
            )
        raise CorruptEventError(
            goal_id,
            head.recorded + 1,
            f"the stream goes on past event {head.recorded}, the last one the store "
            "recorded: rows were added behind its back",
        )

    def _chain_at(self, tx: Tx, goal_id: str, head: StreamHead) -> int:
        """The chain head at ``head.last`` (computed once for a stream from before chains)."""
        if head.chain is not None or head.last == 0:
            return head.chain or 0
        value, after = 0, 0
        while rows := self._rows(tx, goal_id, after, self.page_size):
            value = chain(value, (crc for _, _, crc in rows))
            after = rows[-1][0]
        return value

    def _derive_summary(self, tx: Tx, goal_id: str, events: Sequence[Event]) -> GoalSummary:
        """Fold the stored stream and the new events (the caller gave no summary)."""
        from governor.core.fold import evolve, fold  # noqa: PLC0415 - start-up
        from governor.core.view import GoalView  # noqa: PLC0415 - start-up
        from governor.store.rows import read_row  # noqa: PLC0415 - start-up

        view = GoalView()
        after = 0
        while rows := self._rows(tx, goal_id, after, self.page_size):
            for seq, body, crc in rows:
                evolve(view, read_row(goal_id, seq, body, crc))
            after = rows[-1][0]
        return summarize(fold(view, events), self._clock())

    def _pages(
        self, goal_id: str, after_seq: int, last: int, recorded_chain: int | None
    ) -> Iterator[Event]:
        """The rows after ``after_seq`` up to ``last``; a full load (``recorded_chain``
        given) checks the chain head before it yields the last event."""
        from governor.store.rows import read_row  # noqa: PLC0415 - start-up (see the imports)

        expected = after_seq + 1
        running = 0
        while expected <= last:
            with self._read() as tx:
                rows = self._rows(
                    tx, goal_id, expected - 1, min(self.page_size, last - expected + 1)
                )
            if not rows:
                raise _missing(goal_id, expected)
            for seq, body, crc in rows:
                if seq != expected:
                    raise _missing(goal_id, expected)
                event = read_row(goal_id, seq, body, crc)
                if recorded_chain is not None:
                    running = chain(running, (crc,))
                    if seq == last and running != recorded_chain:
                        raise CorruptEventError(
                            goal_id,
                            seq,
                            "the stream does not match the checksum chain the store "
                            "recorded: rows were replaced behind its back",
                        )
                yield event
                expected += 1


def _check_companions(
    goal_id: str, last: int, lease: Lease | None, summary: GoalSummary | None
) -> None:
    """The lease and the summary given with an append must be of its goal (and last seq)."""
    if lease is not None and lease.goal_id != goal_id:
        raise ValueError(f"goal {goal_id}: the lease given is for goal {lease.goal_id}")
    if summary is not None and (summary.goal_id, summary.seq) != (goal_id, last):
        raise ValueError(
            f"goal {goal_id}: the summary is of goal {summary.goal_id} at seq "
            f"{summary.seq}, not of this append (seq {last})"
        )


def read_only_error(where: str) -> StoreError:
    """The error of a write attempted on a store opened read-only."""
    return StoreError(f"{where}: the store is open read-only; nothing was written")


def _query(
    statuses: Collection[str] | None, needs_person: bool, search: str | None, order: GoalOrder
) -> GoalQuery | None:
    """The query of a listing's arguments; None when no goal can meet it (no status)."""
    if isinstance(statuses, str):  # one status, not its letters
        statuses = (statuses,)
    if statuses is not None and not statuses:
        return None
    if order not in ("goal_id", "attention"):
        raise ValueError(f"order must be 'goal_id' or 'attention', not {order!r}")
    wanted = None if statuses is None else tuple(sorted(set(statuses)))
    needle = ascii_lower(search.strip()) if search and search.strip() else None
    return GoalQuery(wanted, needs_person, needle, order)


def _missing(goal_id: str, seq: int) -> CorruptEventError:
    return CorruptEventError(goal_id, seq, "the row is missing (the stream has a gap)")
