"""The cost of pool reservations per agent call (issue 33): reserve + settle on a real
SQLite file, side by side with the same loop appending one event per call without pools.

Run: ``python -m bench.pools [CALLS]``; prints the median milliseconds of each and their
ratio, measured in one run.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from governor.core.pools import Figure, PoolLimits
from governor.drive import pools
from governor.store.sqlite import SqliteEventStore
from tests.store.streams import resumed, story


def main(calls: int = 200) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteEventStore(Path(folder) / "b.db")
        now = datetime.now(UTC)
        pools.set_pool(store, "p", PoolLimits(usd=1e6), at=now, actor="bench", reason=None)
        store.append("g1", story().events[:1], expected_seq=0)
        appends, reservations = [], []
        for i in range(calls):
            start = time.perf_counter()
            store.append("g1", [resumed("g1", i + 2, "bench")], expected_seq=i + 1)
            appends.append(time.perf_counter() - start)
            start = time.perf_counter()
            pools.reserve(store, ["p"], "g1", f"c{i}", Figure(usd=0.01, attempts=1), now=now)
            pools.settle(store, ["p"], "g1", f"c{i}", Figure(usd=0.01, attempts=1), now=now)
            reservations.append(time.perf_counter() - start)
        store.close()
    a, r = statistics.median(appends) * 1e3, statistics.median(reservations) * 1e3
    print(
        f"one append (a call's floor): {a:.2f} ms; reserve + settle: {r:.2f} ms; ratio {r / a:.2f}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
