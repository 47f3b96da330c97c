"""Benchmark: the SQLite event store — appends, loads, and ``due`` / ``goals`` at scale.

Run: ``.venv/bin/python -m bench.store [--events 200000] [--appends 2000] [--goals 100000]``

Method (the figures go to docs/store.md and docs/performance.md):
    1. Generate a valid history of about N events (``bench/history_gen``), decode it once.
    2. Appends, on a real file with ``synchronous=FULL``:
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
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import orjson

from bench.history_gen import events as generate
from governor.core.codec import decode
from governor.core.events import Event, GoalResumed
from governor.core.view import project
from governor.store.base import summarize
from governor.store.sqlite import SqliteEventStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def history(n: int) -> list[Event]:
    return [decode(orjson.dumps(raw)) for raw in generate(n)]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def appends(folder: Path, events: list[Event], singles: int) -> dict[str, float]:
    store = SqliteEventStore(folder / "appends.db")
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


def loads(folder: Path, events: list[Event], repeat: int) -> dict[str, float]:
    path = folder / "loads.db"
    store = SqliteEventStore(path)
    store.append("bench", events, expected_seq=0)
    raw = sqlite3.connect(path)

    def bare() -> None:
        query = "SELECT seq, body FROM events WHERE goal_id = 'bench' ORDER BY seq"
        for _seq, body in raw.execute(query):
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


def scheduling(folder: Path, goals: int) -> dict[str, float]:
    store = SqliteEventStore(folder / "goals.db")
    statuses = ["succeeded", "blocked", "cancelled", "budget_exhausted"] * 25
    statuses[:1] = ["ready"]
    rows = []
    for i in range(goals):
        status = statuses[i % 100] if i % 200 else "waiting"
        at_us = i * 1_000_000
        rows.append((f"g{i:06d}", "t", 1, status, "none", None, at_us, at_us, at_us))
    with store._write("bench") as tx:  # bulk-load summaries directly: only queries are timed
        tx.executemany("INSERT INTO goals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--appends", type=int, default=2_000)
    parser.add_argument("--goals", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    events = history(args.events)
    with tempfile.TemporaryDirectory(dir=Path(__file__).parent) as tmp:
        folder = Path(tmp)
        figures = {
            **appends(folder, events, args.appends),
            **loads(folder, events, args.repeat),
            **scheduling(folder, args.goals),
        }
    print(f"{len(events):,} events")
    for name, value in figures.items():
        print(f"{name:48s} {value:>14,.1f}")
    ratio = figures["load store (events/s)"] / figures["load bare (events/s)"]
    print(f"load store / bare: {ratio:.2f}")


if __name__ == "__main__":
    main()
