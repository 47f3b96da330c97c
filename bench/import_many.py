"""Benchmark: importing N histories one ``governor import`` per file, beside one command.

Run: ``.venv/bin/python -m bench.import_many [--goals 300]``

Method (figures go to docs/performance.md):
    1. In a fresh temporary folder, ``governor simulate --goals N`` writes N histories.
    2. Before (how a folder was imported until issue 27): one ``governor import FILE``
       process per file, into store A.
    3. After: one ``governor import FOLDER`` into store B (each file its own transaction).
    4. Both stores must then hold the N goals. It prints each side's wall and CPU time
       and their ratio, measured side by side in one run.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def timed(run: Callable[[], None]) -> tuple[float, float]:
    """Wall and CPU seconds (of the child processes) of ``run``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=300)
    args = parser.parse_args(argv)
    governor = str(Path(sys.executable).parent / "governor")
    with tempfile.TemporaryDirectory(prefix="bench-import-") as folder:
        cwd = Path(folder)

        def gov(*words: str) -> None:
            subprocess.run([governor, *words], cwd=cwd, check=True, capture_output=True)

        gov("simulate", "--goals", str(args.goals), "--out", "corpus")
        files = sorted((cwd / "corpus").glob("*.jsonl"))
        events = sum(len(f.read_bytes().splitlines()) for f in files)

        def one_by_one() -> None:
            for path in files:
                gov("--store", "a.db", "import", str(path))

        before = timed(one_by_one)
        after = timed(lambda: gov("--store", "b.db", "import", "corpus"))
        for store in ("a.db", "b.db"):
            listed = subprocess.run(
                [governor, "--store", store, "list", "--json"],
                cwd=cwd, check=True, capture_output=True,
            )  # fmt: skip
            assert len(listed.stdout.splitlines()) == args.goals, store
    print(f"import of {args.goals} histories ({events} events), side by side in one run")
    print(f"  one process per file   wall {before[0]:7.2f} s   CPU {before[1]:7.2f} s")
    print(f"  one command, a folder  wall {after[0]:7.2f} s   CPU {after[1]:7.2f} s")
    print(
        f"  ratio (before/after)   wall {before[0] / after[0]:6.1f}x   CPU {before[1] / after[1]:6.1f}x"
    )


if __name__ == "__main__":
    main()
