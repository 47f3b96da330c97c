"""Benchmark: encoding events, the compiled encoder against pydantic's serializer (issue 36).

Run: ``.venv/bin/python -m bench.encode [--events 20000] [--repeat 7]``

Method (the figures go to docs/performance.md, "Governor's own cost (issue 36)"):
    The events of a generated history (bench/history_gen.py: attempts through outages,
    failures, continuations, budget raises; every line valid), read once as pydantic
    events. Each round, in turn, in one process: ``EVENT_ADAPTER.dump_json(event,
    by_alias=True, exclude_none=True)`` over every event (what the codec wrote before,
    pydantic's serializer) and ``codec.encode(event)`` (the compiled encoder derived from
    the models, written by orjson). Both are checked to give the same bytes first. CPU
    time per event (``time.process_time``), median and spread over ``--repeat`` rounds,
    and the ratio per round.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.history_gen import write
from governor.core.events import Event
from governor.core.wire.codec import EVENT_ADAPTER, decode, encode


def pydantic_encode(event: Event) -> bytes:
    return EVENT_ADAPTER.dump_json(event, by_alias=True, exclude_none=True)


def per_event_us(encode_one: Callable[[Event], bytes], events: list[Event]) -> float:
    start = time.process_time()
    for event in events:
        encode_one(event)
    return (time.process_time() - start) / len(events) * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-encode-") as tmp:
        path = Path(tmp) / "h.jsonl"
        write(path, args.events, cycles=25)
        events = [decode(line) for line in path.read_bytes().splitlines()]
    for event in events:
        if encode(event) != pydantic_encode(event):
            raise SystemExit(f"the encodings differ: {pydantic_encode(event)!r}")
    old: list[float] = []
    new: list[float] = []
    for r in range(args.repeat):
        pair = [("pydantic", pydantic_encode, old), ("compiled", encode, new)]
        for _, encode_one, into in pair if r % 2 == 0 else reversed(pair):
            into.append(per_event_us(encode_one, events))
    ratios = sorted(o / n for o, n in zip(old, new, strict=True))
    print(f"{len(events)} events, {args.repeat} rounds, the same bytes both ways")
    for name, values in (("pydantic dump_json", old), ("compiled encoder", new)):
        v = sorted(values)
        print(f"  {name:<20} {statistics.median(v):6.2f} us/event ({v[0]:.2f}-{v[-1]:.2f})")
    print(
        f"  compiled is {statistics.median(ratios):.1f}x as fast "
        f"(per round {ratios[0]:.1f}-{ratios[-1]:.1f})"
    )


if __name__ == "__main__":
    main()
