"""Benchmark: deciding after every event of one plan of many items (issue 26).

Run: ``.venv/bin/python -m bench.plan_size [--repeat 3] [--tree OTHER_TREE]``

Method (the figures go to docs/performance.md, "The decider"): one applied plan of N
items (5, 50, 500, 1,000; at most 4 in parallel), the first 50 of them attempted 40
times each, every attempt failing (built with the core's recorders, ``tests.story``).
A ``Decider`` folds every event and decides after it, without the ledger (the runner's
and what-if's path) and with it (replay's); best CPU time of ``--repeat`` rounds, in µs
per event, and each size's figure over the 5-item one. ``--tree``: the same run from
another source tree (``git archive`` of it; before decision record 0025 its
``decide(view, now)`` kept the memo on the view) in a child process, printed beside.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from governor.core.events import Event

SIZES = (5, 50, 500, 1_000)


def history(size: int, rounds: int = 40) -> list[Event]:
    from tests.story import Story  # noqa: PLC0415 - the bench's only use of the tests

    keys = [f"k{n}" for n in range(size)]
    story = Story(
        max_work_items_per_plan=size,
        max_total_work_items=size,
        max_parallel_work=4,
        max_attempts=10**6,
        max_total_attempts=10**9,
        accept_passing=False,
    )
    plan = story.plan(*keys)
    for _ in range(rounds):
        for work_id in story.view.items_by_plan[plan][:50]:
            story.attempt(work_id)
    return story.events


def per_event(events: list[Event], ledger: bool, repeat: int) -> float:
    """Best CPU µs per event of folding and deciding after every event."""
    try:
        from governor.core.rules.decider import Decider  # noqa: PLC0415 - trees before it lack it

        def deciding() -> tuple[object, object]:
            decider = Decider()
            return decider.view, decider.decide
    except ImportError:  # a tree before decision record 0025
        from governor.core.rules.decide import decide  # noqa: PLC0415
        from governor.core.view import GoalView  # noqa: PLC0415

        def deciding() -> tuple[object, object]:
            view = GoalView()
            return view, lambda at, with_ledger: decide(view, at, with_ledger=with_ledger)

    from governor.core.fold import evolve  # noqa: PLC0415

    best = float("inf")
    for _ in range(repeat):
        view, take = deciding()
        start = time.process_time()
        for event in events:
            evolve(view, event)  # type: ignore[arg-type]
            take(event.at, with_ledger=ledger)  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best / len(events) * 1e6


def figures(repeat: int) -> dict[tuple[int, bool], float]:
    return {
        (size, ledger): per_event(history(size), ledger, repeat)
        for size in SIZES
        for ledger in (False, True)
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", type=Path, help="another source tree, run beside")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        for (size, ledger), us in figures(args.repeat).items():
            print(size, int(ledger), us)
        return
    ours = figures(args.repeat)
    other: dict[tuple[int, bool], float] = {}
    if args.tree is not None:
        root = Path(__file__).resolve().parent.parent
        env = {**os.environ, "PYTHONPATH": f"{args.tree.resolve()}{os.pathsep}{root}"}
        argv_ = [sys.executable, "-m", "bench.plan_size", "--child", "--repeat", str(args.repeat)]
        out = subprocess.run(
            argv_, env=env, cwd=args.tree, capture_output=True, text=True, check=True
        )
        for line in out.stdout.split("\n"):
            if line.strip():
                n, with_ledger, taken = line.split()
                other[int(n), bool(int(with_ledger))] = float(taken)
    print(f"fold + decide per event, one plan of N items, best of {args.repeat} (CPU µs/event)")
    for ledger in (False, True):
        base = ours[SIZES[0], ledger]
        for size in SIZES:
            us = ours[size, ledger]
            line = f"  {'ledger   ' if ledger else 'no ledger'} N={size:>5}: {us:7.1f} ({us / base:4.1f}x N=5)"
            if other:
                them = other[size, ledger]
                line += f"   other tree {them:7.1f} ({them / other[SIZES[0], ledger]:4.1f}x)"
                line += f"   other / this {them / us:4.2f}"
            print(line)


if __name__ == "__main__":
    main()
