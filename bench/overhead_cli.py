"""Benchmark: governor's overhead per attempt, from outside the process (issue 26).

Run: ``.venv/bin/python -m bench.overhead_cli [--items 50] [--delay 0.2] [--repeat 3]``

Method (the figures go to docs/performance.md, "Issue 26 targets"):
    In a fresh folder, a goal of ``--items`` work items whose planner and worker are
    ``command`` agents: shell scripts that read the prompt, sleep ``--delay`` seconds and
    print their reply (the planner applies one plan of every item, then says complete).
    Each round, interleaved:
      governor   ``governor new goal.toml`` (not timed), then ``governor --store … run
                 GOAL --quiet`` as a real process, timed whole (start-up included);
      shell      the same scripts, as many calls, in a ``sh`` loop (each call reading a
                 prompt file on stdin, output to /dev/null), timed whole.
    Overhead per attempt = (governor wall - shell wall) / calls; its share of the
    governor run's wall time. Median and spread over ``--repeat`` rounds; CPU of the
    governor process (its own, without the agents' is not separable here) for reference.
    Then ``governor run GOAL`` again on the goal, now stopped: the fixed cost of a run
    (start-up, store, one decision), and the overhead per attempt without it:
    (governor wall - shell wall - stopped-run wall) / calls. Also ``governor status
    GOAL`` (the start-up of a read command) for scale.
    ``--against TREE`` (a source tree holding ``governor/``, e.g. ``git archive main``
    unpacked): each round also runs a fresh goal with TREE first on ``PYTHONPATH``,
    before or after this tree's run in turn, so a busy neighbour disturbs both alike;
    prints TREE's overhead per attempt and the per-round difference (this tree - TREE).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLANNER = """#!/bin/sh
cat > /dev/null
sleep {delay}
state="$(dirname "$0")/planner.state"
if [ -e "$state" ]; then
  echo '{{"decision": "complete", "rationale": "done"}}'
else
  : > "$state"
  cat "$(dirname "$0")/plan.json"
fi
"""

WORKER = """#!/bin/sh
cat > /dev/null
sleep {delay}
echo '{{"status": "done", "summary": "did it"}}'
"""

GOAL = """\
id = "{goal}"
title = "Overhead from outside"
objective = "o"
acceptance = []
planner = "planner"
worker = "worker"

[policy]
max_work_items_per_plan = {items}
max_total_work_items = {items}

[profiles.planner]
harness = "command"
args = ["./planner.sh"]

[profiles.worker]
harness = "command"
args = ["./worker.sh"]
"""

LOOP = """
rm -f ./planner.state
./planner.sh < prompt.txt > /dev/null
i=0
while [ $i -lt {items} ]; do ./worker.sh < prompt.txt > /dev/null; i=$((i + 1)); done
./planner.sh < prompt.txt > /dev/null
"""


def setup(folder: Path, items: int, delay: float) -> None:
    work = ",".join(
        f'{{"key": "k{i}", "title": "k{i}", "objective": "k{i}"}}' for i in range(items)
    )
    (folder / "plan.json").write_text(
        f'{{"decision": "apply", "rationale": "all", "work": [{work}]}}\n'
    )
    for name, text in (("planner.sh", PLANNER), ("worker.sh", WORKER)):
        (folder / name).write_text(text.format(delay=delay))
        (folder / name).chmod(0o755)
    (folder / "prompt.txt").write_text("role: worker\n" + "x" * 4000 + "\n")


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    start = time.perf_counter()
    before = os.times()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, check=True, env=env)
    after = os.times()
    return time.perf_counter() - start, (
        after.children_user + after.children_system - before.children_user - before.children_system
    )


def _spread(values: list[float], unit: str) -> str:
    v = sorted(values)
    return f"median {statistics.median(v):.2f}{unit} (spread {v[0]:.2f} to {v[-1]:.2f})"


def fresh_run(
    exe: str, store: list[str], folder: Path, goal: str, items: int, *, env: dict[str, str] | None
) -> tuple[float, float]:
    """A new goal, then ``governor run`` of it timed whole: wall and CPU seconds."""
    (folder / "goal.toml").write_text(GOAL.format(goal=goal, items=items))
    (folder / "planner.state").unlink(missing_ok=True)
    subprocess.run(
        [exe, *store, "new", "goal.toml"], cwd=folder, check=True, stdout=subprocess.DEVNULL
    )
    return timed([exe, *store, "run", goal, "--quiet"], folder, env)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="another source tree, run in turn")
    args = parser.parse_args(argv)
    exe = str(Path(sys.executable).parent / "governor")
    calls = args.items + 2
    gov_ms, share, runs, loops, status, stopped, net_ms = [], [], [], [], [], [], []
    other_ms: list[float] = []
    other_env = {**os.environ, "PYTHONPATH": str(args.against.resolve())} if args.against else None
    with tempfile.TemporaryDirectory(prefix="bench-overhead-cli-") as tmp:
        folder = Path(tmp)
        setup(folder, args.items, args.delay)
        store = ["--store", str(folder / "g.db")]
        for r in range(args.repeat):
            goal = f"over{r}"
            if other_env is not None and r % 2:
                other_wall, _ = fresh_run(exe, store, folder, f"{goal}b", args.items, env=other_env)
            run_wall, run_cpu = fresh_run(exe, store, folder, goal, args.items, env=None)
            if other_env is not None and not r % 2:
                other_wall, _ = fresh_run(exe, store, folder, f"{goal}b", args.items, env=other_env)
            loop_wall, _ = timed(["sh", "-c", LOOP.format(items=args.items)], folder)
            if other_env is not None:
                other_ms.append((other_wall - loop_wall) / calls * 1000)
            status.append(timed([exe, *store, "status", goal], folder)[0])
            stopped.append(timed([exe, *store, "run", goal, "--quiet"], folder)[0])
            net_ms.append((run_wall - loop_wall - stopped[-1]) / calls * 1000)
            runs.append(run_wall)
            loops.append(loop_wall)
            gov_ms.append((run_wall - loop_wall) / calls * 1000)
            share.append((run_wall - loop_wall) / run_wall * 100)
            against = f", {args.against}'s run {other_wall:.2f} s" if other_env is not None else ""
            print(
                f"  round {r + 1}: run {run_wall:.2f} s (CPU incl. agents {run_cpu:.2f} s), "
                f"shell loop {loop_wall:.2f} s{against}",
                flush=True,
            )
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{args.items} items, {calls} calls of {args.delay} s command agents, "
        f"{args.repeat} rounds, load average {load}"
    )
    print(f"  governor run  wall {_spread(runs, ' s')}")
    print(f"  shell loop    wall {_spread(loops, ' s')}")
    print(f"  governor status wall {_spread(status, ' s')} (start-up of a read command)")
    print(f"  run of the stopped goal wall {_spread(stopped, ' s')} (a run's fixed cost)")
    print(f"  overhead per attempt {_spread(gov_ms, ' ms')} = {_spread(share, ' %')} of the run")
    print(f"  overhead per attempt without the fixed cost {_spread(net_ms, ' ms')}")
    if other_ms:
        diff = [mine - other for mine, other in zip(gov_ms, other_ms, strict=True)]
        print(f"  {args.against}: overhead per attempt {_spread(other_ms, ' ms')}")
        print(f"  this tree - {args.against}, per round: {_spread(diff, ' ms')}")
    print("  target <= 5 ms")


if __name__ == "__main__":
    main()
