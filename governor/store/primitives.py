"""What a backend provides the engine (``governor.store.engine``): a write transaction
that serialises the writers of a goal, a read context, and storage primitives that
neither check nor decide — every rule is the engine's."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Generic, TypeVar

from governor.core.summary import GoalSummary
from governor.registry import AgentRecord, ServiceError, WorkerBeat
from governor.store.base import GoalQuery
from governor.store.stored import LeaseRecord, StoredEvent, StreamHead

Tx = TypeVar("Tx")
"""A backend's handle on an open transaction (a connection, a cursor, the store itself)."""


class StoragePrimitives(ABC, Generic[Tx]):
    """The primitives every backend implements (the module docstring)."""

    @abstractmethod
    def _write(self, goal_id: str) -> AbstractContextManager[Tx]:
        """A write transaction that serialises every writer of ``goal_id``.

        Commits when the block ends normally; rolls back, writing nothing, when it raises.
        """

    def _write_local(self, goal_id: str) -> AbstractContextManager[Tx]:
        """A write transaction whose commit need only outlive this process, not the
        machine: the rows of the agent processes of this boot (decision record 0026).
        ``_write`` unless the backend has a cheaper commit that a crash of the process
        cannot lose."""
        return self._write(goal_id)

    @abstractmethod
    def _read(self) -> AbstractContextManager[Tx]:
        """A context for reads (each primitive call sees committed data)."""

    @abstractmethod
    def _head(self, tx: Tx, goal_id: str) -> StreamHead:
        """The highest stored seq of the goal (0 when none), with the seq and chain head
        its summary row recorded, read together (one statement: one snapshot)."""

    @abstractmethod
    def _rows(
        self, tx: Tx, goal_id: str, after_seq: int, limit: int
    ) -> list[tuple[int, bytes | str, int]]:
        """Up to ``limit`` stored ``(seq, body, crc)`` rows with seq above ``after_seq``, in order."""

    @abstractmethod
    def _insert(self, tx: Tx, goal_id: str, rows: Sequence[StoredEvent]) -> None:
        """Store the rows."""

    @abstractmethod
    def _put_summary(self, tx: Tx, summary: GoalSummary, chain: int) -> None:
        """Insert or replace the goal's summary, with the chain head at its seq."""

    @abstractmethod
    def _summaries(
        self, tx: Tx, query: GoalQuery, offset: int, limit: int | None
    ) -> list[GoalSummary]:
        """The summaries ``query`` names, in its order, skipping ``offset`` and returning
        at most ``limit`` (all when None)."""

    @abstractmethod
    def _count(self, tx: Tx, query: GoalQuery) -> int:
        """How many summaries ``query`` names."""

    @abstractmethod
    def _due(self, tx: Tx, now: datetime, limit: int) -> list[GoalSummary]:
        """Summaries for which ``GoalSummary.is_due(now)``, by ``due_at`` then goal id."""

    @abstractmethod
    def _goal_counts(self, tx: Tx) -> dict[str, int]:
        """Goal status -> how many goals have it (only statuses that occur)."""

    @abstractmethod
    def _soonest_wakeup(self, tx: Tx) -> datetime | None:
        """The smallest ``due_at`` among goals whose status is ``waiting``."""

    @abstractmethod
    def _put_worker(self, tx: Tx, worker: WorkerBeat) -> None:
        """Insert or replace the worker's row."""

    @abstractmethod
    def _delete_worker(self, tx: Tx, worker_id: str) -> None:
        """Delete the worker's row if there is one."""

    @abstractmethod
    def _workers(self, tx: Tx) -> list[WorkerBeat]:
        """Every worker row, ordered by worker id."""

    @abstractmethod
    def _insert_error(self, tx: Tx, error: ServiceError, keep: int) -> None:
        """Store the error, then delete all but the ``keep`` most recently inserted."""

    @abstractmethod
    def _errors(self, tx: Tx, limit: int) -> list[ServiceError]:
        """Up to ``limit`` errors, the most recently inserted first."""

    @abstractmethod
    def _put_agent(self, tx: Tx, agent: AgentRecord) -> None:
        """Insert or replace the agent's row."""

    @abstractmethod
    def _delete_agent(self, tx: Tx, agent: AgentRecord) -> None:
        """Delete the agent's row (same goal, host, boot id, pid and start) if there is one."""

    @abstractmethod
    def _agents(self, tx: Tx, goal_id: str) -> list[AgentRecord]:
        """The goal's agent rows, by ``started_at`` then pid."""

    @abstractmethod
    def _lease_record(self, tx: Tx, goal_id: str) -> LeaseRecord | None:
        """The goal's lease record, None when no lease was ever granted."""

    @abstractmethod
    def _put_lease(self, tx: Tx, goal_id: str, record: LeaseRecord) -> None:
        """Insert or replace the goal's lease record."""
