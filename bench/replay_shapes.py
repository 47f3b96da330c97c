"""Benchmark: the real ``governor replay`` processes of issue 26, beside a bare parse.

Run: ``.venv/bin/python -m bench.replay_shapes [--repeat 3] [--only text,per-event,rate]``

Method (the figures go to docs/performance.md, "Issue 26 targets"):
    Histories from ``bench/history_gen.py`` (``bench/out/``, reused): 2 * 10**5 events over
    1,155 items and 5 * 10**4 over 290 (25 rounds per item), 10**6 over 375 (400 rounds).
    Every command runs as a child process, output to /dev/null; CPU time is the child's
    user + system time (``getrusage(RUSAGE_CHILDREN)``), and the commands of one measure
    run interleaved, ``--repeat`` rounds; medians and spreads of the per-round figures.

    text       ``governor replay FILE`` (text) on the 1,155-item history against a process
               that only ``orjson.loads`` every line of it (``for line in f``): the ratio
               is bare CPU / replay CPU (target >= 0.2).
    per-event  ``governor replay FILE --json``: CPU per event on the 1,155-item history
               divided by CPU per event on the 290-item one (target <= 1.15: flat in the
               item count); again with the CPU of a 100-event replay (start-up) taken off
               both.
    rate       ``governor replay FILE --json`` on the 10**6-event, 375-item history:
               events per CPU second (target >= 200,000).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from bench.replay import _timed_child, history

BARE = (
    "import sys, orjson\n"
    "loads = orjson.loads\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    for line in f:\n"
    "        loads(line)\n"
)


def child(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process (stdout to /dev/null; it must succeed)."""
    wall, cpu, _ = _timed_child(argv)
    return wall, cpu


def _spread(values: list[float], fmt: str = "{:.3f}") -> str:
    values = sorted(values)
    return (
        f"median {fmt.format(statistics.median(values))} "
        f"(spread {fmt.format(values[0])} to {fmt.format(values[-1])})"
    )


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def text_ratio(exe: str, repeat: int) -> None:
    path, n = history(200_000, 25)
    bare, text = [], []
    for _ in range(repeat):
        bare.append(child([sys.executable, "-c", BARE, str(path)]))
        text.append(child([exe, "replay", str(path)]))
    cpu = [b[1] / t[1] for b, t in zip(bare, text, strict=True)]
    wall = [b[0] / t[0] for b, t in zip(bare, text, strict=True)]
    print(f"text replay, {path.name} ({n:,} events, 1,155 items), {repeat} rounds, {_load()}")
    print(f"  bare process CPU s {_spread([c for _, c in bare])}")
    print(f"  replay       CPU s {_spread([c for _, c in text])}")
    print(f"  bare / replay: CPU {_spread(cpu, '{:.3f}x')}; wall {_spread(wall, '{:.3f}x')}")
    print("  target >= 0.2x")


def per_event(exe: str, repeat: int) -> None:
    big, n_big = history(200_000, 25)
    small, n_small = history(50_000, 25)
    tiny = small.with_name("replay-head-100.jsonl")  # the fixed cost: start-up, 100 events
    with small.open("rb") as f, tiny.open("wb") as out:
        out.writelines(line for _, line in zip(range(100), f, strict=False))
    ratios, big_us, small_us, net = [], [], [], []
    for _ in range(repeat):
        fixed = child([exe, "replay", str(tiny), "--json"])[1]
        s_cpu = child([exe, "replay", str(small), "--json"])[1]
        b_cpu = child([exe, "replay", str(big), "--json"])[1]
        small_us.append(s_cpu / n_small * 1e6)
        big_us.append(b_cpu / n_big * 1e6)
        ratios.append(big_us[-1] / small_us[-1])
        net.append(((b_cpu - fixed) / n_big) / ((s_cpu - fixed) / n_small))
    print(f"replay --json per event, {repeat} rounds, {_load()}")
    print(f"  {small.name} ({n_small:,} events, 290 items): CPU-us/event {_spread(small_us)}")
    print(f"  {big.name} ({n_big:,} events, 1,155 items): CPU-us/event {_spread(big_us)}")
    print(f"  1,155 items / 290 items: {_spread(ratios, '{:.3f}x')}   target <= 1.15x")
    print(f"  the same without the fixed cost (a 100-event replay): {_spread(net, '{:.3f}x')}")


def rate(exe: str, repeat: int) -> None:
    path, n = history(1_000_000, 400)
    runs = [child([exe, "replay", str(path), "--json"]) for _ in range(repeat)]
    print(f"replay --json, {path.name} ({n:,} events, 375 items), {repeat} runs, {_load()}")
    print(f"  events/CPU-s {_spread([n / c for _, c in runs], '{:,.0f}')}   target >= 200,000")
    print(f"  events/wall-s {_spread([n / w for w, _ in runs], '{:,.0f}')}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="text,per-event,rate")
    args = parser.parse_args(argv)
    exe = str(Path(sys.executable).parent / "governor")
    measures = {"text": text_ratio, "per-event": per_event, "rate": rate}
    for name in args.only.split(","):
        measures[name](exe, args.repeat)


if __name__ == "__main__":
    main()
