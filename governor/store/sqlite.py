"""The SQLite event store: the embedded default, one database file per working directory.

Rules (SPEC §8):
    * WAL journal, ``synchronous=FULL``: a commit is on disk when ``append`` returns.
      The one exception is the agents table (decision record 0026): its rows describe
      processes of this boot, so their commits (``synchronous=NORMAL``) need only reach
      the operating system, which no crash of a process can undo.
    * Every append and lease operation is one ``BEGIN IMMEDIATE`` transaction: it takes
      the database's write lock first, so two processes never interleave their checks
      and writes; the other waits up to the busy timeout.
    * The schema is the append-only ``MIGRATIONS`` list (``governor.store.sqlite_schema``); a migration's index is its
      version. ``governor.store.migrate`` applies it (a database newer than the code is
      refused, never guessed at).
    * ``sqlite3`` errors are translated to ``StoreError`` in one place, and rows are
      decoded by ``governor.store.tables`` (``governor.store.sqlite_driver``).
    * A read-only store is opened ``mode=ro``; in a folder nobody can write (a read-only
      mount) SQLite cannot share it, and it is read as ``immutable`` (``unshareable``).
    * One connection per store object, guarded by a lock: share a store between threads
      if you must, but open one per process (and preferably one per thread).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from governor.clock import Clock
from governor.core.summary import GoalSummary
from governor.core.text import stamp
from governor.errors import StoreError
from governor.registry import AgentRecord, ServiceError, WorkerBeat
from governor.store import listing
from governor.store.base import GoalQuery, usage_row
from governor.store.engine import BaseEventStore, read_only_error
from governor.store.health import as_row
from governor.store.migrate import check_readable
from governor.store.schema_objects import Catalogue
from governor.store.sqlchecks import SqlCheckRows
from governor.store.sqlite_driver import (
    TIMES,
    Schema,
    fetch,
    maybe_us,
    sqlite_catalogue,
    translated,
    unshareable,
    us,
)
from governor.store.sqlite_schema import MIGRATIONS, migrate
from governor.store.stored import LeaseRecord, StoredEvent, StreamHead
from governor.store.tables import (
    agent_of,
    error_of,
    head_of,
    lease_of,
    parked_count,
    status_count,
    summary_of,
    upstream_of,
    wakeup_of,
    worker_of,
)

if TYPE_CHECKING:  # types only: reading summaries imports no model (start-up)
    from governor.core.pools import PoolEvent
    from governor.core.upstream import UpstreamHealth

BUSY_TIMEOUT_S: Final = 30.0
"""How long a transaction waits for another process's write lock before failing."""

# Queries are literal strings (no formatting), and migrations never use constants: a
# shipped migration must not change when a constant does.
_PUT_SUMMARY: Final = """INSERT OR REPLACE INTO goals
    (goal_id, title, seq, status, next_action, blocked_on, not_before_us, updated_at_us, due_us,
     rule, reason, replans_used, replans_charged, replans_limit,
     attempts_used, attempts_charged, attempts_limit, upstream, chain, attention)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
# One statement, so the stream's end and what the summary recorded are one snapshot.
_HEAD: Final = """SELECT (SELECT MAX(seq) FROM events WHERE goal_id = ?1),
    (SELECT seq FROM goals WHERE goal_id = ?1), (SELECT chain FROM goals WHERE goal_id = ?1)"""
_PUT_AGENT: Final = """INSERT OR REPLACE INTO agents
    (goal_id, host, boot_id, pid, start_ticks, run, holder, started_at_us, last_line)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
_AGENTS: Final = """SELECT goal_id, host, boot_id, pid, start_ticks, run, holder, started_at_us,
    last_line
    FROM agents WHERE goal_id = ? ORDER BY started_at_us, pid"""
# LIMIT -1 is SQLite's "no limit"; the WHERE and ORDER BY come from governor.store.listing.
_GOALS: Final = """SELECT
    goal_id, title, seq, status, next_action, blocked_on, not_before_us, updated_at_us,
    rule, reason, replans_used, replans_charged, replans_limit,
    attempts_used, attempts_charged, attempts_limit, upstream, attention
    FROM goals"""
# The status test repeats the partial index's WHERE word for word, so SQLite can use
# goals_due: a walk in due order over the active goals only, however many have ended.
_DUE: Final = """SELECT
    goal_id, title, seq, status, next_action, blocked_on, not_before_us, updated_at_us,
    rule, reason, replans_used, replans_charged, replans_limit,
    attempts_used, attempts_charged, attempts_limit, upstream, attention
    FROM goals INDEXED BY goals_due
    WHERE status IN ('ready', 'waiting', 'running') AND (status <> 'waiting' OR due_us <= ?)
    ORDER BY due_us, goal_id LIMIT ?"""
_SOONEST: Final = """SELECT goal_id, due_us FROM goals INDEXED BY goals_due
    WHERE status IN ('ready', 'waiting', 'running') AND status = 'waiting'
    ORDER BY due_us LIMIT 1"""
_PUT_WORKER: Final = """INSERT OR REPLACE INTO workers (worker_id, host, pid, started_at_us,
    heartbeat_at_us, goal_id, step_started_at_us) VALUES (?, ?, ?, ?, ?, ?, ?)"""
_WORKERS: Final = """SELECT worker_id, host, pid, started_at_us, heartbeat_at_us, goal_id,
    step_started_at_us FROM workers ORDER BY worker_id"""
_PUT_UPSTREAM: Final = """INSERT OR REPLACE INTO upstreams (name, harness, endpoint, model_family, healthy, updated_at_us,
    failing_since_us, last_status, retry_after_s, next_probe_at_us, probes, refusals,
    probing_until_us, prober, backoff_initial_s, backoff_factor, backoff_max_s,
    outage_started_us, recovered_at_us, recovered_by, answered)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
_UPSTREAMS: Final = """SELECT name, harness, endpoint, model_family, healthy, updated_at_us,
    failing_since_us, last_status, retry_after_s, next_probe_at_us, probes, refusals,
    probing_until_us, prober, backoff_initial_s, backoff_factor, backoff_max_s,
    outage_started_us, recovered_at_us, recovered_by, answered
    FROM upstreams ORDER BY name"""
_UPSTREAMS_NAMED: Final = """SELECT name, harness, endpoint, model_family, healthy, updated_at_us,
    failing_since_us, last_status, retry_after_s, next_probe_at_us, probes, refusals,
    probing_until_us, prober, backoff_initial_s, backoff_factor, backoff_max_s,
    outage_started_us, recovered_at_us, recovered_by, answered
    FROM upstreams WHERE name IN (SELECT value FROM json_each(?)) ORDER BY name"""
_MOVE_PARKED: Final = """UPDATE goals SET not_before_us = ?, due_us = ?, reason = ?
    WHERE upstream = ? AND status = 'waiting'"""
_PARKED: Final = """SELECT upstream, COUNT(*), MIN(goal_id) FROM goals
    WHERE upstream IS NOT NULL AND status = 'waiting' GROUP BY upstream"""


class SqliteEventStore(SqlCheckRows[sqlite3.Connection], BaseEventStore[sqlite3.Connection]):
    """The event store in one SQLite database file."""

    times = TIMES
    placeholder = "?"
    same = "IS"
    migrations = MIGRATIONS

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Clock | None = None,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
        read_only: bool = False,
    ) -> None:
        """Open (and create or migrate) the database file.

        ``read_only`` opens an existing, current database for reading only: SQLite
        itself refuses every write, nothing is created or migrated, and ``StoreError``
        says so when the file is missing or of another schema version.
        """
        super().__init__(clock=clock)
        self.path = Path(path)
        self.read_only = read_only
        self.schema_restored = []
        self._where = str(self.path)
        self._lock = threading.Lock()
        with translated(self._where):
            self._conn: sqlite3.Connection | None = self._connect(busy_timeout_s)
            try:
                self.schema_version = self._schema(self._conn, busy_timeout_s)
            except sqlite3.OperationalError as exc:  # a read-only folder: SQLite cannot share
                if not (read_only and unshareable(self.path, exc)):
                    raise
                self._conn = self._connect(busy_timeout_s, immutable=True)
                self.schema_version = self._schema(self._conn, busy_timeout_s)

    def _connect(self, busy_timeout_s: float, *, immutable: bool = False) -> sqlite3.Connection:
        """The connection; read-only ones open the file with ``mode=ro`` (and ``immutable``
        when nobody can write it: see ``unshareable``)."""
        target: str | Path = self.path
        if self.read_only:
            target = f"{self.path.resolve().as_uri()}?mode=ro{'&immutable=1' if immutable else ''}"
        # isolation_level=None: no implicit transactions; every write says BEGIN IMMEDIATE.
        return sqlite3.connect(
            target,
            timeout=busy_timeout_s,
            isolation_level=None,
            check_same_thread=False,
            uri=self.read_only,
        )

    def _schema(self, conn: sqlite3.Connection, busy_timeout_s: float) -> int:
        """Configure the connection, then check the schema (read-only) or migrate it; the
        connection is closed when that fails."""
        try:
            self._configure(conn, busy_timeout_s, self.read_only)
            if self.read_only:
                return check_readable(Schema(conn), MIGRATIONS, where=self._where)
            return migrate(conn, where=self._where, now=self._clock, restored=self.schema_restored)
        except BaseException:
            conn.close()
            raise

    @staticmethod
    def _configure(conn: sqlite3.Connection, busy_timeout_s: float, read_only: bool) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        if read_only:  # the writers set the journal mode; a reader changes nothing
            return
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL, not WAL's usual NORMAL: NORMAL may lose the last commits on power loss,
        # and a lost attempt.started or lease write would let a goal run twice. The
        # store is the only durable truth, so a commit must be on disk before we act.
        conn.execute("PRAGMA synchronous = FULL")

    def close(self) -> None:
        """Close the connection; later calls raise ``StoreError``."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"{self._where}: the store is closed")
        return self._conn

    @contextmanager
    def _write(self, goal_id: str) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise read_only_error(self._where)
        with self._lock, translated(self._where):
            yield from self._transaction(self._connection())

    @contextmanager
    def _write_local(self, goal_id: str) -> Iterator[sqlite3.Connection]:
        # WAL at NORMAL: the commit is written to the WAL but not fsynced; only the loss
        # of the machine (which ends the agents the rows describe) can undo it, and the
        # next FULL commit syncs it with its own frames (decision record 0026).
        if self.read_only:
            raise read_only_error(self._where)
        with self._lock, translated(self._where):
            conn = self._connection()
            conn.execute("PRAGMA synchronous = NORMAL")
            try:
                yield from self._transaction(conn)
            finally:
                conn.execute("PRAGMA synchronous = FULL")

    @staticmethod
    def _transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:  # some errors (a full disk) already rolled back
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock, translated(self._where):
            yield self._connection()

    def _query(self, tx: sqlite3.Connection, sql: str, params: Sequence[object] = ()) -> list[Any]:
        return fetch(tx, sql, params)

    def _recorded_versions(self, tx: sqlite3.Connection) -> list[int]:
        if "schema_version" not in self._catalogue(tx).tables:
            return []
        return [int(v) for (v,) in fetch(tx, "SELECT version FROM schema_version", ())]

    def _catalogue(self, tx: sqlite3.Connection) -> Catalogue:
        return sqlite_catalogue(tx)

    def _record_version(self, tx: sqlite3.Connection, version: int, at: datetime) -> None:
        tx.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        tx.execute("INSERT INTO schema_version VALUES (?, ?)", (version, stamp(at)))

    def _execute(self, tx: sqlite3.Connection, statement: str) -> None:
        tx.execute(statement)

    def _head(self, tx: sqlite3.Connection, goal_id: str) -> StreamHead:
        [(last, recorded, chain)] = fetch(tx, _HEAD, (goal_id,))
        return head_of(goal_id, last, recorded, chain)

    def _rows(
        self, tx: sqlite3.Connection, goal_id: str, after_seq: int, limit: int
    ) -> list[tuple[int, bytes | str, int]]:
        return fetch(
            tx,
            "SELECT seq, body, crc32 FROM events WHERE goal_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (goal_id, after_seq, limit),
        )

    def _insert(self, tx: sqlite3.Connection, goal_id: str, rows: Sequence[StoredEvent]) -> None:
        tx.executemany(
            "INSERT INTO events (goal_id, seq, type, at_us, body, crc32) VALUES (?, ?, ?, ?, ?, ?)",
            [(goal_id, r.seq, r.type, us(r.at), r.body, r.crc) for r in rows],
        )

    def _put_summary(self, tx: sqlite3.Connection, summary: GoalSummary, chain: int) -> None:
        s = summary
        tx.execute(
            _PUT_SUMMARY,
            (s.goal_id, s.title, s.seq, s.status, s.next_action, s.blocked_on,
             maybe_us(s.not_before), us(s.updated_at), us(s.due_at), s.rule, s.reason,
             *usage_row(s.replans), *usage_row(s.attempts), s.upstream, chain, s.attention),
        )  # fmt: skip

    def _summaries(
        self, tx: sqlite3.Connection, query: GoalQuery, offset: int, limit: int | None
    ) -> list[GoalSummary]:
        sql, values = listing.select(_GOALS, query, "sqlite")
        rows = fetch(tx, sql, (*values, -1 if limit is None else limit, offset))
        return [summary_of(row, TIMES) for row in rows]

    def _count(self, tx: sqlite3.Connection, query: GoalQuery) -> int:
        (found,) = tx.execute(*listing.count(query, "sqlite")).fetchone()
        return int(found)

    def _due(self, tx: sqlite3.Connection, now: datetime, limit: int) -> list[GoalSummary]:
        return [summary_of(row, TIMES) for row in fetch(tx, _DUE, (us(now), limit))]

    def _goal_counts(self, tx: sqlite3.Connection) -> dict[str, int]:
        query = "SELECT status, COUNT(*), MIN(goal_id) FROM goals GROUP BY status"
        return dict(status_count(row) for row in fetch(tx, query))

    def _soonest_wakeup(self, tx: sqlite3.Connection) -> datetime | None:
        rows = fetch(tx, _SOONEST)
        return wakeup_of(rows[0], TIMES) if rows else None

    def _put_worker(self, tx: sqlite3.Connection, worker: WorkerBeat) -> None:
        w = worker
        tx.execute(
            _PUT_WORKER,
            (w.worker_id, w.host, w.pid, us(w.started_at), us(w.heartbeat_at), w.goal_id,
             maybe_us(w.step_started_at)),
        )  # fmt: skip

    def _delete_worker(self, tx: sqlite3.Connection, worker_id: str) -> None:
        tx.execute("DELETE FROM workers WHERE worker_id = ?", (worker_id,))

    def _workers(self, tx: sqlite3.Connection) -> list[WorkerBeat]:
        return [worker_of(row, TIMES) for row in fetch(tx, _WORKERS)]

    def _insert_error(self, tx: sqlite3.Connection, error: ServiceError, keep: int) -> None:
        e = error
        cursor = tx.execute(
            "INSERT INTO service_errors (at_us, worker_id, goal_id, error) VALUES (?, ?, ?, ?)",
            (us(e.at), e.worker_id, e.goal_id, e.error),
        )
        tx.execute("DELETE FROM service_errors WHERE id <= ?", ((cursor.lastrowid or 0) - keep,))

    def _errors(self, tx: sqlite3.Connection, limit: int) -> list[ServiceError]:
        query = (
            "SELECT id, at_us, worker_id, goal_id, error FROM service_errors "
            "ORDER BY id DESC LIMIT ?"
        )
        return [error_of(row, TIMES) for row in fetch(tx, query, (limit,))]

    def _put_agent(self, tx: sqlite3.Connection, agent: AgentRecord) -> None:
        a = agent
        tx.execute(
            _PUT_AGENT,
            (a.goal_id, a.host, a.boot_id, a.pid, a.start_ticks, a.run, a.holder,
             us(a.started_at), a.last_line),
        )  # fmt: skip

    def _delete_agent(self, tx: sqlite3.Connection, agent: AgentRecord) -> None:
        a = agent
        tx.execute(
            "DELETE FROM agents WHERE goal_id = ? AND host = ? AND boot_id = ? AND pid = ? "
            "AND start_ticks = ?",
            (a.goal_id, a.host, a.boot_id, a.pid, a.start_ticks),
        )

    def _agents(self, tx: sqlite3.Connection, goal_id: str) -> list[AgentRecord]:
        return [agent_of(row, TIMES) for row in fetch(tx, _AGENTS, (goal_id,))]

    def _upstream_records(
        self, tx: sqlite3.Connection, names: Sequence[str] | None
    ) -> list[UpstreamHealth]:
        if names is None:
            rows = fetch(tx, _UPSTREAMS)
        else:
            rows = fetch(tx, _UPSTREAMS_NAMED, (json.dumps(list(names)),))
        return [upstream_of(row, TIMES) for row in rows]

    def _put_upstream(self, tx: sqlite3.Connection, record: UpstreamHealth) -> None:
        tx.execute(_PUT_UPSTREAM, as_row(record, maybe_us))

    def _move_parked(
        self, tx: sqlite3.Connection, upstream: str, due: datetime, reason: str
    ) -> None:
        tx.execute(_MOVE_PARKED, (us(due), us(due), reason, upstream))

    def _parked_counts(self, tx: sqlite3.Connection) -> dict[str, int]:
        return dict(parked_count(row) for row in fetch(tx, _PARKED))

    def _lock_pool(self, tx: sqlite3.Connection, name: str) -> None:
        pass  # BEGIN IMMEDIATE already excludes every other writer

    def _pool_bodies(self, tx: sqlite3.Connection, name: str) -> list[str]:
        query = "SELECT body FROM pool_events WHERE pool = ? ORDER BY seq"
        return [row[0] for row in fetch(tx, query, (name,))]

    def _pool_snapshots(
        self, tx: sqlite3.Connection, names: Sequence[str] | None
    ) -> dict[str, str]:
        if names is None:
            rows = fetch(tx, "SELECT name, state FROM pools")
        else:
            query = "SELECT name, state FROM pools WHERE name IN (SELECT value FROM json_each(?))"
            rows = fetch(tx, query, (json.dumps(list(names)),))
        return {name: state for name, state in rows}

    def _put_pool_event(self, tx: sqlite3.Connection, event: PoolEvent, body: str) -> None:
        tx.execute(
            "INSERT INTO pool_events (pool, seq, type, at_us, body) VALUES (?, ?, ?, ?, ?)",
            (event.pool, event.seq, event.type, us(event.at), body),
        )

    def _put_pool_state(self, tx: sqlite3.Connection, name: str, seq: int, state: str) -> None:
        tx.execute(
            "INSERT OR REPLACE INTO pools (name, seq, state) VALUES (?, ?, ?)", (name, seq, state)
        )

    def _lease_record(self, tx: sqlite3.Connection, goal_id: str) -> LeaseRecord | None:
        query = "SELECT token, holder, expires_at_us FROM leases WHERE goal_id = ?"
        rows = fetch(tx, query, (goal_id,))
        return lease_of(goal_id, rows[0], TIMES) if rows else None

    def _put_lease(self, tx: sqlite3.Connection, goal_id: str, record: LeaseRecord) -> None:
        lease = record.lease
        tx.execute(
            "INSERT OR REPLACE INTO leases (goal_id, token, holder, expires_at_us) VALUES (?, ?, ?, ?)",
            (
                goal_id,
                record.token,
                lease.holder if lease else None,
                us(lease.expires_at) if lease else None,
            ),
        )
