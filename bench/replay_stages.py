"""Benchmark: where a replay's CPU goes, stage by stage, in process (issue 26's profiles).

Run: ``.venv/bin/python -m bench.replay_stages [--events 200000] [--cycles 25] [--repeat 5]``

Method (the figures go to docs/performance.md, "Issue 26 targets"): on a history of
``bench/history_gen.py`` (``bench.replay.history``), each stage below adds one step to
the one before it; ``--repeat`` rounds, each timing every stage once in turn, best CPU
time (``time.process_time``) per stage, in µs per event and as the plain parse's time
divided by the stage's:

    plain     ``for line in f`` + ``orjson.loads`` (issue 26's baseline)
    chunks    reading the 64 KiB chunks of lines alone (``iter_raw_chunks``)
    msgspec   chunks + msgspec's decode of every line into the compiled structs
    decoded   ``read_history`` with the struct decoder (chunk decoder: finish, checks)
    full      decoded + the fold (``evolve``): the replay pass, no decisions
    checked   decoded + the history checks and the fold (``HistoryChecker.check``)
    decided   ``analysis.replay.replay``: checked + a decision with the ledger per event
    ledgerless  the same without the ledger but at the last step (``ledgers=False``:
              what the text replay takes; it is not added to ``decided`` but replaces it)
    text      ``governor replay``'s text output over ``ledgerless``
              (``cli.history._text_steps``, stdout to /dev/null)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from bench.replay import history
from governor.analysis.replay import replay
from governor.cli import history as cli_history
from governor.core.fold import evolve
from governor.core.history import HistoryChecker
from governor.core.view import GoalView
from governor.core.wire.codec import LineDecoder
from governor.core.wire.derive import compiled
from governor.store.jsonl import iter_raw_chunks, read_history


def stages(path: Path) -> dict[str, Callable[[], None]]:
    def structs() -> LineDecoder:
        return LineDecoder(structs=True)

    def plain() -> None:
        loads = orjson.loads
        with path.open("rb") as f:
            for line in f:
                loads(line)

    def chunks() -> None:
        for _ in iter_raw_chunks(path):
            pass

    def msgspec() -> None:
        decode = compiled().decoder.decode
        for chunk in iter_raw_chunks(path):
            for line in chunk:
                decode(line)

    def decoded() -> None:
        for _ in read_history(path, decoder=structs()):
            pass

    def full() -> None:
        view = GoalView()
        for _, read in read_history(path, decoder=structs()):
            evolve(view, read)

    def checked() -> None:
        check = HistoryChecker(None).check
        for number, read in read_history(path, decoder=structs()):
            check(read, number)

    def decided() -> None:
        for _ in replay(read_history(path, decoder=structs())):
            pass

    def ledgerless() -> None:
        for _ in replay(read_history(path, decoder=structs()), ledgers=False):
            pass

    def text() -> None:
        args = argparse.Namespace(all=False, at=None)
        steps = replay(read_history(path, decoder=structs()), ledgers=False)
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            cli_history._text_steps(steps, args)

    return {
        "plain": plain,
        "chunks": chunks,
        "msgspec": msgspec,
        "decoded": decoded,
        "full": full,
        "checked": checked,
        "decided": decided,
        "ledgerless": ledgerless,
        "text": text,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--cycles", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    path, n = history(args.events, args.cycles)
    fns = stages(path)
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(args.repeat):
        for name, fn in fns.items():
            start = time.process_time()
            fn()
            best[name] = min(best[name], time.process_time() - start)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{path.name}: {n:,} events; best of {args.repeat} rounds, CPU; load average {load}")
    for name, seconds in best.items():
        print(
            f"  {name:<8} {seconds / n * 1e6:6.2f} µs/event   plain / this "
            f"{best['plain'] / seconds:.3f}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
