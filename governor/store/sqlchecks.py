"""The storage primitives of ``governor store check`` in SQL, shared by SQLite and PostgreSQL.

Rules:
    * The check reads rows as they are stored, so it can report a damaged one instead of
      failing on it: every primitive returns raw values for ``governor.store.tables`` to
      decode.
    * Its queries are built from the tables' own names (``governor.store.tables``), never
      from a value: values are always parameters.
    * The goal ids of the ``events`` table are walked by a loose index scan (one index seek
      per goal, a recursive query), so finding the streams reads no event body.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

from governor.store.columns import Table, Times
from governor.store.tables import SUMMARIES, SUMMARY_EXTRA

Tx = TypeVar("Tx")

_STREAM_IDS = """WITH RECURSIVE ids(id) AS (
    SELECT (SELECT goal_id FROM events WHERE goal_id > ? ORDER BY goal_id LIMIT 1)
    UNION ALL
    SELECT (SELECT goal_id FROM events WHERE goal_id > ids.id ORDER BY goal_id LIMIT 1)
    FROM ids WHERE ids.id IS NOT NULL
) SELECT id FROM ids WHERE id IS NOT NULL LIMIT ?"""
_UNSUMMARISED = """WITH RECURSIVE ids(id) AS (
    SELECT (SELECT goal_id FROM events ORDER BY goal_id LIMIT 1)
    UNION ALL
    SELECT (SELECT goal_id FROM events WHERE goal_id > ids.id ORDER BY goal_id LIMIT 1)
    FROM ids WHERE ids.id IS NOT NULL
) SELECT COUNT(*) FROM ids WHERE id IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM goals WHERE goals.goal_id = ids.id)"""
_ORPHANS = """SELECT goal_id FROM goals
    WHERE NOT EXISTS (SELECT 1 FROM events WHERE events.goal_id = goals.goal_id)"""


class SqlCheckRows(ABC, Generic[Tx]):
    """``StoreChecks``' primitives over SQL (a backend gives ``_query`` and its dialect)."""

    times: Times
    placeholder: ClassVar[str]
    """The driver's parameter mark (``?``, ``%s``)."""
    same: ClassVar[str]
    """The SQL that compares two values NULL-safely (``IS``, ``IS NOT DISTINCT FROM``)."""

    @abstractmethod
    def _query(self, tx: Tx, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """The rows of a query (written with ``?`` marks)."""

    def _sql(self, tx: Tx, sql: str, params: Sequence[object] = ()) -> list[Any]:
        return self._query(tx, sql.replace("?", self.placeholder), params)

    def _summary_count(self, tx: Tx) -> int:
        return int(self._sql(tx, "SELECT COUNT(*) FROM goals")[0][0])

    def _stream_ids(self, tx: Tx, after: object, limit: int) -> list[object]:
        return [row[0] for row in self._sql(tx, _STREAM_IDS, (after, limit))]

    def _stream_end(self, tx: Tx, goal_id: str) -> object:
        found = self._sql(tx, "SELECT MAX(seq) FROM events WHERE goal_id = ?", (goal_id,))
        return found[0][0] or 0

    def _summary_raw(self, tx: Tx, goal_id: str) -> Sequence[object] | None:
        names = [*SUMMARIES.names(self.times), *SUMMARY_EXTRA.names(self.times)[1:]]
        query = f"SELECT {', '.join(names)} FROM goals WHERE goal_id = ?"  # noqa: S608 - the tables' own names; values are parameters
        rows = self._sql(tx, query, (goal_id,))
        return rows[0] if rows else None

    def _lease_raw(self, tx: Tx, goal_id: str) -> Sequence[object] | None:
        expires = f"expires_at{self.times.suffix}"
        query = f"SELECT token, holder, {expires} FROM leases WHERE goal_id = ?"  # noqa: S608 - the tables' own names; values are parameters
        rows = self._sql(tx, query, (goal_id,))
        return rows[0] if rows else None

    def _orphan_summaries(self, tx: Tx) -> list[object]:
        return [row[0] for row in self._sql(tx, _ORPHANS)]

    def _unsummarised_count(self, tx: Tx) -> int:
        return int(self._sql(tx, _UNSUMMARISED)[0][0])

    def _table_rows(self, tx: Tx, table: Table) -> list[Sequence[object]]:
        columns = ", ".join(table.names(self.times))
        return self._sql(tx, f"SELECT {columns} FROM {table.name}")  # noqa: S608 - the tables' own names; values are parameters

    def _delete_row(self, tx: Tx, table: Table, key: Sequence[object]) -> None:
        names = table.names(self.times)
        where = " AND ".join(f"{names[i]} {self.same} ?" for i in table.key)
        self._sql(tx, f"DELETE FROM {table.name} WHERE {where}", key)  # noqa: S608 - the tables' own names; values are parameters
