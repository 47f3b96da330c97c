"""Benchmark: a whole goal of real-CLI calls with governor's relay and without it, side by side.

Run: ``.venv/bin/python -m bench.relay_goal [--items 48] [--rounds 3] [--parallel 1]``

Method (figures go to docs/performance.md, "The relay"):
    One loopback fake vendor (``tests.fakevendor.server.FakeVendor``, OpenAI Responses
    dialect) answers every model request at once, by what its prompt asks: the planner's
    first request a plan of ``--items`` items, a worker's request "done", the planner's
    milestone request "complete". The goal (a planner and a worker, both the real codex CLI
    from ``.cache/npm``) is therefore ``--items + 2`` real-CLI calls, each one process of
    codex and at least one model request. Each round runs the same goal twice, in a fresh
    project folder and store each time, through the real ``governor run GOAL --max-wait 0``:
    once with the profiles' default (through the relay), once with ``relay = false``; the
    order alternates between rounds so a busy neighbour disturbs both alike. Each run must
    finish ``succeeded`` with exactly ``--items + 2`` model requests at the vendor.

    Printed: each run's wall seconds, the median per mode, the median of the rounds'
    ratios (relay / direct; target ≤ 1.05, issue 32) and the machine's load average before
    and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.e2e.cli import COMPLETE, Project, done, plan
from tests.fakevendor.clis import codex_env, find_cli
from tests.fakevendor.scenario import Step
from tests.fakevendor.server import FakeVendor, RecordedRequest


def _answer(items: int) -> Any:
    keys = [f"i{n}" for n in range(items)]

    def answer(request: RecordedRequest) -> Step:
        text = json.dumps(request.body)
        if "role: worker" in text:
            key = next((k for k in keys if f"work_key: {k}" in text), keys[0])
            return Step("reply", text=json.dumps(done(key)))
        if "asked now: milestone" in text:
            return Step("reply", text=json.dumps(COMPLETE))
        return Step("reply", text=json.dumps(plan(*keys)))

    return answer


def run_goal(root: Path, cli: str, items: int, parallel: int, relay: bool) -> tuple[float, int]:
    """Wall seconds of ``governor run`` over the whole goal, and the model requests seen."""
    with FakeVendor() as fake:
        fake.respond(_answer(items))
        project = Project(root)
        project.env.update(codex_env(root / "home", fake.url, cli))
        codex: dict[str, Any] = {"harness": "codex", "env": ["FAKE_VENDOR_API_KEY"]}
        codex["timeout_s"] = 300
        if not relay:
            codex["relay"] = False
        project.goal(
            "g",
            codex,
            codex,
            max_parallel_work=parallel,
            max_work_items_per_plan=items,
            max_total_work_items=items,
        )
        start = time.perf_counter()
        result = project.gov("run", "g", "--max-wait", "0", timeout=3600)
        wall = time.perf_counter() - start
        requests = len(fake.model_requests)
    status = project.status("g")["status"]
    if status != "succeeded":
        sys.exit(f"the goal ended {status}: {result.stdout[-500:]} {result.stderr[-500:]}")
    return wall, requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=1)
    args = parser.parse_args()
    cli = find_cli("codex")
    if cli is None:
        sys.exit("codex is not installed: run ./dev test (it calls .ci/install-node-clis)")
    print(f"codex {cli}; {args.items + 2} calls per goal; load before {os.getloadavg()}")
    walls: dict[bool, list[float]] = {True: [], False: []}
    ratios: list[float] = []
    for round_no in range(args.rounds):
        order = (True, False) if round_no % 2 == 0 else (False, True)
        this: dict[bool, float] = {}
        for relay in order:
            with tempfile.TemporaryDirectory(prefix="relay-goal-") as folder:
                wall, requests = run_goal(Path(folder), cli, args.items, args.parallel, relay)
            if requests != args.items + 2:
                sys.exit(f"expected {args.items + 2} model requests, the vendor saw {requests}")
            this[relay] = wall
            walls[relay].append(wall)
            mode = "relay " if relay else "direct"
            print(f"round {round_no + 1} {mode}: {wall:7.2f} s  ({requests} model requests)")
        ratios.append(this[True] / this[False])
        print(f"round {round_no + 1} ratio relay/direct: {ratios[-1]:.3f}")
    print(
        f"median wall: relay {statistics.median(walls[True]):.2f} s, "
        f"direct {statistics.median(walls[False]):.2f} s; "
        f"median ratio {statistics.median(ratios):.3f} "
        f"(range {min(ratios):.3f}-{max(ratios):.3f}; target <= 1.05)"
    )
    print(f"load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
