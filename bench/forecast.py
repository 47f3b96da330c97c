"""Benchmark: ``governor forecast`` beside ``governor tune`` of the same corpus on one policy.

Run: ``.venv/bin/python -m bench.forecast [--goals 3000] [--repeat 3] [--workers 2]``

Method (figures go to docs/performance.md, "Forecast"):
    1. Write a corpus of ``--goals`` histories with ``governor simulate`` (governor's own
       model, SPEC-default policy but max_replans 3) into a temporary folder, and a goal
       file whose policy allows max_replans 5 (so both commands extrapolate).
    2. Run, as whole processes, interleaved ``--repeat`` times so the machine's noise
       falls on both alike: ``governor forecast GOALFILE --corpus DIR`` and ``governor tune
       DIR --grid max_replans=5`` (one policy), both with ``--workers`` processes, the
       default bootstrap (8) and seed 0.
    3. Print each one's median wall time and CPU time (children included), and the ratio
       of the medians, against issue 33's target: forecast <= 2x tune.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = """\
id = "bench-forecast"
title = "Forecast benchmark"
objective = "Nothing: the goal only gives forecast a policy and profiles."
planner = "agent"
worker = "agent"
[policy]
max_replans = 5
max_uncharged_replans = 2
[profiles.agent]
harness = "scripted"
args = ["sim.json"]
"""


def _governor() -> str:
    return str(Path(sys.executable).parent / "governor")


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the children) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-forecast-") as scratch:
        root = Path(scratch)
        corpus = root / "corpus"
        subprocess.run(
            [
                _governor(),
                "simulate",
                "--goals",
                str(args.goals),
                "--seed",
                "1",
                "--policy",
                "max_replans=3",
                "--out",
                str(corpus),
            ],
            check=True,
            capture_output=True,
        )
        (root / "goal.toml").write_text(GOAL)
        w = str(args.workers)
        commands = {
            "forecast": [
                _governor(),
                "forecast",
                "goal.toml",
                "--corpus",
                str(corpus),
                "--workers",
                w,
            ],
            "tune (1 policy)": [
                _governor(),
                "tune",
                str(corpus),
                "--grid",
                "max_replans=5",
                "--workers",
                w,
                "--quiet",
            ],
        }
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, argv in commands.items():
                runs[name].append(timed(argv, root))
    print(f"{args.goals} histories, {args.workers} workers, {args.repeat} interleaved runs each")
    medians = {}
    for name, got in runs.items():
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        medians[name] = wall
        spread = ", ".join(f"{w:.1f}" for w, _ in got)
        print(f"  {name:<16} median wall {wall:7.1f} s (runs {spread})   median CPU {cpu:7.1f} s")
    ratio = medians["forecast"] / medians["tune (1 policy)"]
    verdict = "PASS" if ratio <= 2 else "FAIL"
    print(f"  forecast / tune: {ratio:.2f}x   {verdict} (target <= 2x, issue 33)")


if __name__ == "__main__":
    main()
