"""Benchmark: how long the ``governor`` command takes to start, beside ``python -c pass``.

Run: ``.venv/bin/python -m bench.cli [--repeat 7]``

Method (figures go to docs/performance.md):
    0. Compile the package's bytecode first (``compileall``), as an installed package has
       it: with ``PYTHONDONTWRITEBYTECODE=1`` (set on some machines) and no ``.pyc``, every
       run would compile each module from source again (~0.1 s of CPU), which is no user's
       start-up.
    1. In a fresh temporary folder, create a store holding one goal (``governor new`` on a
       small goal file), so ``status`` and ``list`` read a real SQLite file.
    2. Run each command as a real process (the installed ``governor`` script), ``--repeat``
       times, interleaved so the machine's noise falls on all alike: ``python -c pass``,
       ``governor --help``, ``governor status GOAL``, ``governor list``; and for issue 26
       ``governor status`` and ``governor run`` of a second goal, cancelled (``run`` of a
       stopped goal decides from the store that there is nothing to do, without LangGraph),
       and ``python -c 'import governor.graph.build'`` (what such a run no longer loads).
    3. Print each one's median wall time, its spread, its median CPU time and the median
       wall time over ``python -c pass``'s; against the targets of issue 12 (``--help``
       <= 0.15 s, ``status`` and ``list`` <= 0.3 s) and issue 26 (``run`` of a stopped goal
       within 2x ``status`` of it, the medians of the same interleaved runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = """\
id = "bench-cli"
title = "Start-up benchmark"
objective = "Nothing: the goal only gives status and list something to read."
acceptance = ["none"]
planner = "p"
worker = "p"

[profiles.p]
harness = "scripted"
"""

WARM = (
    "import compileall, os, governor; "
    "compileall.compile_dir(os.path.dirname(governor.__file__), quiet=1)"
)
"""Step 0: compile the bytecode of the ``governor`` package the command imports."""

TARGETS = {"--help": 0.15, "status": 0.3, "list": 0.3}
RUN_OVER_STATUS = 2.0
"""Issue 26: ``run`` of a stopped goal within 2x ``status`` of it."""
OK_CODES = (0, 13)
"""Success, and ``run`` of the cancelled goal (exit code 13: cancelled)."""


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (output discarded; it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, check=False)
    if done.returncode not in OK_CODES:
        raise subprocess.CalledProcessError(done.returncode, argv)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    governor = str(Path(sys.executable).parent / "governor")
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as folder:
        cwd = Path(folder)
        subprocess.run(  # step 0, in the folder: the package the command imports
            [sys.executable, "-c", WARM],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            check=True,
        )
        (cwd / "goal.toml").write_text(GOAL)
        env_store = ["--store", str(cwd / "g.db")]
        subprocess.run(
            [governor, *env_store, "new", "goal.toml"],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            check=True,
            env={**os.environ},
        )
        (cwd / "stopped.toml").write_text(GOAL.replace('"bench-cli"', '"bench-stopped"'))
        for step in (["new", "stopped.toml"], ["cancel", "bench-stopped"]):
            subprocess.run(
                [governor, *env_store, *step], cwd=cwd, stdout=subprocess.DEVNULL, check=True
            )
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "--help": [governor, "--help"],
            "status": [governor, *env_store, "status", "bench-cli"],
            "list": [governor, *env_store, "list"],
            "status stopped": [governor, *env_store, "status", "bench-stopped"],
            "run stopped": [governor, *env_store, "run", "bench-stopped"],
            "import graph": [sys.executable, "-c", "import governor.graph.build"],
        }
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, command in commands.items():
                runs[name].append(timed(command, cwd))
    base = statistics.median(w for w, _ in runs["python -c pass"])
    print(f"start-up, {args.repeat} interleaved runs each (wall: median, spread; CPU: median)")
    for name, measured in runs.items():
        walls = sorted(w for w, _ in measured)
        cpu = statistics.median(c for _, c in measured)
        wall = statistics.median(walls)
        target = TARGETS.get(name)
        verdict = "" if target is None else f"   target <= {target:.2f} s: "
        if target is not None:
            verdict += "met" if wall <= target else f"not met (+{wall - target:.2f} s)"
        print(
            f"  {name:<15} wall {wall:5.3f} s ({walls[0]:.3f} to {walls[-1]:.3f})"
            f"  CPU {cpu:5.3f} s  {wall / base:5.1f}x python -c pass{verdict}"
        )
    pair = ("run stopped", "status stopped")
    run, status = (statistics.median(w for w, _ in runs[n]) for n in pair)
    run_cpu, status_cpu = (statistics.median(c for _, c in runs[n]) for n in pair)
    verdict = "met" if run <= RUN_OVER_STATUS * status else "not met"
    print(
        f"run of a stopped goal / status of it: {run / status:.2f}x wall, "
        f"{run_cpu / status_cpu:.2f}x CPU (medians)   target <= {RUN_OVER_STATUS:.0f}x: {verdict}"
    )


if __name__ == "__main__":
    main()
