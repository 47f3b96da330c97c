"""Benchmark: how fast a history replays, measured side by side with a bare JSON parse.

Run: ``.venv/bin/python -m bench.replay [--events 1000000] [--repeat 3]``

Method (the figures go to docs/performance.md):
    1. Generate a valid history of about N events once (``bench/out/``, reused).
    2. In one process, run ``repeat`` rounds, each timing every pass once in turn (the
       machine is shared and noisy; interleaving spreads the noise):
         bare      read every line and ``orjson.loads`` it (the floor of any replay)
         plain     the same through a plain ``for line in f`` (no 16 MiB line bound)
         structs   read + decode every line into the compiled msgspec structs only
         pydantic  read + decode + validate every line with the pydantic models alone
         decode    read + decode every line into pydantic events (``LineDecoder``: the
                   compiled decoder, pydantic where it is not sure)
         events    read + decode into pydantic events + fold (the full replay before
                   the fold took structs)
         full      read + decode into finished structs + fold: what ``replay`` reads
                   (``read_history`` with ``LineDecoder(structs=True)``: 64 KiB chunks of
                   lines, each decoded and checked at once where it is sure, line by line
                   where not, ``decoder.chunk_reader``), folded event by event: the replay
                   of SPEC §9 minus its decisions and output
         checked   ``full`` + the history checks (the checks ``governor validate``
                   makes; validate itself reads pydantic events, as ``events`` does)
         project   fold alone over events decoded in advance (a 200k-event slice)
    3. Print each pass's median events/s and its ratio to ``bare`` (each round's ratio to
       that round's bare pass: median and spread over the rounds), in process CPU time
       (``time.process_time``: the machine is shared, and CPU time is what a busy
       neighbour disturbs least), then the ``full`` ratio in wall time as well.
    4. ``--json-rate``: run the real ``governor replay --json`` (output to /dev/null) on
       a history of about N events over two plans of 5 work items, ``--repeat`` times, and print its
       events/s (wall and CPU) and peak RSS, beside ``python -c pass``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from bench.history_gen import write
from governor.core.fold import evolve, project
from governor.core.history import check_history
from governor.core.view import GoalView
from governor.core.wire.codec import LineDecoder, decode_lines
from governor.core.wire.derive import compiled
from governor.store.jsonl import iter_raw_lines, read_history

OUT = Path(__file__).resolve().parent / "out"


def history(n: int, cycles: int = 400) -> tuple[Path, int]:
    """About ``n`` events; ``cycles`` rounds per item (400: ~375 items per 10**6 events;
    25: ~1,150 items per 2 * 10**5)."""
    OUT.mkdir(exist_ok=True)
    path = OUT / (f"replay-{n}.jsonl" if cycles == 400 else f"replay-{n}-c{cycles}.jsonl")
    if not path.exists():
        print(f"generating {path.name} …", file=sys.stderr)
        write(path, n, cycles=cycles)
    with path.open("rb") as f:
        count = sum(1 for _ in f)
    return path, count


def passes(path: Path) -> dict[str, Callable[[], None]]:
    def bare() -> None:
        loads = orjson.loads
        for line in iter_raw_lines(path):
            loads(line)

    def plain() -> None:  # issue 26's baseline: a plain ``for line in f``, no line bound
        loads = orjson.loads
        with path.open("rb") as f:
            for line in f:
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

    def events() -> None:
        view = GoalView()
        for _, event in decode_lines(iter_raw_lines(path)):
            evolve(view, event)

    def full() -> None:
        view = GoalView()
        for _, read in read_history(path, decoder=LineDecoder(structs=True)):
            evolve(view, read)

    def checked() -> None:
        for _ in check_history(read_history(path, decoder=LineDecoder(structs=True))):
            pass

    return {
        "bare": bare,
        "plain": plain,
        "structs": structs,
        "pydantic": pydantic,
        "decode": decode,
        "events": events,
        "full": full,
        "checked": checked,
    }


def rounds(
    fns: dict[str, Callable[[], None]], repeat: int
) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """``repeat`` rounds, each timing every pass once in turn: CPU and wall seconds."""
    cpu, wall = [], []
    for _ in range(repeat):
        cpu_times, wall_times = {}, {}
        for name, fn in fns.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            cpu_times[name] = time.process_time() - start_cpu
            wall_times[name] = time.perf_counter() - start
        cpu.append(cpu_times)
        wall.append(wall_times)
    return cpu, wall


def project_rate(path: Path, slice_n: int, repeat: int) -> float:
    events = []
    for _, event in decode_lines(iter_raw_lines(path)):
        events.append(event)
        if len(events) >= slice_n:
            break
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        project(events)
        best = min(best, time.process_time() - start)
    return len(events) / best


def json_history(n: int) -> tuple[Path, int]:
    """About ``n`` events over two plans of 5 work items, so each line stays small (a
    ledger of 5 rows, then 10)."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"replay-json-{n}.jsonl"
    if not path.exists():
        print(f"generating {path.name} …", file=sys.stderr)
        write(path, n, cycles=n // 67 + 1)  # ~6.75 events per cycle and item: half n per plan
    with path.open("rb") as f:
        count = sum(1 for _ in f)
    return path, count


def _timed_child(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run(argv, stdout=sink, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    # ru_maxrss of children is the largest of any child so far: the replay's is the largest
    return wall, cpu, after.ru_maxrss / 1024


def json_rate(n: int, repeat: int) -> None:
    """``governor replay --json`` on a long history: events/s (median, spread) and peak RSS."""
    path, count = json_history(n)
    exe = str(Path(sys.executable).parent / "governor")
    empty, _, _ = _timed_child([sys.executable, "-c", "pass"])
    runs = [_timed_child([exe, "replay", str(path), "--json"]) for _ in range(repeat)]
    walls = sorted(count / wall for wall, _, _ in runs)
    cpus = sorted(count / cpu for _, cpu, _ in runs)
    rss = max(r for _, _, r in runs)
    print(
        f"governor replay --json, {count:,} events over 10 items ({repeat} runs; "
        f"python -c pass: {empty:.2f} s):"
    )
    print(
        f"  wall: median {statistics.median(walls):,.0f} events/s "
        f"(spread {walls[0]:,.0f} to {walls[-1]:,.0f})   target >= 100,000"
    )
    print(
        f"  CPU:  median {statistics.median(cpus):,.0f} events/CPU-s "
        f"(spread {cpus[0]:,.0f} to {cpus[-1]:,.0f})"
    )
    print(f"  peak RSS {rss:.0f} MiB   target <= 150 MiB")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--json-rate",
        action="store_true",
        help="also time `governor replay --json` on a history of --events events over 10 items",
    )
    parser.add_argument("--json-only", action="store_true", help="only the `replay --json` timing")
    parser.add_argument(
        "--cycles",
        type=int,
        default=400,
        help="history shape of the passes: rounds per item (400: ~375 items per 10**6 "
        "events; 25: ~1,150 items per 2 * 10**5)",
    )
    args = parser.parse_args(argv)
    if args.json_rate or args.json_only:
        json_rate(args.events, args.repeat)
    if args.json_only:
        return
    path, n = history(args.events, args.cycles)
    print(f"history: {path.name}: {n} events, {path.stat().st_size / n:.0f} bytes/event")
    timed, walls = rounds(passes(path), args.repeat)
    print(f"  {args.repeat} rounds, CPU time; x bare: each round's ratio to that round's bare pass")
    ratios: dict[str, list[float]] = {}
    for name in timed[0]:
        ratios[name] = sorted(t["bare"] / t[name] for t in timed)
        rate = statistics.median(n / t[name] for t in timed)
        r = ratios[name]
        print(
            f"  {name:<8} {rate:>12,.0f} events/CPU-s (median)   x bare: median "
            f"{statistics.median(r):5.2f} (spread {r[0]:.2f} to {r[-1]:.2f})"
        )
    rate = project_rate(path, min(n, 200_000), args.repeat)
    print(f"  project  {rate:>12,.0f} events/s   (fold alone over decoded events)")
    full = ratios["full"]
    print(
        f"ratio full replay / bare parse (CPU): median {statistics.median(full):.2f} "
        f"(spread {full[0]:.2f} to {full[-1]:.2f}; target >= 0.5)"
    )
    plain = sorted(t["plain"] / t["full"] for t in timed)
    print(
        f"ratio full replay / plain `for line in f` parse (CPU): median "
        f"{statistics.median(plain):.2f} (spread {plain[0]:.2f} to {plain[-1]:.2f}; issue 26: >= 0.5)"
    )
    wall = sorted(t["bare"] / t["full"] for t in walls)
    print(
        f"ratio full replay / bare parse (wall): median {statistics.median(wall):.2f} "
        f"(spread {wall[0]:.2f} to {wall[-1]:.2f})"
    )
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
