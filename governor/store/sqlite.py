"""The SQLite event store: the embedded default, one database file per working directory.

Rules (SPEC §8):
    * WAL journal, ``synchronous=FULL``: a commit is on disk when ``append`` returns.
    * Every append and lease operation is one ``BEGIN IMMEDIATE`` transaction: it takes
      the database's write lock first, so two processes never interleave their checks
      and writes; the other waits up to the busy timeout.
    * The schema is the append-only ``MIGRATIONS`` list; a migration's index is its
      version. ``governor.store.migrate`` applies it (a database newer than the code is
      refused, never guessed at).
    * ``sqlite3`` errors are translated to ``StoreError`` in one place (``_translated``).
    * One connection per store object, guarded by a lock: share a store between threads
      if you must, but open one per process (and preferably one per thread).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from governor.clock import Clock
from governor.core.decision import stamp
from governor.core.summary import GoalSummary
from governor.errors import StoreError
from governor.registry import AgentRecord, ServiceError, WorkerBeat
from governor.store import listing
from governor.store.base import GoalQuery, Lease, usage_of, usage_row
from governor.store.engine import BaseEventStore, LeaseRecord, StreamHead, read_only_error
from governor.store.health import as_row, from_row
from governor.store.migrate import check_readable
from governor.store.migrate import migrate as run_migrations
from governor.store.stored import StoredEvent

if TYPE_CHECKING:  # types only: reading summaries imports no model (start-up)
    from governor.core.upstream import UpstreamHealth

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    (
        """CREATE TABLE events (
            goal_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            at_us INTEGER NOT NULL,
            body BLOB NOT NULL,
            crc32 INTEGER NOT NULL,
            PRIMARY KEY (goal_id, seq)
        ) WITHOUT ROWID""",
        """CREATE TABLE goals (
            goal_id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            seq INTEGER NOT NULL,
            status TEXT NOT NULL,
            next_action TEXT NOT NULL,
            blocked_on TEXT,
            not_before_us INTEGER,
            updated_at_us INTEGER NOT NULL,
            due_us INTEGER NOT NULL
        )""",
        """CREATE INDEX goals_due ON goals (due_us, goal_id)
            WHERE status IN ('ready', 'waiting', 'running')""",
        "CREATE INDEX goals_status ON goals (status, goal_id)",
        """CREATE TABLE leases (
            goal_id TEXT PRIMARY KEY,
            token INTEGER NOT NULL,
            holder TEXT,
            expires_at_us INTEGER
        )""",
    ),
    (
        """CREATE TABLE workers (
            worker_id TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started_at_us INTEGER NOT NULL,
            heartbeat_at_us INTEGER NOT NULL,
            goal_id TEXT,
            step_started_at_us INTEGER
        )""",
        """CREATE TABLE service_errors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at_us INTEGER NOT NULL,
            worker_id TEXT NOT NULL,
            goal_id TEXT,
            error TEXT NOT NULL
        )""",
    ),
    (
        "ALTER TABLE goals ADD COLUMN rule TEXT",
        "ALTER TABLE goals ADD COLUMN reason TEXT",
        "ALTER TABLE goals ADD COLUMN replans_used INTEGER",
        "ALTER TABLE goals ADD COLUMN replans_charged INTEGER",
        "ALTER TABLE goals ADD COLUMN replans_limit INTEGER",
        "ALTER TABLE goals ADD COLUMN attempts_used INTEGER",
        "ALTER TABLE goals ADD COLUMN attempts_charged INTEGER",
        "ALTER TABLE goals ADD COLUMN attempts_limit INTEGER",
    ),
    (
        """CREATE TABLE upstreams (
            name TEXT PRIMARY KEY,
            harness TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            model_family TEXT NOT NULL,
            healthy INTEGER NOT NULL,
            updated_at_us INTEGER NOT NULL,
            failing_since_us INTEGER,
            last_status INTEGER,
            retry_after_s REAL,
            next_probe_at_us INTEGER,
            probes INTEGER NOT NULL,
            refusals INTEGER NOT NULL,
            probing_until_us INTEGER,
            prober TEXT,
            backoff_initial_s REAL NOT NULL,
            backoff_factor REAL NOT NULL,
            backoff_max_s REAL NOT NULL,
            outage_started_us INTEGER,
            recovered_at_us INTEGER,
            recovered_by TEXT
        )""",
        "ALTER TABLE goals ADD COLUMN upstream TEXT",
        """CREATE INDEX goals_upstream ON goals (upstream, goal_id)
            WHERE upstream IS NOT NULL""",
    ),
    (
        "ALTER TABLE goals ADD COLUMN chain INTEGER",
        """CREATE TABLE agents (
            goal_id TEXT NOT NULL,
            host TEXT NOT NULL,
            boot_id TEXT NOT NULL,
            pid INTEGER NOT NULL,
            start_ticks INTEGER NOT NULL,
            run TEXT NOT NULL,
            holder TEXT NOT NULL,
            started_at_us INTEGER NOT NULL,
            PRIMARY KEY (goal_id, host, boot_id, pid, start_ticks)
        )""",
    ),
    (
        # the rank of governor.core.summary.attention, as it was when this shipped
        "ALTER TABLE goals ADD COLUMN attention INTEGER NOT NULL DEFAULT 3",
        """UPDATE goals SET attention = CASE
            WHEN status = 'awaiting_review' OR (status = 'blocked' AND blocked_on = 'decision')
                THEN 0
            WHEN status IN ('blocked', 'budget_exhausted') THEN 1
            WHEN status IN ('ready', 'waiting', 'running') THEN 2
            ELSE 3 END""",
        "CREATE INDEX goals_attention ON goals (attention, updated_at_us DESC, goal_id)",
        """CREATE INDEX goals_status_attention
            ON goals (status, attention, updated_at_us DESC, goal_id)""",
    ),
)
"""Schema migrations: ``MIGRATIONS[v]`` takes a database from version ``v - 1`` to ``v``.

Append only: never edit or reorder a shipped entry; add a new one.
"""

BUSY_TIMEOUT_S: Final = 30.0
"""How long a transaction waits for another process's write lock before failing."""

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
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
    (goal_id, host, boot_id, pid, start_ticks, run, holder, started_at_us)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
_AGENTS: Final = """SELECT goal_id, host, boot_id, pid, start_ticks, run, holder, started_at_us
    FROM agents WHERE goal_id = ? ORDER BY started_at_us, pid"""
# LIMIT -1 is SQLite's "no limit"; the WHERE and ORDER BY come from governor.store.listing.
_GOALS: Final = """SELECT
    goal_id, title, seq, status, next_action, blocked_on, not_before_us, updated_at_us,
    rule, reason, replans_used, replans_charged, replans_limit,
    attempts_used, attempts_charged, attempts_limit, upstream
    FROM goals"""
# The status test repeats the partial index's WHERE word for word, so SQLite can use
# goals_due: a walk in due order over the active goals only, however many have ended.
_DUE: Final = """SELECT
    goal_id, title, seq, status, next_action, blocked_on, not_before_us, updated_at_us,
    rule, reason, replans_used, replans_charged, replans_limit,
    attempts_used, attempts_charged, attempts_limit, upstream
    FROM goals INDEXED BY goals_due
    WHERE status IN ('ready', 'waiting', 'running') AND (status <> 'waiting' OR due_us <= ?)
    ORDER BY due_us, goal_id LIMIT ?"""
_SOONEST: Final = """SELECT due_us FROM goals INDEXED BY goals_due
    WHERE status IN ('ready', 'waiting', 'running') AND status = 'waiting'
    ORDER BY due_us LIMIT 1"""
_PUT_WORKER: Final = """INSERT OR REPLACE INTO workers (worker_id, host, pid, started_at_us,
    heartbeat_at_us, goal_id, step_started_at_us) VALUES (?, ?, ?, ?, ?, ?, ?)"""
_WORKERS: Final = """SELECT worker_id, host, pid, started_at_us, heartbeat_at_us, goal_id,
    step_started_at_us FROM workers ORDER BY worker_id"""
_PUT_UPSTREAM: Final = """INSERT OR REPLACE INTO upstreams (name, harness, endpoint, model_family, healthy, updated_at_us,
    failing_since_us, last_status, retry_after_s, next_probe_at_us, probes, refusals,
    probing_until_us, prober, backoff_initial_s, backoff_factor, backoff_max_s,
    outage_started_us, recovered_at_us, recovered_by)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
_UPSTREAMS: Final = """SELECT name, harness, endpoint, model_family, healthy, updated_at_us,
    failing_since_us, last_status, retry_after_s, next_probe_at_us, probes, refusals,
    probing_until_us, prober, backoff_initial_s, backoff_factor, backoff_max_s,
    outage_started_us, recovered_at_us, recovered_by
    FROM upstreams ORDER BY name"""
_UPSTREAMS_NAMED: Final = """SELECT name, harness, endpoint, model_family, healthy, updated_at_us,
    failing_since_us, last_status, retry_after_s, next_probe_at_us, probes, refusals,
    probing_until_us, prober, backoff_initial_s, backoff_factor, backoff_max_s,
    outage_started_us, recovered_at_us, recovered_by
    FROM upstreams WHERE name IN (SELECT value FROM json_each(?)) ORDER BY name"""
_MOVE_PARKED: Final = """UPDATE goals SET not_before_us = ?, due_us = ?, reason = ?
    WHERE upstream = ? AND status = 'waiting'"""
_PARKED: Final = """SELECT upstream, COUNT(*) FROM goals
    WHERE upstream IS NOT NULL AND status = 'waiting' GROUP BY upstream"""


def _us(when: datetime) -> int:
    return (when - _EPOCH) // timedelta(microseconds=1)


def _time(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def _maybe_us(when: datetime | None) -> int | None:
    return None if when is None else _us(when)


def _maybe_time(us: int | None) -> datetime | None:
    return None if us is None else _time(us)


def _translate(exc: sqlite3.Error, where: str) -> StoreError:
    """The one translation of SQLite's errors into governor's."""
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        return StoreError(
            f"{where}: the database stayed locked by another process for longer than the "
            f"busy timeout; try again ({text})"
        )
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in text:
        return StoreError(f"{where}: not a SQLite database ({text})")
    if isinstance(exc, sqlite3.OperationalError) and "unable to open" in text:
        return StoreError(
            f"{where}: cannot open the database file; does its folder exist? ({text})"
        )
    return StoreError(f"{where}: {type(exc).__name__}: {text}")


@contextmanager
def _translated(where: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise _translate(exc, where) from exc


class _Schema:
    """SQLite's migration primitives: ``BEGIN IMMEDIATE`` excludes other migrators."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def version(self) -> int:
        table = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        if self.conn.execute(table).fetchone() is None:
            return -1
        (found,) = self.conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return -1 if found is None else int(found)

    @contextmanager
    def migrating(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            yield
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def execute(self, statement: str) -> None:
        self.conn.execute(statement)

    def applied(self, version: int, at: datetime) -> None:
        self.conn.execute("INSERT INTO schema_version VALUES (?, ?)", (version, stamp(at)))


def migrate(
    conn: sqlite3.Connection,
    *,
    where: str,
    now: Callable[[], datetime],
    migrations: Sequence[Sequence[str]] = MIGRATIONS,
) -> int:
    """Bring the database to the latest version (``governor.store.migrate``); returns it.

    A current database is only read (opening never waits for a busy writer).
    """
    return run_migrations(_Schema(conn), migrations, where=where, now=now)


def _summary(row: tuple[Any, ...]) -> GoalSummary:
    goal_id, title, seq, status, next_action, blocked_on, not_before_us, updated_at_us = row[:8]
    rule, reason, *usage, upstream = row[8:]
    return GoalSummary(
        goal_id, title, seq, status, next_action, blocked_on,
        _maybe_time(not_before_us), _time(updated_at_us), rule, reason,
        usage_of(usage[0:3]), usage_of(usage[3:6]), upstream,
    )  # fmt: skip


class SqliteEventStore(BaseEventStore[sqlite3.Connection]):
    """The event store in one SQLite database file."""

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
        self._where = str(self.path)
        self._lock = threading.Lock()
        with _translated(self._where):
            # isolation_level=None: no implicit transactions; every write says BEGIN IMMEDIATE.
            self._conn: sqlite3.Connection | None = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro" if read_only else self.path,
                timeout=busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
                uri=read_only,
            )
            try:
                self._configure(self._conn, busy_timeout_s, read_only)
                if read_only:
                    self.schema_version = check_readable(
                        _Schema(self._conn), MIGRATIONS, where=self._where
                    )
                else:
                    self.schema_version = migrate(self._conn, where=self._where, now=self._clock)
            except BaseException:
                self._conn.close()
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
        with self._lock, _translated(self._where):
            conn = self._connection()
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
        with self._lock, _translated(self._where):
            yield self._connection()

    def _head(self, tx: sqlite3.Connection, goal_id: str) -> StreamHead:
        last, recorded, chain = tx.execute(_HEAD, (goal_id,)).fetchone()
        return StreamHead(0 if last is None else int(last), recorded, chain)

    def _rows(
        self, tx: sqlite3.Connection, goal_id: str, after_seq: int, limit: int
    ) -> list[tuple[int, bytes | str, int]]:
        return tx.execute(
            "SELECT seq, body, crc32 FROM events WHERE goal_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (goal_id, after_seq, limit),
        ).fetchall()

    def _insert(self, tx: sqlite3.Connection, goal_id: str, rows: Sequence[StoredEvent]) -> None:
        tx.executemany(
            "INSERT INTO events (goal_id, seq, type, at_us, body, crc32) VALUES (?, ?, ?, ?, ?, ?)",
            [(goal_id, r.seq, r.type, _us(r.at), r.body, r.crc) for r in rows],
        )

    def _put_summary(self, tx: sqlite3.Connection, summary: GoalSummary, chain: int) -> None:
        s = summary
        tx.execute(
            _PUT_SUMMARY,
            (s.goal_id, s.title, s.seq, s.status, s.next_action, s.blocked_on,
             _maybe_us(s.not_before), _us(s.updated_at), _us(s.due_at), s.rule, s.reason,
             *usage_row(s.replans), *usage_row(s.attempts), s.upstream, chain, s.attention),
        )  # fmt: skip

    def _summaries(
        self, tx: sqlite3.Connection, query: GoalQuery, offset: int, limit: int | None
    ) -> list[GoalSummary]:
        sql, values = listing.select(_GOALS, query, "sqlite")
        rows = tx.execute(sql, (*values, -1 if limit is None else limit, offset))
        return [_summary(row) for row in rows]

    def _count(self, tx: sqlite3.Connection, query: GoalQuery) -> int:
        (found,) = tx.execute(*listing.count(query, "sqlite")).fetchone()
        return int(found)

    def _due(self, tx: sqlite3.Connection, now: datetime, limit: int) -> list[GoalSummary]:
        return [_summary(row) for row in tx.execute(_DUE, (_us(now), limit))]

    def _goal_counts(self, tx: sqlite3.Connection) -> dict[str, int]:
        rows = tx.execute("SELECT status, COUNT(*) FROM goals GROUP BY status")
        return {status: int(n) for status, n in rows}

    def _soonest_wakeup(self, tx: sqlite3.Connection) -> datetime | None:
        row = tx.execute(_SOONEST).fetchone()
        return None if row is None else _time(row[0])

    def _put_worker(self, tx: sqlite3.Connection, worker: WorkerBeat) -> None:
        w = worker
        tx.execute(
            _PUT_WORKER,
            (w.worker_id, w.host, w.pid, _us(w.started_at), _us(w.heartbeat_at), w.goal_id,
             _maybe_us(w.step_started_at)),
        )  # fmt: skip

    def _delete_worker(self, tx: sqlite3.Connection, worker_id: str) -> None:
        tx.execute("DELETE FROM workers WHERE worker_id = ?", (worker_id,))

    def _workers(self, tx: sqlite3.Connection) -> list[WorkerBeat]:
        return [
            WorkerBeat(worker_id, host, pid, _time(started), _time(beat), goal, _maybe_time(step))
            for worker_id, host, pid, started, beat, goal, step in tx.execute(_WORKERS)
        ]

    def _insert_error(self, tx: sqlite3.Connection, error: ServiceError, keep: int) -> None:
        e = error
        cursor = tx.execute(
            "INSERT INTO service_errors (at_us, worker_id, goal_id, error) VALUES (?, ?, ?, ?)",
            (_us(e.at), e.worker_id, e.goal_id, e.error),
        )
        tx.execute("DELETE FROM service_errors WHERE id <= ?", ((cursor.lastrowid or 0) - keep,))

    def _errors(self, tx: sqlite3.Connection, limit: int) -> list[ServiceError]:
        rows = tx.execute(
            "SELECT at_us, worker_id, goal_id, error FROM service_errors ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [ServiceError(_time(at), worker, goal, text) for at, worker, goal, text in rows]

    def _put_agent(self, tx: sqlite3.Connection, agent: AgentRecord) -> None:
        a = agent
        tx.execute(
            _PUT_AGENT,
            (a.goal_id, a.host, a.boot_id, a.pid, a.start_ticks, a.run, a.holder,
             _us(a.started_at)),
        )  # fmt: skip

    def _delete_agent(self, tx: sqlite3.Connection, agent: AgentRecord) -> None:
        a = agent
        tx.execute(
            "DELETE FROM agents WHERE goal_id = ? AND host = ? AND boot_id = ? AND pid = ? "
            "AND start_ticks = ?",
            (a.goal_id, a.host, a.boot_id, a.pid, a.start_ticks),
        )

    def _agents(self, tx: sqlite3.Connection, goal_id: str) -> list[AgentRecord]:
        return [
            AgentRecord(goal, host, boot, pid, ticks, run, holder, _time(started))
            for goal, host, boot, pid, ticks, run, holder, started in tx.execute(
                _AGENTS, (goal_id,)
            )
        ]

    def _upstream_records(
        self, tx: sqlite3.Connection, names: Sequence[str] | None
    ) -> list[UpstreamHealth]:
        if names is None:
            rows = tx.execute(_UPSTREAMS)
        else:
            rows = tx.execute(_UPSTREAMS_NAMED, (json.dumps(list(names)),))
        return [from_row(row, _maybe_time) for row in rows]

    def _put_upstream(self, tx: sqlite3.Connection, record: UpstreamHealth) -> None:
        tx.execute(_PUT_UPSTREAM, as_row(record, _maybe_us))

    def _move_parked(
        self, tx: sqlite3.Connection, upstream: str, due: datetime, reason: str
    ) -> None:
        tx.execute(_MOVE_PARKED, (_us(due), _us(due), reason, upstream))

    def _parked_counts(self, tx: sqlite3.Connection) -> dict[str, int]:
        return {upstream: int(n) for upstream, n in tx.execute(_PARKED)}

    def _lease_record(self, tx: sqlite3.Connection, goal_id: str) -> LeaseRecord | None:
        row = tx.execute(
            "SELECT token, holder, expires_at_us FROM leases WHERE goal_id = ?", (goal_id,)
        ).fetchone()
        if row is None:
            return None
        token, holder, expires_at_us = row
        if holder is None or expires_at_us is None:
            return LeaseRecord(token, None)
        return LeaseRecord(token, Lease(goal_id, holder, token, _time(expires_at_us)))

    def _put_lease(self, tx: sqlite3.Connection, goal_id: str, record: LeaseRecord) -> None:
        lease = record.lease
        tx.execute(
            "INSERT OR REPLACE INTO leases (goal_id, token, holder, expires_at_us) VALUES (?, ?, ?, ?)",
            (
                goal_id,
                record.token,
                lease.holder if lease else None,
                _us(lease.expires_at) if lease else None,
            ),
        )
