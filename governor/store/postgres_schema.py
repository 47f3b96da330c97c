"""The PostgreSQL schema: its append-only migrations, and bringing a database up to date.

Rules (SPEC §8; the runner is ``governor.store.migrate``):
    * ``MIGRATIONS[v]`` takes a database from version ``v - 1`` to ``v``; the list is
      append only (never edit or reorder a shipped entry) and uses literal SQL, never
      constants, so a shipped migration cannot change when a constant does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Final, LiteralString

import psycopg
from psycopg.rows import TupleRow

from governor.store.migrate import check_readable
from governor.store.migrate import migrate as run_migrations
from governor.store.schema_objects import Catalogue

Conn = psycopg.Connection[TupleRow]
"""A connection as the store uses it (rows are tuples)."""

MIGRATIONS: Final[tuple[tuple[LiteralString, ...], ...]] = (
    (
        # COLLATE "C": goal ids order by code point, as in SQLite and in Python, whatever
        # the database's default collation.
        """CREATE TABLE events (
            goal_id TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            type TEXT NOT NULL,
            at TIMESTAMPTZ NOT NULL,
            body BYTEA NOT NULL,
            crc32 BIGINT NOT NULL,
            PRIMARY KEY (goal_id, seq)
        )""",
        """CREATE TABLE goals (
            goal_id TEXT COLLATE "C" PRIMARY KEY,
            title TEXT NOT NULL,
            seq BIGINT NOT NULL,
            status TEXT NOT NULL,
            next_action TEXT NOT NULL,
            blocked_on TEXT,
            not_before TIMESTAMPTZ,
            updated_at TIMESTAMPTZ NOT NULL,
            due_at TIMESTAMPTZ NOT NULL
        )""",
        """CREATE INDEX goals_due ON goals (due_at, goal_id)
            WHERE status IN ('ready', 'waiting', 'running')""",
        "CREATE INDEX goals_status ON goals (status, goal_id)",
        """CREATE TABLE leases (
            goal_id TEXT COLLATE "C" PRIMARY KEY,
            token BIGINT NOT NULL,
            holder TEXT,
            expires_at TIMESTAMPTZ
        )""",
    ),
    (
        """CREATE TABLE workers (
            worker_id TEXT COLLATE "C" PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started_at TIMESTAMPTZ NOT NULL,
            heartbeat_at TIMESTAMPTZ NOT NULL,
            goal_id TEXT,
            step_started_at TIMESTAMPTZ
        )""",
        """CREATE TABLE service_errors (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            at TIMESTAMPTZ NOT NULL,
            worker_id TEXT NOT NULL,
            goal_id TEXT,
            error TEXT NOT NULL
        )""",
    ),
    (
        """ALTER TABLE goals ADD COLUMN rule TEXT, ADD COLUMN reason TEXT,
            ADD COLUMN replans_used BIGINT, ADD COLUMN replans_charged BIGINT,
            ADD COLUMN replans_limit BIGINT, ADD COLUMN attempts_used BIGINT,
            ADD COLUMN attempts_charged BIGINT, ADD COLUMN attempts_limit BIGINT""",
    ),
    (
        """CREATE TABLE upstreams (
            name TEXT COLLATE "C" PRIMARY KEY,
            harness TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            model_family TEXT NOT NULL,
            healthy BOOLEAN NOT NULL,
            updated_at TIMESTAMPTZ NOT NULL,
            failing_since TIMESTAMPTZ,
            last_status INTEGER,
            retry_after_s DOUBLE PRECISION,
            next_probe_at TIMESTAMPTZ,
            probes INTEGER NOT NULL,
            refusals INTEGER NOT NULL,
            probing_until TIMESTAMPTZ,
            prober TEXT,
            backoff_initial_s DOUBLE PRECISION NOT NULL,
            backoff_factor DOUBLE PRECISION NOT NULL,
            backoff_max_s DOUBLE PRECISION NOT NULL,
            outage_started TIMESTAMPTZ,
            recovered_at TIMESTAMPTZ,
            recovered_by TEXT
        )""",
        'ALTER TABLE goals ADD COLUMN upstream TEXT COLLATE "C"',
        """CREATE INDEX goals_upstream ON goals (upstream, goal_id)
            WHERE upstream IS NOT NULL""",
    ),
    (
        "ALTER TABLE goals ADD COLUMN chain BIGINT",
        """CREATE TABLE agents (
            goal_id TEXT COLLATE "C" NOT NULL,
            host TEXT NOT NULL,
            boot_id TEXT NOT NULL,
            pid INTEGER NOT NULL,
            start_ticks BIGINT NOT NULL,
            run TEXT NOT NULL,
            holder TEXT NOT NULL,
            started_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (goal_id, host, boot_id, pid, start_ticks)
        )""",
    ),
    (
        # Whether the upstream has ever answered (SPEC §12.7). Every record written before
        # had been created by a call the vendor answered or refused: it has.
        "ALTER TABLE upstreams ADD COLUMN answered BOOLEAN NOT NULL DEFAULT TRUE",
    ),
    (
        # the rank of governor.core.summary.attention, as it was when this shipped
        "ALTER TABLE goals ADD COLUMN attention SMALLINT NOT NULL DEFAULT 3",
        """UPDATE goals SET attention = CASE
            WHEN status = 'awaiting_review' OR (status = 'blocked' AND blocked_on = 'decision')
                THEN 0
            WHEN status IN ('blocked', 'budget_exhausted') THEN 1
            WHEN status IN ('ready', 'waiting', 'running') THEN 2
            ELSE 3 END""",
        "CREATE INDEX goals_attention ON goals (attention, updated_at DESC, goal_id)",
        """CREATE INDEX goals_status_attention
            ON goals (status, attention, updated_at DESC, goal_id)""",
    ),
    (
        # issue 35: a blocked goal waits on a person, whatever it is blocked on
        "UPDATE goals SET attention = 0 WHERE status = 'blocked'",
    ),
    (
        # pools (SPEC §13.6): each pool's events, and its state at its last seq
        """CREATE TABLE pool_events (
            pool TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            type TEXT NOT NULL,
            at TIMESTAMPTZ NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (pool, seq)
        )""",
        """CREATE TABLE pools (
            name TEXT COLLATE "C" PRIMARY KEY,
            seq BIGINT NOT NULL,
            state TEXT NOT NULL
        )""",
    ),
    (
        # issue 35: a running agent's last line, written at its runner's heartbeat
        "ALTER TABLE agents ADD COLUMN last_line TEXT",
    ),
)
"""Schema migrations: ``MIGRATIONS[v]`` takes a database from version ``v - 1`` to ``v``.

Append only: never edit or reorder a shipped entry; add a new one.
"""

# The two-key advisory locks are a key space apart from the one-key locks of goals.
_MIGRATION_LOCK: Final = (0x676F76, 0)


def one_row(cursor: psycopg.Cursor[TupleRow]) -> TupleRow:
    """The one row of an aggregate query."""
    row = cursor.fetchone()
    assert row is not None, "an aggregate query returns one row"
    return row


class _Schema:
    """PostgreSQL's migration primitives: DDL is transactional, and an advisory lock
    excludes other migrators."""

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    def version(self) -> int:
        (table,) = one_row(self.conn.execute("SELECT to_regclass('schema_version')"))
        if table is None:
            return -1
        (found,) = one_row(self.conn.execute("SELECT MAX(version) FROM schema_version"))
        return -1 if found is None else int(found)

    @contextmanager
    def migrating(self) -> Iterator[None]:
        with self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", _MIGRATION_LOCK)
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)"
            )
            yield

    def execute(self, statement: LiteralString) -> None:
        self.conn.execute(statement)

    def applied(self, version: int, at: datetime) -> None:
        self.conn.execute("INSERT INTO schema_version VALUES (%s, %s)", (version, at))

    def catalogue(self) -> Catalogue:
        return postgres_catalogue(self.conn)


def postgres_catalogue(conn: Conn) -> Catalogue:
    """The tables, columns and indexes of the store's schema (``current_schema()``)."""
    columns = conn.execute(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema()"
    ).fetchall()
    indexes = conn.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
    ).fetchall()
    return Catalogue(
        frozenset(str(t).lower() for t, _ in columns),
        frozenset((str(t).lower(), str(c).lower()) for t, c in columns),
        frozenset(str(i).lower() for (i,) in indexes),
    )


def check_current(conn: Conn, *, where: str) -> int:
    """The version of a database opened read-only (``governor.store.migrate.check_readable``)."""
    return check_readable(_Schema(conn), MIGRATIONS, where=where)


def migrate(
    conn: Conn,
    *,
    where: str,
    now: Callable[[], datetime],
    migrations: Sequence[Sequence[LiteralString]] = MIGRATIONS,
    restored: list[int] | None = None,
) -> int:
    """Bring the database to the latest version (``governor.store.migrate``); returns it."""
    return run_migrations(_Schema(conn), migrations, where=where, now=now, restored=restored)
