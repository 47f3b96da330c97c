"""Benchmark: how much of a goal's wall time is governor itself, and how much is the agents.

Run: ``.venv/bin/python -m bench.overhead [--items 50] [--agent-delay 0 0.5]``

Method (figures go to docs/performance.md):
    A goal of ``--items`` work items (one plan, then a milestone that completes it) runs
    in-process on a real SQLite file with the scripted harness — every agent call is a real
    subprocess. Each harness call is timed where it starts and ends the subprocess; the rest
    of the wall time (the graph, the store appends with fsync, the folds, the decisions,
    prompt rendering) is governor. The same goal runs once per ``--agent-delay`` (how long a
    scripted agent works before answering), in one process, side by side.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from governor.core.classify import SpawnResult
from governor.core.events import Profile
from governor.drive import goals
from governor.drive.runner import RunnerSettings
from governor.exec.harness import Harness, harness_for
from governor.store.sqlite import SqliteEventStore


class TimedHarnesses:
    """A harness factory whose harnesses sum the time spent inside agent calls."""

    def __init__(self) -> None:
        self.agent_s = 0.0
        self.calls = 0

    def __call__(self, profile: Profile, base_dir: Path) -> Harness:
        inner = harness_for(profile, base_dir)
        outer = self

        class TimedHarness:
            name = inner.name

            def binary(self, p: Profile) -> str | None:
                return inner.binary(p)

            def run(
                self, prompt: str, p: Profile, *, cwd: Path, env: Mapping[str, str]
            ) -> SpawnResult:
                start = time.perf_counter()
                try:
                    return inner.run(prompt, p, cwd=cwd, env=env)
                finally:
                    outer.agent_s += time.perf_counter() - start
                    outer.calls += 1

        return TimedHarness()


def scenario(items: int, delay_s: float) -> dict[str, Any]:
    keys = [f"k{i}" for i in range(items)]
    work = [{"key": k, "title": k, "objective": k, "acceptance": [f"{k} works"]} for k in keys]
    workers = [
        {
            "name": k,
            "match": ["role: worker", f"work_key: {k}\n"],
            "steps": [
                {
                    "delay_s": delay_s,
                    "reply": {
                        "status": "done",
                        "summary": k,
                        "acceptance": [{"criterion": f"{k} works", "status": "satisfied"}],
                    },
                }
            ],
        }
        for k in keys
    ]
    planner = {
        "name": "planner",
        "match": "role: planner",
        "steps": [
            {"reply": {"decision": "apply", "rationale": "all", "work": work}},
            {"reply": {"decision": "complete", "rationale": "done"}},
        ],
    }
    return {"scripts": [planner, *workers]}


def measure(items: int, delay_s: float) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix="governor-overhead-"))
    (folder / "scenario.json").write_text(json.dumps(scenario(items, delay_s)))
    profile = {"harness": "scripted", "args": ["scenario.json"], "max_attempts": 1}
    goal = {
        "id": "bench",
        "title": "Overhead",
        "objective": "o",
        "acceptance": ["a"],
        "planner": "p",
        "worker": "p",
        "policy": {"max_work_items_per_plan": items, "max_total_work_items": items},
        "profiles": {"p": profile},
    }
    (folder / "goal.json").write_text(json.dumps(goal))
    store = SqliteEventStore(folder / "governor.db")
    goals.create(store, folder / "goal.json")
    settings = RunnerSettings(
        workdir=folder, env={"PATH": "/usr/bin:/bin"}, state_dir=folder / "state", max_wait_s=0
    )
    from governor.graph.build import run  # noqa: PLC0415 - imported (and timed) once in main

    timed = TimedHarnesses()
    start = time.perf_counter()
    report = run(goals.runner(store, "bench", settings, harnesses=timed))
    wall = time.perf_counter() - start
    assert report.decision.status == "succeeded", report.decision
    store.close()
    return {
        "wall_s": wall,
        "agent_s": timed.agent_s,
        "calls": timed.calls,
        "governor_s": wall - timed.agent_s,
        "share": (wall - timed.agent_s) / wall,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--agent-delay", type=float, nargs="+", default=[0.0, 0.2, 0.5])
    args = parser.parse_args(argv)
    start = time.perf_counter()
    import governor.graph.build  # noqa: F401, PLC0415 - start-up cost, paid once per process

    print(
        f"{args.items}-item goal, scripted harness, SQLite store (synchronous=FULL); "
        f"one-off import of the graph: {time.perf_counter() - start:.2f}s (not counted below)"
    )
    for delay in args.agent_delay:
        m = measure(args.items, delay)
        per_call = m["governor_s"] / m["calls"] * 1000
        print(
            f"  agent delay {delay:>4.1f}s: wall {m['wall_s']:6.2f}s, agents {m['agent_s']:6.2f}s "
            f"({m['calls']:.0f} calls), governor {m['governor_s']:5.2f}s = {m['share'] * 100:4.1f}% "
            f"of wall time ({per_call:.1f} ms per agent call)"
        )


if __name__ == "__main__":
    main()
