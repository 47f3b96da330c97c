"""Benchmark: ``governor replay --json`` from two source trees, side by side in one run.

Run: ``.venv/bin/python -m bench.ab TREE OTHER_TREE [--events 200000] [--repeat 5]
[--history FILE] [--text] [--tune CORPUS]`` (each tree holds ``governor/``: e.g. ``git archive <commit>``
unpacked; ``--history``: any history instead of the generated one; ``--text``: the text
``governor replay`` instead of ``--json``; ``--tune``: ``governor tune`` of a folder of
histories over bench/tune.py's 100-point grid, one worker).

Method (the figures go to docs/performance.md):
    1. The history of ``bench.replay --json-only`` (about N events over two plans of 5 work
       items, ``bench/out/``, reused).
    2. ``repeat`` rounds; each runs the real ``governor replay FILE --json`` once from
       ``TREE`` and once from ``OTHER_TREE`` (first on ``PYTHONPATH``), in turn, so a busy
       neighbour disturbs both alike. Both must print the same bytes (their sha256 is
       compared).
    3. Print each tree's median events per CPU-second and the median of the rounds' ratios
       (``TREE`` / ``OTHER_TREE``: above 1, ``TREE`` is faster), with their spread.
    4. ``--fold-decide``: instead of the command, a child per tree and round decodes the
       history's first ``--events`` events once, then folds and decides after every event
       (``evolve`` + ``decide``: the core alone, no rendering), best of 3, CPU time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from bench.replay import json_history

_MAIN = "import sys; from governor.cli.main import main; sys.exit(main())"
TUNE_ARGS = ["--grid", "max_replans=2..11", "--grid", "max_uncharged_replans=0..9"]
TUNE_ARGS += ["--workers", "1", "--quiet", "--json", "--seed", "0"]
"""``--tune``: bench/tune.py's 100-point grid, in one process (its CPU is the child's)."""


def _run(tree: Path, path: Path, text: bool = False, tune: bool = False) -> tuple[float, str]:
    """CPU seconds and the sha256 of the output of one ``replay --json`` (``text``:
    ``replay``; ``tune``: ``tune`` of the corpus ``path`` over ``TUNE_GRID``) from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if tune:
        argv = [sys.executable, "-c", _MAIN, "tune", str(path), *TUNE_ARGS]
    else:
        argv = [sys.executable, "-c", _MAIN, "replay", str(path), *([] if text else ["--json"])]
    digest = hashlib.sha256()
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, cwd=tree) as child:
        assert child.stdout is not None
        while chunk := child.stdout.read(1 << 20):  # streamed: a long --json is many GB
            digest.update(chunk)
    assert child.returncode == 0, f"{argv}: exit {child.returncode}"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, digest.hexdigest()


_FOLD_DECIDE = """
import sys, time
from itertools import islice
try:
    from governor.core.wire.codec import decode
    from governor.core.fold import evolve
except ImportError:  # a tree from before issue 26
    from governor.core.codec import decode
    from governor.core.fold import evolve
from governor.core.view import GoalView
try:  # a tree with the decider (decision record 0025): it decides what changed
    try:
        from governor.core.rules.decider import Decider
    except ImportError:  # before the rules had their package (issue 36)
        from governor.core.decider import Decider
    def deciding():
        decider = Decider()
        return decider.view, decider.decide
except ImportError:  # before it, ``decide`` kept its memo on the view
    from governor.core.rules.decide import decide
    def deciding():
        view = GoalView()
        return view, lambda at: decide(view, at)
with open(sys.argv[1], "rb") as f:
    events = [decode(line) for line in islice(f, int(sys.argv[2]))]
best = float("inf")
for _ in range(3):
    start = time.process_time()
    view, take = deciding()
    for event in events:
        evolve(view, event)
        take(event.at)
    best = min(best, time.process_time() - start)
print(best, len(events))
"""


def _fold_decide(tree: Path, path: Path, n: int) -> float:
    """Events folded and decided per CPU-second from ``tree`` (best of 3)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    argv = [sys.executable, "-c", _FOLD_DECIDE, str(path), str(n)]
    out = subprocess.run(argv, env=env, capture_output=True, check=True, cwd=tree).stdout
    best, count = out.split()
    return int(count) / float(best)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path, help="a source tree (holds governor/)")
    parser.add_argument("other", type=Path, help="the other source tree")
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fold-decide", action="store_true", help="time evolve + decide only")
    parser.add_argument("--history", type=Path, help="this history instead (any shape)")
    parser.add_argument("--text", action="store_true", help="time `replay` (text), not --json")
    parser.add_argument(
        "--tune", type=Path, metavar="CORPUS", help="time `governor tune CORPUS` instead"
    )
    args = parser.parse_args(argv)
    if args.fold_decide:
        path = (args.history or json_history(200_000)[0]).resolve()
        rates = [
            (_fold_decide(args.tree.resolve(), path, args.events),
             _fold_decide(args.other.resolve(), path, args.events))
            for _ in range(args.repeat)
        ]  # fmt: skip
        ratios = sorted(a / b for a, b in rates)
        print(f"evolve + decide, first {args.events:,} events, {args.repeat} rounds (CPU):")
        print(
            f"  {args.tree}  median {statistics.median(a for a, _ in rates):>10,.0f} events/CPU-s"
        )
        print(
            f"  {args.other}  median {statistics.median(b for _, b in rates):>10,.0f} events/CPU-s"
        )
        print(
            f"  tree / other: median {statistics.median(ratios):.3f} "
            f"(spread {ratios[0]:.3f} to {ratios[-1]:.3f})"
        )
        return
    if args.tune:
        path = args.tune.resolve()
        count = len(list(path.glob("*.jsonl")))
    elif args.history:
        path = args.history.resolve()
        with path.open("rb") as f:
            count = sum(1 for _ in f)
    else:
        path, count = json_history(args.events)
    ours, theirs, ratios = [], [], []
    for _ in range(args.repeat):
        cpu_a, sha_a = _run(args.tree.resolve(), path, args.text, bool(args.tune))
        cpu_b, sha_b = _run(args.other.resolve(), path, args.text, bool(args.tune))
        assert sha_a == sha_b, "the two trees print different bytes"
        ours.append(count / cpu_a)
        theirs.append(count / cpu_b)
        ratios.append(cpu_b / cpu_a)
    ratios.sort()
    command = "governor replay" + ("" if args.text else " --json")
    unit = "events"
    if args.tune:
        command, unit = "governor tune (100 policies)", "histories"
    print(f"{command} {path.name}, {count:,} {unit}, {args.repeat} rounds (CPU):")
    print(f"  {args.tree}  median {statistics.median(ours):>10,.1f} {unit}/CPU-s")
    print(f"  {args.other}  median {statistics.median(theirs):>10,.1f} {unit}/CPU-s")
    print(
        f"  tree / other: median {statistics.median(ratios):.3f} "
        f"(spread {ratios[0]:.3f} to {ratios[-1]:.3f}); same bytes: yes"
    )


if __name__ == "__main__":
    main()
