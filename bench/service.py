"""Benchmark: the service — goals completed per minute by 1, 2 and 4 workers, and the
latency of ``service status`` / ``list`` with 100,000 goals in the store.

Run: ``.venv/bin/python -m bench.service [--workers 1 2 4] [--goals-per-worker 20]
[--delay 0.2] [--list-goals 100000] [--store URL | --postgres]``

Method (figures go to docs/performance.md):
    1. Throughput. For each worker count N, in one run and on one store: create
       ``--goals-per-worker`` times N goals whose scripted agents sleep ``--delay`` seconds per
       call (a plan of one item, the item, then a milestone plan that completes: three
       calls, all I/O-bound like real agents), start ``governor serve --workers N`` as a
       subprocess, and wait until every goal has stopped. The rate is the goals over the
       span from the batch's first recorded step to its last event (the spawn of the
       worker processes is left out, and reported apart as the wall time).
    2. Latency with ``--list-goals`` goals: goal rows (1 % active) are bulk-inserted
       (SQLite: straight into the tables in one transaction; another backend: through
       ``append``, eight threads), then each query runs ``--repeat`` times, median kept:
       the library calls and the real commands (a new Python process each, output to
       /dev/null).
    SQLite by default (a temporary file, ``synchronous=FULL``); ``--store URL`` measures
    any store, ``--postgres`` a throw-away PostgreSQL server with default durability
    (started by the test suite's helpers; the server binaries must be installed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from governor.core import record
from governor.core.event_fields import Profile
from governor.core.summary import ACTIVE_STATUSES
from governor.drive import goals
from governor.service.status import service_status
from governor.store import EventStore, GoalSummary, open_store
from governor.store.rows import to_rows
from governor.store.sqlite import SqliteEventStore
from governor.store.sqlite_driver import us as _us

GOVERNOR = shutil.which("governor", path=str(Path(sys.executable).parent)) or "governor"


def scenario(delay_s: float) -> dict[str, Any]:
    step = {"delay_s": delay_s}
    item = {"key": "a", "title": "a", "objective": "do a", "acceptance": ["a works"]}
    return {"scripts": [
        {"name": "planner", "match": "role: planner", "steps": [
            {**step, "reply": {"decision": "apply", "rationale": "r", "work": [item]}},
            {**step, "reply": {"decision": "complete", "rationale": "done"}}]},
        {"name": "worker", "match": "role: worker", "steps": [
            {**step, "effects": True, "reply": {"status": "done", "summary": "did a",
             "acceptance": [{"criterion": "a works", "status": "satisfied"}]}}]},
    ]}  # fmt: skip


def create_batch(
    store: EventStore, folder: Path, prefix: str, n: int, pools: list[str] | None = None
) -> list[str]:
    profile = {"harness": "scripted", "args": ["scenario.json"], "max_attempts": 1, "timeout_s": 60}
    ids = []
    for i in range(n):
        goal_id = f"{prefix}-{i:04d}"
        spec = {"id": goal_id, "title": goal_id, "objective": "Do it.", "acceptance": ["done"],
                "planner": "p", "worker": "p", "profiles": {"p": profile}}  # fmt: skip
        if pools:  # the goals of one pool (bench.pools)
            spec["pools"] = pools
        path = folder / f"{goal_id}.json"
        path.write_text(json.dumps(spec))
        goals.create(store, path)
        ids.append(goal_id)
    return ids


def throughput(
    url: str,
    folder: Path,
    workers: int,
    n: int,
    *,
    pools: list[str] | None = None,
    prefix: str | None = None,
) -> dict[str, float]:
    """Serve one batch of ``n`` goals (in ``pools``) with ``workers`` workers; its rate and
    wall time."""
    prefix = prefix or f"w{workers}"
    with closing(open_store(url)) as store:
        ids = create_batch(store, folder, prefix, n, pools)
    env = {**os.environ, "GOVERNOR_STORE": url}
    started = time.perf_counter()
    serve = subprocess.Popen(
        [GOVERNOR, "serve", "--workers", str(workers), "--poll-s", "0.05",
         "--log-file", str(folder / f"serve-{prefix}.jsonl")],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with closing(open_store(url)) as store:
            while any(store.goal_counts().get(s) for s in ACTIVE_STATUSES):
                time.sleep(0.05)
            wall = time.perf_counter() - started
            first, last = span(store, ids)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=120)
    per_min = n / (last - first).total_seconds() * 60
    return {"workers": workers, "goals": n, "per_min": per_min, "span_s": (last - first).total_seconds(), "wall_s": wall}  # fmt: skip


def span(store: EventStore, ids: list[str]) -> tuple[datetime, datetime]:
    """From the batch's first step (its first event after ``goal.created``) to its last event."""
    firsts, lasts = [], []
    for goal_id in ids:
        events = list(store.load(goal_id))
        firsts.append(events[1].at)
        lasts.append(events[-1].at)
    return min(firsts), max(lasts)


def goal_rows(n: int, now: datetime) -> Iterator[tuple[str, list[Any], GoalSummary]]:
    """``n`` goals, 1 % active (half ready, half waiting an hour), the rest ended."""
    profiles = {"p": Profile(harness="scripted")}
    for i in range(n):
        goal_id = f"bulk-{i:06d}"
        events = record.create_goal(goal_id, title=goal_id, objective="x", acceptance=[],
                                    profiles=profiles, planner="p", worker="p", at=now)  # fmt: skip
        status = ("ready", "waiting")[i % 2] if i % 100 == 0 else ("succeeded", "blocked", "budget_exhausted")[i % 3]  # fmt: skip
        not_before = now + timedelta(hours=1) if status == "waiting" else None
        yield (
            goal_id,
            events,
            GoalSummary(goal_id, goal_id, 1, status, "none", None, not_before, now),
        )


def bulk_insert(store: EventStore, n: int, now: datetime) -> None:
    if isinstance(store, SqliteEventStore):
        with closing(sqlite3.connect(store.path)) as raw, raw:
            for goal_id, events, s in goal_rows(n, now):
                (row,) = to_rows(goal_id, events, 0)
                raw.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
                            (goal_id, 1, row.type, _us(row.at), row.body, row.crc))  # fmt: skip
                raw.execute("INSERT INTO goals (goal_id, title, seq, status, next_action, blocked_on, not_before_us, updated_at_us, due_us) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (goal_id, s.title, 1, s.status, s.next_action, None,
                             _us(s.not_before) if s.not_before else None, _us(now), _us(s.due_at)))  # fmt: skip
        return
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda r: store.append(r[0], r[1], expected_seq=0, summary=r[2]), goal_rows(n, now)))  # fmt: skip


def median_ms(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def command(url: str, *args: str) -> Callable[[], object]:
    env = {**os.environ, "GOVERNOR_STORE": url}
    return lambda: subprocess.run([GOVERNOR, *args], env=env, stdout=subprocess.DEVNULL, check=True)


def latency(url: str, n: int, repeat: int) -> dict[str, float]:
    now = datetime.now(UTC)
    with closing(open_store(url)) as store:
        start = time.perf_counter()
        bulk_insert(store, n, now)
        inserted_s = time.perf_counter() - start
        results = {
            "insert_s": inserted_s,
            "goal_counts": median_ms(store.goal_counts, repeat),
            "service_status (library)": median_ms(lambda: service_status(store, now), repeat),
            "due(limit=100)": median_ms(lambda: store.due(now, limit=100), repeat),
            "goals(statuses=[ready])": median_ms(lambda: store.goals(statuses=["ready"]), repeat),
            "goals() (all)": median_ms(store.goals, repeat),
        }
    results["governor service status --json"] = median_ms(command(url, "service", "status", "--json"), repeat)  # fmt: skip
    results["governor list --status ready"] = median_ms(command(url, "list", "--status", "ready"), repeat)  # fmt: skip
    results["governor list (every goal)"] = median_ms(command(url, "list"), repeat)
    results["governor --version (Python start)"] = median_ms(command(url, "--version"), repeat)
    return results


@contextmanager
def store_url(args: argparse.Namespace, folder: Path) -> Iterator[str]:
    if args.store:
        yield args.store
    elif args.postgres:
        from tests.store.postgres_server import find_bindir, throwaway_server  # noqa: PLC0415

        bindir = find_bindir()
        if bindir is None:
            raise SystemExit("--postgres needs the PostgreSQL server binaries (initdb, pg_ctl)")
        with throwaway_server(bindir, durable=True) as server:
            yield server.create_database("bench")
    else:
        yield f"sqlite:///{folder / 'governor.db'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--goals-per-worker", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds each agent call sleeps")
    parser.add_argument("--list-goals", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--store", metavar="URL", help="measure this store (it should be empty)")
    parser.add_argument("--postgres", action="store_true", help="a throw-away PostgreSQL server")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-service-") as tmp:
        folder = Path(tmp)
        (folder / "scenario.json").write_text(json.dumps(scenario(args.delay)))
        with store_url(args, folder) as url:
            print(
                f"store: {url.split('@')[-1]}   agents sleep {args.delay}s per call, 3 calls per goal"
            )
            rates = [throughput(url, folder, n, n * args.goals_per_worker) for n in args.workers]
            base = rates[0]["per_min"]
            for r in rates:
                print(f"  {r['workers']} worker(s): {r['goals']:>4} goals in {r['span_s']:6.1f}s "
                      f"= {r['per_min']:6.1f} goals/min ({r['per_min'] / base:.2f}x), wall {r['wall_s']:.1f}s")  # fmt: skip
            if args.list_goals:
                print(f"latency with {args.list_goals:,} more goals in the store (median of {args.repeat}):")  # fmt: skip
                for name, value in latency(url, args.list_goals, args.repeat).items():
                    unit = "s" if name.endswith("_s") else "ms"
                    print(f"  {name:<36} {value:9.1f} {unit}")


if __name__ == "__main__":
    main()
