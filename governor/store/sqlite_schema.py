"""The SQLite store's schema: the append-only migrations, and ``migrate``, which brings a
database to the latest version through ``governor.store.migrate``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Final

from governor.store.migrate import migrate as run_migrations
from governor.store.sqlite_driver import Schema

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
        # Whether the upstream has ever answered (SPEC §12.7). Every record written before
        # had been created by a call the vendor answered or refused: it has.
        "ALTER TABLE upstreams ADD COLUMN answered INTEGER NOT NULL DEFAULT 1",
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
    (
        # issue 35: a blocked goal waits on a person, whatever it is blocked on
        "UPDATE goals SET attention = 0 WHERE status = 'blocked'",
    ),
    (
        # pools (SPEC §13.6): each pool's events, and its state at its last seq
        """CREATE TABLE pool_events (
            pool TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            at_us INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (pool, seq)
        ) WITHOUT ROWID""",
        """CREATE TABLE pools (
            name TEXT PRIMARY KEY,
            seq INTEGER NOT NULL,
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


def migrate(
    conn: sqlite3.Connection,
    *,
    where: str,
    now: Callable[[], datetime],
    migrations: Sequence[Sequence[str]] = MIGRATIONS,
    restored: list[int] | None = None,
) -> int:
    """Bring the database to the latest version (``governor.store.migrate``); returns it.

    A current database is only read (opening never waits for a busy writer).
    """
    return run_migrations(Schema(conn), migrations, where=where, now=now, restored=restored)
