"""The in-memory event store: the contract's semantics without a disk, for tests and demos.

Rules:
    * Same behaviour as every backend (the contract suite in ``tests/store`` proves it):
      rows hold the codec's bytes, so reads go through the same decoding as SQLite's.
    * Thread-safe: one re-entrant lock serialises every transaction and every read.
    * Nothing survives the process; ``memory:`` is never the place for real goals.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, replace
from datetime import datetime
from typing import TYPE_CHECKING

from governor.clock import Clock
from governor.core.summary import GoalSummary
from governor.errors import StoreError
from governor.registry import AgentRecord, ServiceError, WorkerBeat
from governor.store.base import GoalQuery, usage_row
from governor.store.columns import Table, Times, aware_time
from governor.store.engine import BaseEventStore
from governor.store.health import as_row
from governor.store.schema_objects import Catalogue
from governor.store.stored import LeaseRecord, StoredEvent, StreamHead

if TYPE_CHECKING:  # types only: reading summaries imports no model (start-up)
    from governor.core.pools import PoolEvent
    from governor.core.upstream import UpstreamHealth


class MemoryEventStore(BaseEventStore["MemoryEventStore"]):
    """Goal streams, summaries and leases in dictionaries guarded by one lock."""

    times = Times("", aware_time)
    migrations: tuple[tuple[str, ...], ...] = ()
    """No schema: nothing for a check to find in it."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        super().__init__(clock=clock)
        self.schema_restored = []
        self._lock = threading.RLock()
        self.streams: dict[str, list[StoredEvent]] = {}
        """Goal id -> stored rows in seq order (tests may damage them to simulate corruption)."""
        self._summaries_by_goal: dict[str, GoalSummary] = {}
        self._chains: dict[str, int] = {}
        self._agents_by_goal: dict[str, dict[tuple[str, str, int, int], AgentRecord]] = {}
        self._leases: dict[str, LeaseRecord] = {}
        self._workers_by_id: dict[str, WorkerBeat] = {}
        self._errors_kept: list[ServiceError] = []
        self._upstreams: dict[str, UpstreamHealth] = {}
        self._pool_rows: dict[str, list[str]] = {}
        self._pool_states: dict[str, str] = {}

    @contextmanager
    def _write(self, goal_id: str) -> Iterator[MemoryEventStore]:
        # Every check of an append runs before its first write, and the writes are plain
        # dictionary updates that cannot fail; a paged ``append_new`` may fail after
        # writing pages, so a failed transaction drops the rows it added to its goal.
        with self._lock:
            kept = len(self.streams.get(goal_id, ()))
            try:
                yield self
            except BaseException:
                if goal_id in self.streams:
                    del self.streams[goal_id][kept:]
                    if not self.streams[goal_id]:
                        del self.streams[goal_id]
                raise

    @contextmanager
    def _read(self) -> Iterator[MemoryEventStore]:
        with self._lock:
            yield self

    def _head(self, tx: MemoryEventStore, goal_id: str) -> StreamHead:
        stream = self.streams.get(goal_id)
        summary = self._summaries_by_goal.get(goal_id)
        return StreamHead(
            stream[-1].seq if stream else 0,
            summary.seq if summary else None,
            self._chains.get(goal_id),
        )

    def _rows(
        self, tx: MemoryEventStore, goal_id: str, after_seq: int, limit: int
    ) -> list[tuple[int, bytes | str, int]]:
        stream = self.streams.get(goal_id, [])
        # Rows sit at index seq - 1 unless a test removed one; the engine spots the gap.
        start = min(after_seq, len(stream))
        while start > 0 and stream[start - 1].seq > after_seq:
            start -= 1
        return [(row.seq, row.body, row.crc) for row in stream[start : start + limit]]

    def _insert(self, tx: MemoryEventStore, goal_id: str, rows: Sequence[StoredEvent]) -> None:
        self.streams.setdefault(goal_id, []).extend(rows)

    def _put_summary(self, tx: MemoryEventStore, summary: GoalSummary, chain: int) -> None:
        self._summaries_by_goal[summary.goal_id] = summary
        self._chains[summary.goal_id] = chain

    def _summaries(
        self, tx: MemoryEventStore, query: GoalQuery, offset: int, limit: int | None
    ) -> list[GoalSummary]:
        found = sorted(filter(query.matches, self._summaries_by_goal.values()), key=query.sort_key)
        return found[offset : None if limit is None else offset + limit]

    def _count(self, tx: MemoryEventStore, query: GoalQuery) -> int:
        return sum(map(query.matches, self._summaries_by_goal.values()))

    def _due(self, tx: MemoryEventStore, now: datetime, limit: int) -> list[GoalSummary]:
        due = [s for s in self._summaries_by_goal.values() if s.is_due(now)]
        due.sort(key=lambda s: (s.due_at, s.goal_id))
        return due[:limit]

    def _goal_counts(self, tx: MemoryEventStore) -> dict[str, int]:
        return dict(Counter(s.status for s in self._summaries_by_goal.values()))

    def _soonest_wakeup(self, tx: MemoryEventStore) -> datetime | None:
        waiting = [s.due_at for s in self._summaries_by_goal.values() if s.status == "waiting"]
        return min(waiting, default=None)

    def _put_worker(self, tx: MemoryEventStore, worker: WorkerBeat) -> None:
        self._workers_by_id[worker.worker_id] = worker

    def _delete_worker(self, tx: MemoryEventStore, worker_id: str) -> None:
        self._workers_by_id.pop(worker_id, None)

    def _workers(self, tx: MemoryEventStore) -> list[WorkerBeat]:
        return [w for _, w in sorted(self._workers_by_id.items())]

    def _insert_error(self, tx: MemoryEventStore, error: ServiceError, keep: int) -> None:
        self._errors_kept = [*self._errors_kept, error][-keep:]

    def _errors(self, tx: MemoryEventStore, limit: int) -> list[ServiceError]:
        return self._errors_kept[::-1][:limit]

    def _put_agent(self, tx: MemoryEventStore, agent: AgentRecord) -> None:
        self._agents_by_goal.setdefault(agent.goal_id, {})[_agent_key(agent)] = agent

    def _delete_agent(self, tx: MemoryEventStore, agent: AgentRecord) -> None:
        self._agents_by_goal.get(agent.goal_id, {}).pop(_agent_key(agent), None)

    def _agents(self, tx: MemoryEventStore, goal_id: str) -> list[AgentRecord]:
        found = self._agents_by_goal.get(goal_id, {}).values()
        return sorted(found, key=lambda a: (a.started_at, a.pid))

    def _upstream_records(
        self, tx: MemoryEventStore, names: Sequence[str] | None
    ) -> list[UpstreamHealth]:
        wanted = sorted(self._upstreams) if names is None else sorted(names)
        return [self._upstreams[n] for n in wanted if n in self._upstreams]

    def _put_upstream(self, tx: MemoryEventStore, record: UpstreamHealth) -> None:
        self._upstreams[record.upstream] = replace(record, parked=None)

    def _lock_pool(self, tx: MemoryEventStore, name: str) -> None:
        pass  # the store's lock is held

    def _pool_bodies(self, tx: MemoryEventStore, name: str) -> list[str]:
        return list(self._pool_rows.get(name, ()))

    def _pool_snapshots(self, tx: MemoryEventStore, names: Sequence[str] | None) -> dict[str, str]:
        wanted = self._pool_states if names is None else names
        return {n: self._pool_states[n] for n in wanted if n in self._pool_states}

    def _put_pool_event(self, tx: MemoryEventStore, event: PoolEvent, body: str) -> None:
        rows = self._pool_rows.setdefault(event.pool, [])
        if len(rows) + 1 != event.seq:
            raise StoreError(f"pool {event.pool}: seq {event.seq} is taken")
        rows.append(body)

    def _put_pool_state(self, tx: MemoryEventStore, name: str, seq: int, state: str) -> None:
        self._pool_states[name] = state

    def _move_parked(self, tx: MemoryEventStore, upstream: str, due: datetime, reason: str) -> None:
        for goal_id, s in list(self._summaries_by_goal.items()):
            if s.upstream == upstream and s.status == "waiting":
                self._summaries_by_goal[goal_id] = replace(s, not_before=due, reason=reason)

    def _parked_counts(self, tx: MemoryEventStore) -> dict[str, int]:
        return dict(
            Counter(
                s.upstream
                for s in self._summaries_by_goal.values()
                if s.upstream is not None and s.status == "waiting"
            )
        )

    def _lease_record(self, tx: MemoryEventStore, goal_id: str) -> LeaseRecord | None:
        return self._leases.get(goal_id)

    def _put_lease(self, tx: MemoryEventStore, goal_id: str, record: LeaseRecord) -> None:
        self._leases[goal_id] = record

    # --- what ``governor store check`` reads: the values as rows ------------------------

    def _summary_count(self, tx: MemoryEventStore) -> int:
        return len(self._summaries_by_goal)

    def _stream_ids(self, tx: MemoryEventStore, after: object, limit: int) -> list[object]:
        assert isinstance(after, str)
        found: list[object] = [g for g in sorted(self.streams) if g > after and self.streams[g]]
        return found[:limit]

    def _stream_end(self, tx: MemoryEventStore, goal_id: str) -> object:
        stream = self.streams.get(goal_id)
        return stream[-1].seq if stream else 0

    def _summary_raw(self, tx: MemoryEventStore, goal_id: str) -> Sequence[object] | None:
        s = self._summaries_by_goal.get(goal_id)
        if s is None:
            return None
        return (
            s.goal_id, s.title, s.seq, s.status, s.next_action, s.blocked_on, s.not_before,
            s.updated_at, s.rule, s.reason, *usage_row(s.replans), *usage_row(s.attempts),
            s.upstream, s.due_at, self._chains.get(goal_id),
        )  # fmt: skip

    def _lease_raw(self, tx: MemoryEventStore, goal_id: str) -> Sequence[object] | None:
        record = self._leases.get(goal_id)
        if record is None:
            return None
        lease = record.lease
        return (
            (record.token, lease.holder, lease.expires_at) if lease else (record.token, None, None)
        )

    def _recorded_versions(self, tx: MemoryEventStore) -> list[int]:
        return []

    def _catalogue(self, tx: MemoryEventStore) -> Catalogue:
        return Catalogue(frozenset(), frozenset(), frozenset())

    def _record_version(self, tx: MemoryEventStore, version: int, at: datetime) -> None:
        raise AssertionError("a memory store has no schema")

    def _execute(self, tx: MemoryEventStore, statement: str) -> None:
        raise AssertionError("a memory store has no schema")

    def _unsummarised_count(self, tx: MemoryEventStore) -> int:
        return sum(
            1 for g, rows in self.streams.items() if rows and g not in self._summaries_by_goal
        )

    def _orphan_summaries(self, tx: MemoryEventStore) -> list[object]:
        orphans: list[object] = [
            g for g in sorted(self._summaries_by_goal) if not self.streams.get(g)
        ]
        return orphans

    def _table_rows(self, tx: MemoryEventStore, table: Table) -> list[Sequence[object]]:
        if table.name == "upstreams":
            return [as_row(r, lambda t: t) for _, r in sorted(self._upstreams.items())]
        if table.name == "service_errors":
            return [(i, *astuple(e)) for i, e in enumerate(self._errors_kept, start=1)]
        if table.name == "workers":
            return [astuple(w) for _, w in sorted(self._workers_by_id.items())]
        return [astuple(a) for agents in self._agents_by_goal.values() for a in agents.values()]

    def _delete_row(self, tx: MemoryEventStore, table: Table, key: Sequence[object]) -> None:
        """Nothing here is ever damaged: a memory store holds values, not stored columns."""


def _agent_key(agent: AgentRecord) -> tuple[str, str, int, int]:
    return (agent.host, agent.boot_id, agent.pid, agent.start_ticks)
