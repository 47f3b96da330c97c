"""Benchmark: how fast a history replays, measured side by side with a bare JSON parse.

Run: ``.venv/bin/python -m bench.replay [--events 1000000] [--repeat 3]``

Method (the figures go to docs/performance.md):
    1. Generate a valid history of about N events once (``bench/out/``, reused).
    2. In one process, alternate the measured passes ``repeat`` times and keep each
       pass's best time (the machine is shared and noisy; interleaving spreads the noise):
         bare      read every line and ``orjson.loads`` it (the floor of any replay)
         structs   read + decode every line into the compiled msgspec structs only
         pydantic  read + decode + validate every line with the pydantic models alone
         decode    read + decode every line into pydantic events (``LineDecoder``: the
                   compiled decoder, pydantic where it is not sure)
         full      read + decode + fold (``project``): the replay of SPEC §9 minus output
         checked   read + decode + history checks + fold (what ``governor validate`` does)
         project   fold alone over events decoded in advance (a 200k-event slice)
    3. Print events/s of each and the ratios to ``bare``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from bench.history_gen import write
from governor.core.codec import LineDecoder, decode_lines
from governor.core.decoder import compiled
from governor.core.history import check_history
from governor.core.view import GoalView, evolve, project
from governor.store.jsonl import iter_raw_lines

OUT = Path(__file__).resolve().parent / "out"


def history(n: int) -> tuple[Path, int]:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"replay-{n}.jsonl"
    if not path.exists():
        print(f"generating {path.name} …", file=sys.stderr)
        write(path, n)
    with path.open("rb") as f:
        count = sum(1 for _ in f)
    return path, count


def passes(path: Path) -> dict[str, Callable[[], None]]:
    def bare() -> None:
        loads = orjson.loads
        for line in iter_raw_lines(path):
            loads(line)

    def structs() -> None:
        decode_structs = compiled().decoder.decode
        for line in iter_raw_lines(path):
            decode_structs(line)

    def pydantic() -> None:
        for _ in decode_lines(iter_raw_lines(path), decoder=LineDecoder(compiled=False)):
            pass

    def decode() -> None:
        for _ in decode_lines(iter_raw_lines(path)):
            pass

    def full() -> None:
        view = GoalView()
        for _, event in decode_lines(iter_raw_lines(path)):
            evolve(view, event)

    def checked() -> None:
        for _ in check_history(decode_lines(iter_raw_lines(path))):
            pass

    return {
        "bare": bare,
        "structs": structs,
        "pydantic": pydantic,
        "decode": decode,
        "full": full,
        "checked": checked,
    }


def best_times(fns: dict[str, Callable[[], None]], repeat: int) -> dict[str, float]:
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def project_rate(path: Path, slice_n: int, repeat: int) -> float:
    events = []
    for _, event in decode_lines(iter_raw_lines(path)):
        events.append(event)
        if len(events) >= slice_n:
            break
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        project(events)
        best = min(best, time.perf_counter() - start)
    return len(events) / best


def replay_memory(n: int) -> None:
    """Peak RSS of the real command replaying a long history (5 items, so lines stay small)."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"replay-mem-{n}.jsonl"
    if not path.exists():
        write(path, n, cycles=n // 34 + 1)  # about 34 events per cycle over 5 items
    exe = Path(sys.executable).parent / "governor"
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run([str(exe), "replay", str(path), "--json"], stdout=sink, check=True)
    took = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    with path.open("rb") as f:
        count = sum(1 for _ in f)
    print(
        f"  governor replay --json of {count:,} events: peak RSS {rss:.0f} MiB "
        f"(bar: 300 MiB), {took:.0f} s, {count / took:,.0f} events/s"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--memory",
        action="store_true",
        help="also run `governor replay --json` on a 10^6-event history and report its peak RSS",
    )
    args = parser.parse_args(argv)
    path, n = history(args.events)
    print(f"history: {path.name}: {n} events, {path.stat().st_size / n:.0f} bytes/event")
    best = best_times(passes(path), args.repeat)
    bare_rate = n / best["bare"]
    for name, seconds in best.items():
        rate = n / seconds
        print(
            f"  {name:<8} {rate:>12,.0f} events/s   {seconds:7.2f} s   {rate / bare_rate:5.2f}x bare"
        )
    if args.memory:
        replay_memory(n)
    rate = project_rate(path, min(n, 200_000), args.repeat)
    print(f"  project  {rate:>12,.0f} events/s   (fold alone over decoded events)")
    print(f"ratio full replay / bare parse: {n / best['full'] / bare_rate:.2f} (target >= 0.5)")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
