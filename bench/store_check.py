"""Benchmark: ``governor store check`` on a store of many goals, beside what it costs to
read that store otherwise.

Run: ``.venv/bin/python -m bench.store_check [--goals 10000] [--repeat 3] [--postgres]``

Method (the figures go to docs/performance.md and docs/store.md):
    1. Simulate ``--goals`` goal histories (``governor.analysis.simulate``: plans, items,
       charged and uncharged failures, every ending) and store each as ``import`` does
       (one transaction, the summary at its last event) in a real SQLite file — or, with
       ``--postgres``, in a throw-away PostgreSQL server with its default durability
       (``tests/store/postgres_server.py`` starts it).
    2. Measured side by side, interleaved ``--repeat`` times, the best time of each kept:
         list       ``store.goals()``: what ``governor list`` reads (it trusts the summaries)
         load all   ``store.load`` drained for every goal (checksums and validation of
                    every event: the floor of any check that reads every stream)
         check      ``store.check()`` drained: every stream read and folded, its chain
                    and seq checked, its summary compared, every other row decoded
    3. Printed: each time, events and goals per second, and the ratios check / load all
       and check / list.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from governor.analysis.model import Model
from governor.analysis.simulate import simulate
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.summary import summarize
from governor.store.engine import BaseEventStore
from governor.store.postgres import PostgresEventStore
from governor.store.sqlite import SqliteEventStore
from tests.store.postgres_server import find_bindir, throwaway_server


def fill(store: BaseEventStore[Any], goals: int) -> int:
    """Store ``goals`` simulated histories; how many events."""
    total = 0
    for history in simulate(Model(), Policy(), goals=goals, seed=1):
        view = project(history)
        assert view.last_at is not None
        summary = summarize(view, view.last_at)
        store.append(history[0].goal_id, history, expected_seq=0, summary=summary)
        total += len(history)
    return total


def best(runs: dict[str, list[float]], name: str, work: Callable[[], object]) -> None:
    start = time.perf_counter()
    work()
    runs.setdefault(name, []).append(time.perf_counter() - start)


@contextmanager
def opened(postgres: bool) -> Iterator[BaseEventStore[Any]]:
    if not postgres:
        with tempfile.TemporaryDirectory(prefix="bench-check-") as folder:
            filling = SqliteEventStore(Path(folder) / "check.db")
            try:  # filling only: a commit need not wait for the disk (the store's is FULL)
                filling._connection().execute("PRAGMA synchronous = OFF")
                yield filling
            finally:
                filling.close()
        return
    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("--postgres: the PostgreSQL server binaries are not installed")
    with throwaway_server(bindir, durable=True) as server:
        store = PostgresEventStore(server.create_database("bench_check"))
        try:
            yield store
        finally:
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    with opened(args.postgres) as store:
        started = time.perf_counter()
        events = fill(store, args.goals)
        print(
            f"{'PostgreSQL' if args.postgres else 'SQLite'}: {args.goals:,} goals, "
            f"{events:,} events (stored in {time.perf_counter() - started:.1f} s)"
        )
        ids = [s.goal_id for s in store.goals()]
        runs: dict[str, list[float]] = {}
        found: list[object] = []
        for _ in range(args.repeat):
            best(runs, "list", store.goals)
            best(runs, "load all", lambda: [list(store.load(g)) for g in ids])
            best(runs, "check", lambda: found.extend(store.check()))
            assert found == [], found[:3]
    times = {name: min(spent) for name, spent in runs.items()}
    for name, spent in times.items():
        print(
            f"{name:>9}: {spent:8.3f} s  {events / spent:>12,.0f} events/s  "
            f"{args.goals / spent:>10,.0f} goals/s"
        )
    print(
        f"check / load all: {times['check'] / times['load all']:.2f}x   "
        f"check / list: {times['check'] / times['list']:,.0f}x"
    )


if __name__ == "__main__":
    main()
