"""Benchmark: what checking every column of the summary rows costs a list of many goals.

Run: ``.venv/bin/python -m bench.row_decoding [--goals 100000] [--repeat 5] [--postgres]``

Method (figures in docs/performance.md):
    1. ``--goals`` summary rows written straight into a real SQLite file (or, with
       ``--postgres``, a throw-away PostgreSQL server's database).
    2. CPU time of this process, interleaved ``--repeat`` times, best kept:
         fetch       the query's rows, as the driver returns them
         unchecked   the rows turned into ``GoalSummary`` values without a check (what the
                     backends did before issue 24: unpacking and time conversion only)
         decoded     ``governor.store.tables.summary_of``: every column checked
       and, with ``--postgres``, ``goals()`` on two stores of one database, one reading
       ``TIMESTAMPTZ`` with the tolerant loader (``governor.store.postgres_rows``), the
       other with psycopg's own C loader.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from governor.core.summary import GoalSummary, Usage
from governor.store import postgres
from governor.store.postgres import PostgresEventStore
from governor.store.postgres_rows import TIMESTAMPTZ, TolerantTimes
from governor.store.sqlite import _GOALS, SqliteEventStore
from governor.store.sqlite_driver import TIMES
from governor.store.tables import summary_of
from tests.store.postgres_server import find_bindir, throwaway_server

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
T0 = datetime(2026, 1, 1, tzinfo=UTC)
T0_US = (T0 - EPOCH) // timedelta(microseconds=1)


def unchecked(row: Sequence[Any]) -> GoalSummary:
    """A summary row as the backends read it before issue 24: no column checked."""
    (goal_id, title, seq, status, action, blocked, not_before, updated, rule, reason,
     *usage, upstream) = row  # fmt: skip
    used = None if usage[0] is None else Usage(*usage[0:3])
    tried = None if usage[3] is None else Usage(*usage[3:6])
    when = None if not_before is None else EPOCH + timedelta(microseconds=not_before)
    return GoalSummary(
        goal_id, title, seq, status, action, blocked, when,
        EPOCH + timedelta(microseconds=updated), rule, reason, used, tried, upstream,
    )  # fmt: skip


def cpu(best: dict[str, float], name: str, work: Callable[[], object]) -> None:
    start = time.process_time()
    work()
    best[name] = min(best.get(name, float("inf")), time.process_time() - start)


def sqlite_rows(goals: int, repeat: int) -> dict[str, float]:
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-rows-") as folder:
        db = Path(folder) / "rows.db"
        SqliteEventStore(db).close()
        with closing(sqlite3.connect(db)) as raw, raw:
            raw.executemany(
                "INSERT INTO goals (goal_id, title, seq, status, next_action, blocked_on, "
                "not_before_us, updated_at_us, due_us, rule, reason, replans_used, "
                "replans_charged, replans_limit, attempts_used, attempts_charged, "
                "attempts_limit) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [
                    (
                        f"g{i:07d}",
                        f"goal {i}",
                        3,
                        "waiting",
                        "wait",
                        "upstream",
                        T0_US + i,
                        T0_US,
                        T0_US + i,
                        "goal.9",
                        "waiting",
                        1,
                        1,
                        5,
                        2,
                        2,
                        100,
                    )
                    for i in range(goals)
                ],
            )
        with closing(sqlite3.connect(db)) as raw:
            rows = raw.execute(_GOALS, (-1, 0)).fetchall()
            assert [unchecked(r) for r in rows[:100]] == [summary_of(r, TIMES) for r in rows[:100]]
            for _ in range(repeat):
                cpu(best, "fetch", lambda: raw.execute(_GOALS, (-1, 0)).fetchall())
                cpu(best, "unchecked", lambda: [unchecked(r) for r in rows])
                cpu(best, "decoded", lambda: [summary_of(r, TIMES) for r in rows])
    return best


def postgres_loaders(goals: int, repeat: int) -> dict[str, float]:
    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("--postgres: the PostgreSQL server binaries are not installed")
    best: dict[str, float] = {}
    with throwaway_server(bindir) as server:
        url = server.create_database("rows")
        tolerant = PostgresEventStore(url)
        with (
            psycopg.connect(url, autocommit=True) as raw,
            raw.cursor().copy(
                "COPY goals (goal_id, title, seq, status, next_action, blocked_on, not_before, "
                "updated_at, due_at) FROM STDIN"
            ) as copy,
        ):
            for i in range(goals):
                later = T0 + timedelta(seconds=i)
                copy.write_row((f"g{i:07d}", f"goal {i}", 3, "waiting", "wait", "upstream",
                                later, T0, later))  # fmt: skip
        loader = psycopg.adapters.get_loader(TIMESTAMPTZ, psycopg.pq.Format.TEXT)
        setattr(postgres, "TolerantTimes", loader)  # noqa: B010 - this one store only
        plain = PostgresEventStore(url)  # its connections get psycopg's own loader
        setattr(postgres, "TolerantTimes", TolerantTimes)  # noqa: B010
        for _ in range(repeat):
            cpu(best, "goals(), tolerant loader", tolerant.goals)
            cpu(best, "goals(), psycopg's loader", plain.goals)
        tolerant.close()
        plain.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    best = sqlite_rows(args.goals, args.repeat)
    for name, spent in best.items():
        print(f"SQLite {name:>10}: {spent * 1000:8.0f} ms CPU")
    with_fetch = (best["fetch"] + best["decoded"]) / (best["fetch"] + best["unchecked"])
    print(
        f"decoded / unchecked: {best['decoded'] / best['unchecked']:.2f}x; with the fetch: {with_fetch:.2f}x"
    )
    if args.postgres:
        loaders = postgres_loaders(args.goals, args.repeat)
        for name, spent in loaders.items():
            print(f"PostgreSQL {name}: {spent * 1000:8.0f} ms CPU")
        tolerant, plain = loaders.values()
        print(f"tolerant / psycopg's loader: {tolerant / plain:.2f}x")


if __name__ == "__main__":
    main()
