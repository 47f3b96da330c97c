"""Benchmark: how much of a goal's wall time is governor itself, and how much is the agents.

Run: ``.venv/bin/python -m bench.overhead [--items 50] [--agent-delay 0 0.5]``

Method (figures go to docs/performance.md):
    A goal of ``--items`` work items (one plan, then a milestone that completes it) runs
    in-process on a real SQLite file with the scripted harness — every agent call is a real
    subprocess. Each harness call is timed where it starts and ends the subprocess; the rest
    of the wall time (the graph, the store appends with fsync, the folds, the decisions,
    prompt rendering) is governor. The same goal runs once per ``--agent-delay`` (how long a
    scripted agent works before answering), in one process, side by side.

    The LangGraph share: each goal also runs driven by the plain loop the graph's nodes
    wrap (``governor.drive.act.follow`` on the same runner: decide, route, act), and
    ``--repeat`` times each, interleaved; governor's per-call time of the two drivers,
    median and spread, and their difference, which is what LangGraph adds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from governor.core.classify import SpawnResult
from governor.core.decision import Decision
from governor.core.event_fields import Profile
from governor.drive import goals
from governor.drive.act import follow
from governor.drive.runner import Runner, RunnerSettings
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


def _follow(runner: Runner) -> Decision:
    """Drive like the graph, without it: the loop its nodes wrap."""
    runner.acquire()
    try:
        follow(runner, runner.settle, max_steps=10_000)
        return runner.decide(with_ledger=True)
    finally:
        runner.release()


def measure(items: int, delay_s: float, *, graph: bool = True) -> dict[str, float]:
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
    runner = goals.runner(store, "bench", settings, harnesses=timed)
    decision = run(runner).decision if graph else _follow(runner)
    wall = time.perf_counter() - start
    assert decision.status == "succeeded", decision
    store.close()
    return {
        "wall_s": wall,
        "agent_s": timed.agent_s,
        "calls": timed.calls,
        "governor_s": wall - timed.agent_s,
        "share": (wall - timed.agent_s) / wall,
    }


def _ms(values: list[float]) -> str:
    values = sorted(values)
    return f"{statistics.median(values):5.2f} ms ({values[0]:.2f} to {values[-1]:.2f})"


def langgraph_share(items: int, repeat: int) -> None:
    """Governor's time per agent call with the graph and with the plain loop, interleaved."""
    per_call: dict[str, list[float]] = {"graph": [], "loop": []}
    for _ in range(repeat):
        for name, times in per_call.items():
            m = measure(items, 0.0, graph=name == "graph")
            times.append(m["governor_s"] / m["calls"] * 1000)
    graph, loop = per_call["graph"], per_call["loop"]
    added = [g - loop_ms for g, loop_ms in zip(graph, loop, strict=True)]
    share = statistics.median(added) / statistics.median(graph) * 100
    print(f"LangGraph's share of governor's time per agent call ({repeat} runs each, delay 0):")
    print(f"  graph {_ms(graph)}   plain loop {_ms(loop)}")
    print(f"  added by LangGraph {_ms(added)} = {share:.0f}% of governor's time per call")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--agent-delay", type=float, nargs="+", default=[0.0, 0.2, 0.5])
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of each driver (LangGraph share)"
    )
    parser.add_argument("--no-langgraph-share", action="store_true")
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
    if not args.no_langgraph_share:
        langgraph_share(args.items, args.repeat)


if __name__ == "__main__":
    main()
