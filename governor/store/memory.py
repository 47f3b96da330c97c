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
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from governor.clock import Clock
from governor.core.summary import GoalSummary
from governor.registry import AgentRecord, ServiceError, WorkerBeat
from governor.store.base import GoalQuery
from governor.store.engine import BaseEventStore, LeaseRecord, StreamHead
from governor.store.stored import StoredEvent

if TYPE_CHECKING:  # types only: reading summaries imports no model (start-up)
    from governor.core.upstream import UpstreamHealth


class MemoryEventStore(BaseEventStore["MemoryEventStore"]):
    """Goal streams, summaries and leases in dictionaries guarded by one lock."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        super().__init__(clock=clock)
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


def _agent_key(agent: AgentRecord) -> tuple[str, str, int, int]:
    return (agent.host, agent.boot_id, agent.pid, agent.start_ticks)
