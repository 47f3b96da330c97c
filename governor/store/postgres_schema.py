"""The PostgreSQL schema: its append-only migrations, and bringing a database up to date.

Rules (SPEC §8):
    * ``MIGRATIONS[v]`` takes a database from version ``v - 1`` to ``v``; the list is
      append only (never edit or reorder a shipped entry) and uses literal SQL, never
      constants, so a shipped migration cannot change when a constant does.
    * ``schema_version`` records each version applied, stamped by the injected clock.
    * A database newer than the code is refused, never guessed at.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Final, LiteralString

import psycopg
from psycopg.rows import TupleRow

from governor.errors import StoreError

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
)
"""Schema migrations: ``MIGRATIONS[v]`` takes a database from version ``v - 1`` to ``v``.

Append only: never edit or reorder a shipped entry; add a new one.
"""

# The two-key advisory locks are a key space apart from the one-key locks of goals.
_MIGRATION_LOCK: Final = (0x676F76, 0)


def version_of(conn: Conn) -> int:
    """The database's schema version; -1 for a database governor has never opened."""
    (table,) = one_row(conn.execute("SELECT to_regclass('schema_version')"))
    if table is None:
        return -1
    (found,) = one_row(conn.execute("SELECT MAX(version) FROM schema_version"))
    return -1 if found is None else int(found)


def one_row(cursor: psycopg.Cursor[TupleRow]) -> TupleRow:
    """The one row of an aggregate query."""
    row = cursor.fetchone()
    assert row is not None, "an aggregate query returns one row"
    return row


def _check_not_newer(current: int, latest: int, where: str) -> None:
    if current > latest:
        raise StoreError(
            f"{where}: the database has schema version {current}, but this governor knows "
            f"versions up to {latest}; upgrade governor to open it"
        )


def migrate(
    conn: Conn,
    *,
    where: str,
    now: Callable[[], datetime],
    migrations: Sequence[Sequence[LiteralString]] = MIGRATIONS,
) -> int:
    """Bring the database to the latest version; returns that version.

    A current database is only read. Otherwise the missing migrations run in one
    transaction (DDL is transactional in PostgreSQL: a failure leaves nothing behind)
    that takes an advisory lock and re-reads the version first, so two processes
    opening a new database at once migrate it once.

    Raises:
        StoreError: when the database is newer than ``migrations`` knows.
    """
    latest = len(migrations) - 1
    found = version_of(conn)
    _check_not_newer(found, latest, where)
    if found == latest:
        return latest
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", _MIGRATION_LOCK)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)"
        )
        current = version_of(conn)
        _check_not_newer(current, latest, where)
        for version in range(current + 1, latest + 1):
            for statement in migrations[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version VALUES (%s, %s)", (version, now()))
    return latest
