"""Benchmark: the event store — appends, loads, and ``due`` / ``goals`` at scale.

Run: ``.venv/bin/python -m bench.store [--events 200000] [--appends 2000] [--goals 100000]
[--postgres]``

SQLite by default (real files). ``--postgres`` measures the PostgreSQL store instead, on
a throw-away server this run starts on the local disk with PostgreSQL's default
durability (fsync on, ``synchronous_commit=on``) — the test suite's helpers
(``tests/store/postgres_server.py``) start it, so the server binaries must be installed.
Each section gets a fresh database; the client reaches the server over TCP on 127.0.0.1.

Method (the figures go to docs/store.md and docs/performance.md):
    1. Generate a valid history of about N events (``bench/history_gen``), decode it once.
    2. Appends (SQLite: a real file with ``synchronous=FULL``):
         bulk       the whole history in one ``append`` (what ``import`` does)
         single     ``--appends`` appends of one event each, each its own transaction
         fenced     the same under a lease (the fencing check inside the transaction)
    3. Loads of the whole stream, interleaved ``--repeat`` times, best time kept:
         bare       fetch the rows and ``orjson.loads`` each body (the floor)
         load       ``store.load`` drained (checksum + validation of every row)
       (``bench/trusted_read.py`` measures the trusted read path that was not kept.)
    4. ``due`` and ``goals(statuses=…)`` latency over ``--goals`` summaries, 1 % active.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from itertools import count
from pathlib import Path
from typing import Any, Protocol

import orjson
import psycopg

from bench.history_gen import events as generate
from governor.core.events import Event, GoalResumed
from governor.core.fold import project
from governor.core.summary import summarize
from governor.core.wire.codec import decode
from governor.store.engine import BaseEventStore
from governor.store.postgres import PostgresEventStore
from governor.store.sqlite import SqliteEventStore
from tests.store.postgres_server import PostgresServer, find_bindir, throwaway_server

T0 = datetime(2026, 1, 1, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Store = BaseEventStore[Any]


class Target(Protocol):
    """Where the stores live; ``bare`` and ``fill`` go behind the store's back."""

    def open(self, name: str) -> Store: ...

    def bare(self, store: Store, goal_id: str) -> Iterator[bytes]: ...

    def fill(self, store: Store, rows: list[tuple[str, str, datetime]]) -> None: ...


class SqliteTarget:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def open(self, name: str) -> Store:
        return SqliteEventStore(self.folder / f"{name}.db")

    def bare(self, store: Store, goal_id: str) -> Iterator[bytes]:
        assert isinstance(store, SqliteEventStore)
        query = "SELECT body FROM events WHERE goal_id = ? ORDER BY seq"
        with closing(sqlite3.connect(store.path)) as raw:
            for (body,) in raw.execute(query, (goal_id,)):
                yield body

    def fill(self, store: Store, rows: list[tuple[str, str, datetime]]) -> None:
        values = []
        for goal_id, status, at in rows:
            us = (at - EPOCH) // timedelta(microseconds=1)
            values.append((goal_id, "t", 1, status, "none", None, us, us, us))
        with store._write("bench") as tx:
            tx.executemany(
                "INSERT INTO goals (goal_id, title, seq, status, next_action, blocked_on, not_before_us, updated_at_us, due_us) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )


class PostgresTarget:
    def __init__(self, server: PostgresServer) -> None:
        self.server = server
        self.names = count()

    def open(self, name: str) -> Store:
        return PostgresEventStore(self.server.create_database(f"bench_{name}_{next(self.names)}"))

    def bare(self, store: Store, goal_id: str) -> Iterator[bytes]:
        assert isinstance(store, PostgresEventStore)
        query = "SELECT body FROM events WHERE goal_id = %s ORDER BY seq"
        with psycopg.connect(store.url) as raw:
            for (body,) in raw.execute(query, (goal_id,)):
                yield body

    def fill(self, store: Store, rows: list[tuple[str, str, datetime]]) -> None:
        assert isinstance(store, PostgresEventStore)
        with (
            psycopg.connect(store.url) as raw,
            raw.cursor().copy(
                "COPY goals (goal_id, title, seq, status, next_action, not_before, updated_at, due_at) "
                "FROM STDIN"
            ) as copy,
        ):
            for goal_id, status, at in rows:
                copy.write_row((goal_id, "t", 1, status, "none", at, at, at))
        with psycopg.connect(store.url, autocommit=True) as raw:
            raw.execute("ANALYZE goals")  # as autovacuum would after a bulk load


def history(n: int) -> list[Event]:
    return [decode(orjson.dumps(raw)) for raw in generate(n)]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def appends(target: Target, events: list[Event], singles: int) -> dict[str, float]:
    store = target.open("appends")
    whole = summarize(project(events), T0)
    bulk = timed(lambda: store.append("bench", events, expected_seq=0, summary=whole))
    for goal_id in ("one", "two"):
        store.append(goal_id, [events[0].model_copy(update={"goal_id": goal_id})], expected_seq=0)
    lease = store.acquire_lease("two", "bench", ttl_s=600)

    def one_by_one(goal_id: str, first: int, count: int, fenced: bool) -> None:
        # A runner passes the summary it computed from its view; a fixed one costs nothing.
        row = replace(whole, goal_id=goal_id)
        for seq in range(first, first + count):
            event = GoalResumed(goal_id=goal_id, seq=seq, at=T0, reason="bench")
            store.append(
                goal_id,
                [event],
                expected_seq=seq - 1,
                lease=lease if fenced else None,
                summary=replace(row, seq=seq),
            )

    single = fenced = 0.0
    chunk = 50  # alternate the two kinds in chunks, so disk noise falls on both alike
    for first in range(2, singles + 2, chunk):
        single += timed(partial(one_by_one, "one", first, chunk, False))
        fenced += timed(partial(one_by_one, "two", first, chunk, True))
    singles = len(range(2, singles + 2, chunk)) * chunk
    store.close()
    return {
        "bulk (events/s)": len(events) / bulk,
        "single (appends/s)": singles / single,
        "fenced (appends/s)": singles / fenced,
    }


def loads(target: Target, events: list[Event], repeat: int) -> dict[str, float]:
    store = target.open("loads")
    store.append("bench", events, expected_seq=0)

    def bare() -> None:
        for body in target.bare(store, "bench"):
            orjson.loads(body)

    def drain() -> None:
        for _event in store.load("bench"):
            pass

    passes = {"bare": bare, "store": drain}
    best = dict.fromkeys(passes, float("inf"))
    for _ in range(repeat):
        for name, fn in passes.items():
            best[name] = min(best[name], timed(fn))
    assert list(store.load("bench")) == events
    store.close()
    return {f"load {name} (events/s)": len(events) / t for name, t in best.items()}


def scheduling(target: Target, goals: int) -> dict[str, float]:
    store = target.open("goals")
    statuses = ["succeeded", "blocked", "cancelled", "budget_exhausted"] * 25
    statuses[:1] = ["ready"]
    rows = []
    for i in range(goals):
        status = statuses[i % 100] if i % 200 else "waiting"
        rows.append((f"g{i:06d}", status, EPOCH + timedelta(seconds=i)))
    target.fill(store, rows)  # bulk-load summaries directly: only queries are timed
    now = T0 + timedelta(seconds=goals // 2)
    due = min(timed(lambda: store.due(now, limit=100)) for _ in range(20))
    ready = min(timed(lambda: store.goals(statuses=["ready"])) for _ in range(5))
    every = timed(store.goals)
    store.close()
    return {
        f"due(limit=100) over {goals:,} goals (ms)": due * 1000,
        f"goals(statuses=[ready]) over {goals:,} goals (ms)": ready * 1000,
        f"goals() over {goals:,} goals (ms)": every * 1000,
    }


@contextmanager
def target_for(postgres: bool) -> Iterator[Target]:
    if not postgres:
        with tempfile.TemporaryDirectory(dir=Path(__file__).parent) as tmp:
            yield SqliteTarget(Path(tmp))
        return
    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("--postgres needs the PostgreSQL server binaries (initdb, pg_ctl)")
    with throwaway_server(bindir, durable=True) as server:
        yield PostgresTarget(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--appends", type=int, default=2_000)
    parser.add_argument("--goals", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", action="store_true", help="measure the PostgreSQL store")
    args = parser.parse_args()
    events = history(args.events)
    with target_for(args.postgres) as target:
        figures = {
            **appends(target, events, args.appends),
            **loads(target, events, args.repeat),
            **scheduling(target, args.goals),
        }
    print(f"{len(events):,} events")
    for name, value in figures.items():
        print(f"{name:48s} {value:>14,.1f}")
    ratio = figures["load store (events/s)"] / figures["load bare (events/s)"]
    print(f"load store / bare: {ratio:.2f}")


if __name__ == "__main__":
    main()
