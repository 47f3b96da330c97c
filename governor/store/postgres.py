"""The PostgreSQL event store: one database shared by runners on many machines.

Rules (SPEC §8; the contract and its checks live in ``governor.store.engine``):
    * Every append and lease operation is one transaction that first takes the goal's
      transaction-scoped advisory lock (``pg_advisory_xact_lock`` on a 64-bit hash of the
      goal id). Writers of one goal queue behind it; writers of other goals do not wait.
      Taken before anything is read, it makes the fencing check, the expected-seq check,
      the insert and the summary upsert of an append — and the read-check-write of a
      lease grant — atomic per goal, across processes and machines.
    * Transactions run at READ COMMITTED, pinned per connection: each statement after the
      lock sees every commit made before the lock was granted. (Under REPEATABLE READ the
      snapshot would predate the wait and the checks would read stale rows.)
    * The schema is the append-only ``MIGRATIONS`` list of ``postgres_schema``, applied
      when a store opens; a database newer than the code is refused.
    * ``psycopg`` errors are translated to ``StoreError`` in one place (``governor.store.postgres_driver``).
    * The injected clock is the only time source: no ``now()`` in SQL.
    * A connection pool: one store object may be shared by any number of threads; each
      transaction or read borrows a connection for its duration only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool

from governor.clock import Clock
from governor.core.pools import PoolEvent
from governor.core.summary import GoalSummary
from governor.core.upstream import UpstreamHealth
from governor.registry import AgentRecord, ServiceError, WorkerBeat
from governor.store import listing
from governor.store.base import GoalQuery, usage_row
from governor.store.engine import BaseEventStore, read_only_error
from governor.store.health import as_row
from governor.store.pools import PoolDraft, encode_pool_state
from governor.store.postgres_driver import describe_url, goal_lock_key, same_time, translated
from governor.store.postgres_rows import TIMES, TIMESTAMPTZ, TolerantTimes
from governor.store.postgres_schema import (
    MIGRATIONS,
    Conn,
    check_current,
    migrate,
    one_row,
    postgres_catalogue,
)
from governor.store.schema_objects import Catalogue
from governor.store.sqlchecks import SqlCheckRows
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

POOL_MAX_SIZE: Final = 10
"""Connections a store object keeps at most (one per concurrent transaction or read)."""

TIMEOUT_S: Final = 30.0
"""How long to wait for a connection, from the server or from a busy pool."""

LOCK_TIMEOUT_S: Final = 30.0
"""How long a transaction waits for another writer's lock on the same goal."""

_PUT_SUMMARY: Final = """INSERT INTO goals
    (goal_id, title, seq, status, next_action, blocked_on, not_before, updated_at, due_at,
     rule, reason, replans_used, replans_charged, replans_limit,
     attempts_used, attempts_charged, attempts_limit, upstream, chain, attention)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
    ON CONFLICT (goal_id) DO UPDATE SET title = EXCLUDED.title, seq = EXCLUDED.seq,
        status = EXCLUDED.status, next_action = EXCLUDED.next_action,
        blocked_on = EXCLUDED.blocked_on, not_before = EXCLUDED.not_before,
        updated_at = EXCLUDED.updated_at, due_at = EXCLUDED.due_at,
        rule = EXCLUDED.rule, reason = EXCLUDED.reason,
        replans_used = EXCLUDED.replans_used, replans_charged = EXCLUDED.replans_charged,
        replans_limit = EXCLUDED.replans_limit, attempts_used = EXCLUDED.attempts_used,
        attempts_charged = EXCLUDED.attempts_charged, attempts_limit = EXCLUDED.attempts_limit,
        upstream = EXCLUDED.upstream, chain = EXCLUDED.chain, attention = EXCLUDED.attention"""
# One statement, so the stream's end and what the summary recorded are one snapshot.
_LOCK_IN_ORDER: Final = """SELECT pg_advisory_xact_lock(key)
FROM unnest(%s::bigint[]) WITH ORDINALITY AS locks(key, n) ORDER BY n"""
"""Take transaction advisory locks one after another, in the order of the array."""

_POOL_STATES: Final = "SELECT name, state FROM pools WHERE name = ANY(%s)"

_PUT_POOLS: Final = """WITH written AS (
    INSERT INTO pool_events (pool, seq, type, at, body)
    SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::timestamptz[], %s::text[])
)
INSERT INTO pools (name, seq, state)
SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[])
ON CONFLICT (name) DO UPDATE SET seq = EXCLUDED.seq, state = EXCLUDED.state"""
"""Pool events and the states they lead to, in one statement."""

_HEAD: Final = """SELECT (SELECT MAX(seq) FROM events WHERE goal_id = %(goal)s),
    (SELECT seq FROM goals WHERE goal_id = %(goal)s),
    (SELECT chain FROM goals WHERE goal_id = %(goal)s)"""
_PUT_AGENT: Final = """INSERT INTO agents
    (goal_id, host, boot_id, pid, start_ticks, run, holder, started_at, last_line)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
    ON CONFLICT (goal_id, host, boot_id, pid, start_ticks) DO UPDATE SET
        run = EXCLUDED.run, holder = EXCLUDED.holder, started_at = EXCLUDED.started_at,
        last_line = EXCLUDED.last_line"""
_AGENTS: Final = """SELECT goal_id, host, boot_id, pid, start_ticks, run, holder, started_at,
    last_line
    FROM agents WHERE goal_id = %s ORDER BY started_at, pid"""
# LIMIT NULL is PostgreSQL's "no limit"; the WHERE and ORDER BY come from governor.store.listing.
_GOALS: Final = """SELECT
    goal_id, title, seq, status, next_action, blocked_on, not_before, updated_at,
    rule, reason, replans_used, replans_charged, replans_limit,
    attempts_used, attempts_charged, attempts_limit, upstream, attention
    FROM goals"""
# The status test repeats the partial index's WHERE word for word, so the planner can
# prove the query implies it and walk goals_due in due order over the active goals only.
_DUE: Final = """SELECT
    goal_id, title, seq, status, next_action, blocked_on, not_before, updated_at,
    rule, reason, replans_used, replans_charged, replans_limit,
    attempts_used, attempts_charged, attempts_limit, upstream, attention
    FROM goals
    WHERE status IN ('ready', 'waiting', 'running') AND (status <> 'waiting' OR due_at <= %s)
    ORDER BY due_at, goal_id LIMIT %s"""
_SOONEST: Final = """SELECT goal_id, due_at FROM goals
    WHERE status IN ('ready', 'waiting', 'running') AND status = 'waiting'
    ORDER BY due_at LIMIT 1"""
_PUT_WORKER: Final = """INSERT INTO workers
    (worker_id, host, pid, started_at, heartbeat_at, goal_id, step_started_at)
    VALUES (%s, %s, %s, %s, %s, %s, %s)
    ON CONFLICT (worker_id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid,
        started_at = EXCLUDED.started_at, heartbeat_at = EXCLUDED.heartbeat_at,
        goal_id = EXCLUDED.goal_id, step_started_at = EXCLUDED.step_started_at"""
_WORKERS: Final = """SELECT worker_id, host, pid, started_at, heartbeat_at, goal_id,
    step_started_at FROM workers ORDER BY worker_id"""
# Keeps the newest rows exactly, even where a rolled-back insert left a gap in the ids.
_TRIM_ERRORS: Final = """DELETE FROM service_errors WHERE id <=
    (SELECT id FROM service_errors ORDER BY id DESC OFFSET %s LIMIT 1)"""
_PUT_UPSTREAM: Final = """INSERT INTO upstreams (name, harness, endpoint, model_family, healthy, updated_at,
    failing_since, last_status, retry_after_s, next_probe_at, probes, refusals,
    probing_until, prober, backoff_initial_s, backoff_factor, backoff_max_s,
    outage_started, recovered_at, recovered_by, answered)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
    ON CONFLICT (name) DO UPDATE SET harness = EXCLUDED.harness, endpoint = EXCLUDED.endpoint,
        model_family = EXCLUDED.model_family, healthy = EXCLUDED.healthy,
        updated_at = EXCLUDED.updated_at, failing_since = EXCLUDED.failing_since,
        last_status = EXCLUDED.last_status, retry_after_s = EXCLUDED.retry_after_s,
        next_probe_at = EXCLUDED.next_probe_at, probes = EXCLUDED.probes,
        refusals = EXCLUDED.refusals, probing_until = EXCLUDED.probing_until,
        prober = EXCLUDED.prober, backoff_initial_s = EXCLUDED.backoff_initial_s,
        backoff_factor = EXCLUDED.backoff_factor, backoff_max_s = EXCLUDED.backoff_max_s,
        outage_started = EXCLUDED.outage_started, recovered_at = EXCLUDED.recovered_at,
        recovered_by = EXCLUDED.recovered_by, answered = EXCLUDED.answered"""
_UPSTREAMS: Final = """SELECT name, harness, endpoint, model_family, healthy, updated_at,
    failing_since, last_status, retry_after_s, next_probe_at, probes, refusals,
    probing_until, prober, backoff_initial_s, backoff_factor, backoff_max_s,
    outage_started, recovered_at, recovered_by, answered
    FROM upstreams ORDER BY name"""
_UPSTREAMS_NAMED: Final = """SELECT name, harness, endpoint, model_family, healthy, updated_at,
    failing_since, last_status, retry_after_s, next_probe_at, probes, refusals,
    probing_until, prober, backoff_initial_s, backoff_factor, backoff_max_s,
    outage_started, recovered_at, recovered_by, answered
    FROM upstreams WHERE name = ANY(%s) ORDER BY name"""
_MOVE_PARKED: Final = """UPDATE goals SET not_before = %s, due_at = %s, reason = %s
    WHERE upstream = %s AND status = 'waiting'"""
_PARKED: Final = """SELECT upstream, COUNT(*), MIN(goal_id) FROM goals
    WHERE upstream IS NOT NULL AND status = 'waiting' GROUP BY upstream"""
_PUT_LEASE: Final = """INSERT INTO leases (goal_id, token, holder, expires_at)
    VALUES (%s, %s, %s, %s)
    ON CONFLICT (goal_id) DO UPDATE SET
        token = EXCLUDED.token, holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at"""


class PostgresEventStore(SqlCheckRows[Conn], BaseEventStore[Conn]):
    """The event store in a PostgreSQL database, reached through a connection pool.

    Args:
        url: a libpq URL or conninfo string (``postgresql://user@host:5432/governor``).
        clock: the only time source (lease expiry, derived summaries, migrations).
        max_size: the most connections the pool opens (one per concurrent call).
        timeout_s: how long to wait for a connection (from the server, or from the pool
            when every connection is busy).
        lock_timeout_s: how long a write waits for another writer of the same goal.

    Raises:
        StoreError: when the server cannot be reached, refuses the login, or holds a
            schema newer than this code.
    """

    times = TIMES
    placeholder = "%s"
    same = "IS NOT DISTINCT FROM"
    migrations = MIGRATIONS

    def __init__(
        self,
        url: str,
        *,
        clock: Clock | None = None,
        max_size: int = POOL_MAX_SIZE,
        timeout_s: float = TIMEOUT_S,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
        read_only: bool = False,
    ) -> None:
        super().__init__(clock=clock)
        self.url = url
        self.read_only = read_only
        self.schema_restored = []
        self._where = describe_url(url)
        self._lock_timeout_ms = max(1, int(lock_timeout_s * 1000))
        conninfo = url
        if "connect_timeout" not in conninfo_to_dict(url):  # libpq would wait forever
            conninfo = make_conninfo(url, connect_timeout=max(2, int(timeout_s)))
        with translated(self._where):
            with psycopg.connect(conninfo, autocommit=True) as conn:
                self._configure(conn)
                if read_only:
                    self.schema_version = check_current(conn, where=self._where)
                else:
                    self.schema_version = migrate(
                        conn, where=self._where, now=self._clock, restored=self.schema_restored
                    )
            self._pool = self._open_pool(conninfo, max_size, timeout_s)

    def _open_pool(self, conninfo: str, max_size: int, timeout_s: float) -> ConnectionPool[Conn]:
        pool = ConnectionPool(
            conninfo,
            kwargs={"autocommit": True},
            min_size=1,
            max_size=max_size,
            timeout=timeout_s,
            configure=self._configure,
            # A connection broken while idle (a server restart, a failover) is replaced
            # on checkout instead of failing the caller's next call.
            check=ConnectionPool.check_connection,
            open=False,
            name=f"governor {self._where}",
        )
        try:
            pool.open(wait=True, timeout=timeout_s)
        except BaseException:
            pool.close()  # else its threads would keep trying to connect
            raise
        return pool

    def _configure(self, conn: Conn) -> None:
        """Session settings of every connection (the pool calls it once per connection)."""
        conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        # Times are read back as UTC, and a queued writer gives up like SQLite's does.
        conn.execute(
            "SELECT set_config('TimeZone', 'UTC', false), set_config('lock_timeout', %s, false)",
            (f"{self._lock_timeout_ms}ms",),
        )
        if self.read_only:  # the server refuses every write, whatever the code does
            conn.execute("SET default_transaction_read_only = on")
        conn.adapters.register_loader(TIMESTAMPTZ, TolerantTimes)

    def close(self) -> None:
        """Close every connection of the pool; later calls raise ``StoreError``."""
        self._pool.close()

    @contextmanager
    def _write(self, goal_id: str) -> Iterator[Conn]:
        if self.read_only:
            raise read_only_error(self._where)
        with translated(self._where), self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (goal_lock_key(goal_id),))
            yield conn

    @contextmanager
    def _write_pooled(
        self, goal_id: str, names: Sequence[str]
    ) -> Iterator[tuple[Conn, dict[str, str]]]:
        # One round trip: every lock (the goal's, then the pools' in the order given) and,
        # pipelined behind it, the pools' states — a statement of its own, so its snapshot
        # is taken once the locks are held (READ COMMITTED).
        if not names:
            with self._write(goal_id) as conn:
                yield conn, {}
            return
        if self.read_only:
            raise read_only_error(self._where)
        keys = [goal_lock_key(goal_id), *(goal_lock_key(f"pool:{n}") for n in names)]
        with translated(self._where), self._pool.connection() as conn, conn.transaction():
            with conn.pipeline():
                conn.execute(_LOCK_IN_ORDER, (keys,))
                states = conn.execute(_POOL_STATES, (list(names),))
            yield conn, {name: state for name, state in states.fetchall()}

    @contextmanager
    def _read(self) -> Iterator[Conn]:
        with translated(self._where), self._pool.connection() as conn:
            yield conn

    def _query(self, tx: Conn, sql: str, params: Sequence[object] = ()) -> list[Any]:
        cursor = tx.execute(sql, params)
        return cursor.fetchall() if cursor.description is not None else []

    def _recorded_versions(self, tx: Conn) -> list[int]:
        (table,) = one_row(tx.execute("SELECT to_regclass('schema_version')"))
        if table is None:
            return []
        return [int(v) for (v,) in tx.execute("SELECT version FROM schema_version").fetchall()]

    def _catalogue(self, tx: Conn) -> Catalogue:
        return postgres_catalogue(tx)

    def _record_version(self, tx: Conn, version: int, at: datetime) -> None:
        tx.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)"
        )
        tx.execute("INSERT INTO schema_version VALUES (%s, %s)", (version, at))

    def _execute(self, tx: Conn, statement: str) -> None:
        tx.execute(statement)  # one of MIGRATIONS: literal SQL, never a value

    def _head(self, tx: Conn, goal_id: str) -> StreamHead:
        last, recorded, chain = one_row(tx.execute(_HEAD, {"goal": goal_id}))
        return head_of(goal_id, last, recorded, chain)

    def _rows(
        self, tx: Conn, goal_id: str, after_seq: int, limit: int
    ) -> list[tuple[int, bytes | str, int]]:
        cursor = tx.execute(
            "SELECT seq, body, crc32 FROM events WHERE goal_id = %s AND seq > %s "
            "ORDER BY seq LIMIT %s",
            (goal_id, after_seq, limit),
        )
        return cursor.fetchall()  # (BIGINT, BYTEA, BIGINT) arrive as (int, bytes, int)

    def _insert(self, tx: Conn, goal_id: str, rows: Sequence[StoredEvent]) -> None:
        # COPY: one round trip for a batch of any size (an import of a long history).
        with tx.cursor().copy(
            "COPY events (goal_id, seq, type, at, body, crc32) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row((goal_id, row.seq, row.type, row.at, row.body, row.crc))

    def _put_summary(self, tx: Conn, summary: GoalSummary, chain: int) -> None:
        tx.execute(
            _PUT_SUMMARY,
            (
                summary.goal_id,
                summary.title,
                summary.seq,
                summary.status,
                summary.next_action,
                summary.blocked_on,
                summary.not_before,
                summary.updated_at,
                summary.due_at,
                summary.rule,
                summary.reason,
                *usage_row(summary.replans),
                *usage_row(summary.attempts),
                summary.upstream,
                chain,
                summary.attention,
            ),
        )

    def _summaries(
        self, tx: Conn, query: GoalQuery, offset: int, limit: int | None
    ) -> list[GoalSummary]:
        sql, values = listing.select(_GOALS, query, "postgres")
        return [summary_of(row, TIMES) for row in tx.execute(sql, (*values, limit, offset))]

    def _count(self, tx: Conn, query: GoalQuery) -> int:
        sql, values = listing.count(query, "postgres")
        (found,) = one_row(tx.execute(sql, values))
        return int(found)

    def _due(self, tx: Conn, now: datetime, limit: int) -> list[GoalSummary]:
        return [summary_of(row, TIMES) for row in tx.execute(_DUE, (now, limit))]

    def _goal_counts(self, tx: Conn) -> dict[str, int]:
        rows = tx.execute("SELECT status, COUNT(*), MIN(goal_id) FROM goals GROUP BY status")
        return dict(status_count(row) for row in rows)

    def _soonest_wakeup(self, tx: Conn) -> datetime | None:
        row = tx.execute(_SOONEST).fetchone()
        return None if row is None else wakeup_of(row, TIMES)

    def _put_worker(self, tx: Conn, worker: WorkerBeat) -> None:
        w = worker
        tx.execute(
            _PUT_WORKER,
            (w.worker_id, w.host, w.pid, w.started_at, w.heartbeat_at, w.goal_id,
             w.step_started_at),
        )  # fmt: skip

    def _delete_worker(self, tx: Conn, worker_id: str) -> None:
        tx.execute("DELETE FROM workers WHERE worker_id = %s", (worker_id,))

    def _workers(self, tx: Conn) -> list[WorkerBeat]:
        return [worker_of(row, TIMES) for row in tx.execute(_WORKERS)]

    def _insert_error(self, tx: Conn, error: ServiceError, keep: int) -> None:
        e = error
        tx.execute(
            "INSERT INTO service_errors (at, worker_id, goal_id, error) VALUES (%s, %s, %s, %s)",
            (e.at, e.worker_id, e.goal_id, e.error),
        )
        tx.execute(_TRIM_ERRORS, (keep,))

    def _errors(self, tx: Conn, limit: int) -> list[ServiceError]:
        rows = tx.execute(
            "SELECT id, at, worker_id, goal_id, error FROM service_errors "
            "ORDER BY id DESC LIMIT %s",
            (limit,),
        )
        return [error_of(row, TIMES) for row in rows]

    def _put_agent(self, tx: Conn, agent: AgentRecord) -> None:
        a = agent
        tx.execute(
            _PUT_AGENT,
            (
                a.goal_id,
                a.host,
                a.boot_id,
                a.pid,
                a.start_ticks,
                a.run,
                a.holder,
                a.started_at,
                a.last_line,
            ),
        )

    def _delete_agent(self, tx: Conn, agent: AgentRecord) -> None:
        a = agent
        tx.execute(
            "DELETE FROM agents WHERE goal_id = %s AND host = %s AND boot_id = %s AND pid = %s "
            "AND start_ticks = %s",
            (a.goal_id, a.host, a.boot_id, a.pid, a.start_ticks),
        )

    def _agents(self, tx: Conn, goal_id: str) -> list[AgentRecord]:
        return [agent_of(row, TIMES) for row in tx.execute(_AGENTS, (goal_id,))]

    def _upstream_records(self, tx: Conn, names: Sequence[str] | None) -> list[UpstreamHealth]:
        if names is None:
            rows = tx.execute(_UPSTREAMS)
        else:
            rows = tx.execute(_UPSTREAMS_NAMED, (list(names),))
        return [upstream_of(row, TIMES) for row in rows]

    def _put_upstream(self, tx: Conn, record: UpstreamHealth) -> None:
        tx.execute(_PUT_UPSTREAM, as_row(record, same_time))

    def _lock_pool(self, tx: Conn, name: str) -> None:
        tx.execute("SELECT pg_advisory_xact_lock(%s)", (goal_lock_key(f"pool:{name}"),))

    def _pool_bodies(self, tx: Conn, name: str) -> list[str]:
        cursor = tx.execute("SELECT body FROM pool_events WHERE pool = %s ORDER BY seq", (name,))
        return [row[0] for row in cursor.fetchall()]

    def _pool_snapshots(self, tx: Conn, names: Sequence[str] | None) -> dict[str, str]:
        if names is None:
            cursor = tx.execute("SELECT name, state FROM pools")
        else:
            cursor = tx.execute(_POOL_STATES, (list(names),))
        return {name: state for name, state in cursor.fetchall()}

    def _put_pool_event(self, tx: Conn, event: PoolEvent, body: str) -> None:
        tx.execute(
            "INSERT INTO pool_events (pool, seq, type, at, body) VALUES (%s, %s, %s, %s, %s)",
            (event.pool, event.seq, event.type, event.at, body),
        )

    def _write_pools(self, tx: Conn, draft: PoolDraft) -> None:
        # One statement (one round trip) for the events and the states they lead to.
        states, written = draft
        names = sorted({event.pool for event, _ in written})
        if not names:
            return
        tx.execute(
            _PUT_POOLS,
            (
                [e.pool for e, _ in written],
                [e.seq for e, _ in written],
                [e.type for e, _ in written],
                [e.at for e, _ in written],
                [body for _, body in written],
                names,
                [states[n].seq for n in names],
                [encode_pool_state(states[n]) for n in names],
            ),
        )

    def _put_pool_state(self, tx: Conn, name: str, seq: int, state: str) -> None:
        tx.execute(
            "INSERT INTO pools (name, seq, state) VALUES (%s, %s, %s) ON CONFLICT (name) "
            "DO UPDATE SET seq = EXCLUDED.seq, state = EXCLUDED.state",
            (name, seq, state),
        )

    def _move_parked(self, tx: Conn, upstream: str, due: datetime, reason: str) -> None:
        tx.execute(_MOVE_PARKED, (due, due, reason, upstream))

    def _parked_counts(self, tx: Conn) -> dict[str, int]:
        return dict(parked_count(row) for row in tx.execute(_PARKED))

    def _lease_record(self, tx: Conn, goal_id: str) -> LeaseRecord | None:
        row = tx.execute(
            "SELECT token, holder, expires_at FROM leases WHERE goal_id = %s", (goal_id,)
        ).fetchone()
        return None if row is None else lease_of(goal_id, row, TIMES)

    def _put_lease(self, tx: Conn, goal_id: str, record: LeaseRecord) -> None:
        lease = record.lease
        tx.execute(
            _PUT_LEASE,
            (
                goal_id,
                record.token,
                lease.holder if lease else None,
                lease.expires_at if lease else None,
            ),
        )
