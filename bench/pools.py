"""Benchmark: what pools cost a call and a fleet (issue 33) — side by side, in one run.

Run: ``.venv/bin/python -m bench.pools [--calls 300] [--postgres [URL]] [--serve-goals 50]
[--serve-rounds 2] [--delay 0.2]``

Method (figures go to docs/performance.md, "Pools"):
    1. A call's appends. On one store, two goals; each call is what a runner writes for
       it: one append for its start, one for its finish (each with the summary after it,
       as the runner gives it). The goal without pools appends only that; the pooled goal
       appends the same with the call's reservation riding in the start's transaction
       and its settlement in the finish's (``EventStore.append``'s ``pools``: what the
       runner does). For reference, the way before issue 33's change: the same two
       appends plus the reservation and the settlement as transactions of their own
       (``drive.pools.reserve``/``settle``). The three kinds alternate call by call so the
       machine's noise falls on each alike; printed: the median milliseconds per call of
       each, and the reservation's cost per call (pooled minus bare, of the medians)
       against issue 33's target (<= 1 ms on SQLite). SQLite is a temporary file with
       ``synchronous=FULL``; ``--postgres`` a throw-away PostgreSQL server with default
       durability (the test suite's helpers; skipped, said in one line, without the
       server binaries), or ``--postgres URL`` an empty database of yours.
    2. ``serve --workers 4``: ``--serve-goals`` goals in one pool (a limit they never
       reach) against as many without, each batch served by a fresh ``governor serve
       --workers 4`` over one SQLite store (``bench.service``'s scripted goals: three
       calls that sleep ``--delay`` s), the batches interleaved ``--serve-rounds``
       times; printed: goals per minute of each (``bench.service``'s span: first step to
       last event) and the ratio pooled / unpooled (target >= 0.9x).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from governor.core.events import GoalResumed
from governor.core.fold import fold, project
from governor.core.pools import Figure, PoolLimits
from governor.core.summary import summarize
from governor.drive import pools
from governor.store import EventStore, open_store
from governor.store.pools import PoolWrite
from tests.store.streams import story

ASK = Figure(usd=0.01, attempts=1)
SPENT = Figure(usd=0.01, attempts=1, run_time_s=1.0)


class Goal:
    """One goal's stream as a runner keeps it: its view, and appends with the summary."""

    def __init__(self, store: EventStore, goal_id: str) -> None:
        self.store, self.goal_id = store, goal_id
        self.view = project(story(goal_id).events[:1])
        store.append(goal_id, story(goal_id).events[:1], expected_seq=0)

    def append(self, reason: str, along: PoolWrite | None = None) -> float:
        """Append one event (built and summarised first, untimed); the append's seconds."""
        at = datetime.now(UTC)
        event = GoalResumed(goal_id=self.goal_id, seq=self.view.seq + 1, at=at, reason=reason)
        expected = self.view.seq
        fold(self.view, [event])
        summary = summarize(self.view, at)
        start = time.perf_counter()
        if along is None:
            self.store.append(self.goal_id, [event], expected_seq=expected, summary=summary)
        else:
            self.store.append(
                self.goal_id, [event], expected_seq=expected, summary=summary, pools=along
            )
        return time.perf_counter() - start


def _bare(goal: Goal, call: str) -> float:
    return goal.append(f"{call} started") + goal.append(f"{call} finished")


def _along(goal: Goal, call: str) -> float:
    now = datetime.now(UTC)
    start = pools.reservation(["bench"], goal.goal_id, call, ASK, now=now)
    finish = pools.settlement(["bench"], goal.goal_id, call, SPENT, now=now)
    return goal.append(f"{call} started", start) + goal.append(f"{call} finished", finish)


def _apart(goal: Goal, call: str) -> float:
    now = datetime.now(UTC)
    begin = time.perf_counter()
    refused = pools.reserve(goal.store, ["bench"], goal.goal_id, call, ASK, now=now)
    assert refused is None, refused
    reserving = time.perf_counter() - begin
    appends = goal.append(f"{call} started") + goal.append(f"{call} finished")
    begin = time.perf_counter()
    pools.settle(goal.store, ["bench"], goal.goal_id, call, SPENT, now=now)
    return reserving + appends + time.perf_counter() - begin


KINDS: dict[str, Callable[[Goal, str], float]] = {
    "no pools (two appends)": _bare,
    "pooled, riding in the appends": _along,
    "pooled, apart (before issue 33)": _apart,
}


def per_call(url: str, calls: int) -> dict[str, list[float]]:
    """Milliseconds of each call of each kind, alternated call by call."""
    with closing(open_store(url)) as store:
        at = datetime.now(UTC) - timedelta(seconds=1)
        pools.set_pool(store, "bench", PoolLimits(usd=1e6), at=at, actor="bench", reason=None)
        goals = {name: Goal(store, f"g{i}") for i, name in enumerate(KINDS)}
        times: dict[str, list[float]] = {name: [] for name in KINDS}
        for i in range(calls):
            for name, kind in KINDS.items():
                times[name].append(kind(goals[name], f"c{i}-{len(times[name])}"))
        state = store.pool_state("bench")
        assert state is not None
        assert not state.in_flight
    return {name: [t * 1e3 for t in ts] for name, ts in times.items()}


def print_per_call(label: str, times: dict[str, list[float]], calls: int) -> None:
    """The median of each kind, and the reservation's cost per call: the difference of
    the medians, and the median of the differences of neighbouring calls (each pooled
    call against the bare call made just before it)."""
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    bare, along, apart = medians.values()
    bare_t, along_t, apart_t = times.values()
    print(f"{label}: median ms per call of {calls} (start + finish appends)")
    for name, value in medians.items():
        print(f"  {name:<34} {value:7.2f} ms  ({value / bare:.2f}x)")
    paired = statistics.median(a - b for a, b in zip(along_t, bare_t, strict=True))
    paired_apart = statistics.median(a - b for a, b in zip(apart_t, bare_t, strict=True))
    print(
        f"  the reservation's cost per call: {along - bare:+.2f} ms riding along, "
        f"{apart - bare:+.2f} ms apart (of the medians); {paired:+.2f} and "
        f"{paired_apart:+.2f} ms (median of neighbouring pairs); target <= 1 ms on SQLite"
    )


@contextmanager
def postgres(url: str | None) -> Iterator[str | None]:
    """A PostgreSQL URL: the one given, else a throw-away server's; None (said) when no
    server can be started here."""
    if url:
        yield url
        return
    from tests.store.postgres_server import find_bindir, throwaway_server  # noqa: PLC0415

    bindir = find_bindir()
    if bindir is None:
        print("PostgreSQL: skipped (no initdb/pg_ctl installed; apt-get install postgresql)")
        yield None
        return
    with throwaway_server(bindir, durable=True) as server:
        yield server.create_database("bench")


def serve(folder: Path, goals_n: int, rounds: int, workers: int) -> None:
    """``serve --workers N`` on goals in one pool against goals in none, interleaved."""
    from bench.service import throughput  # noqa: PLC0415 - the service bench's own

    url = f"sqlite:///{folder / 'serve.db'}"
    with closing(open_store(url)) as store:
        at = datetime.now(UTC)
        pools.set_pool(store, "fleet", PoolLimits(usd=1e6), at=at, actor="bench", reason=None)
    rates: dict[str, list[float]] = {"no pools": [], "one pool": []}
    for r in range(rounds):
        for name, named in (("no pools", None), ("one pool", ["fleet"])):
            result = throughput(url, folder, workers, goals_n, pools=named, prefix=f"{name[:2]}{r}")
            rates[name].append(result["per_min"])
            print(f"  round {r + 1}, {name:<8}: {result['per_min']:6.1f} goals/min "
                  f"({goals_n} goals in {result['span_s']:.1f}s)")  # fmt: skip
    bare, pooled = (statistics.median(v) for v in rates.values())
    print(f"serve --workers {workers}, {goals_n} goals: median {bare:.1f} goals/min without "
          f"pools, {pooled:.1f} in one pool: {pooled / bare:.2f}x (target >= 0.9x)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument(
        "--postgres", nargs="?", const="", default=None, metavar="URL",
        help="also on PostgreSQL: a throw-away server, or the (empty) database at URL",
    )  # fmt: skip
    parser.add_argument("--serve-goals", type=int, default=50, help="0: skip the serve part")
    parser.add_argument("--serve-rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds each agent call sleeps")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-pools-") as tmp:
        folder = Path(tmp)
        print_per_call(
            "SQLite", per_call(f"sqlite:///{folder / 'calls.db'}", args.calls), args.calls
        )
        if args.postgres is not None:
            with postgres(args.postgres or None) as url:
                if url is not None:
                    print_per_call("PostgreSQL", per_call(url, args.calls), args.calls)
        if args.serve_goals:
            from bench.service import scenario  # noqa: PLC0415

            (folder / "scenario.json").write_text(json.dumps(scenario(args.delay)))
            serve(folder, args.serve_goals, args.serve_rounds, args.workers)


if __name__ == "__main__":
    main()
