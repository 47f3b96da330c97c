"""Benchmark: a vendor outage met by a fleet — fleet-aware against per-goal — and the cost of
keeping the shared health record.

Run: ``.venv/bin/python -m bench.outage [--goals 500] [--seeds 1 2 3] [--outage-s 3600]
[--processes 4] [--calls 2000] [--appends 200] [--store URL | --postgres]``

Method (figures go to docs/performance.md):
    1. The same simulated outage, twice per seed (``governor.analysis.fleet``): ``--goals``
       goals start one second apart under one shared vendor that is down from t = 600 s
       for ``--outage-s`` seconds (no Retry-After hints, the model's other defaults, the
       default policy: back-off 30 s doubling to 900 s, 3 uncharged tries per item and
       per planner). *Per-goal* is governor before SPEC §11.10: every goal meets the
       outage on its own and stops on its upstream bound, to be resumed by a person
       ``--operator-delay-s`` after the outage ends (900 s; 0 s is shown too). *Aware* is
       the fleet rule. Compared side by side in one run: calls the vendor refused, all
       calls it got (agent calls and probes), manual resumes, and the time from the
       outage's end to each affected goal's next call (median and worst). Ratios are
       per-goal over aware; the median and the range over ``--seeds`` are printed.
    2. The health record under many workers: ``--processes`` processes, each with its own
       store connection, record ``--calls`` answered calls each against one healthy
       upstream (the common case: one read, no write) at once; then, for scale, the same
       processes append ``--appends`` events each, one per transaction, to goals of their
       own (every append is a durable write transaction). Reported: microseconds per call of each, and the writes the health
       record took (0 expected). SQLite by default (a temporary file, ``synchronous=FULL``);
       ``--store URL`` or ``--postgres`` (a throw-away server) for PostgreSQL.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.service import store_url
from governor.analysis.fleet import FleetRun, FleetSettings, Mode, simulate_fleet
from governor.analysis.model import Model
from governor.core import record
from governor.core.event_fields import Profile
from governor.core.events import BudgetRaised
from governor.core.policy import Policy, UpstreamBackoff
from governor.core.upstream import Seen, Upstream, UpstreamHealth, observed
from governor.store import open_store

START_S = 600.0
UPSTREAM = Upstream("codex", "https://api.openai.com/v1", "gpt-5-codex")


def fleet(goals: int, seed: int, outage_s: float, mode: Mode, delay_s: float) -> FleetRun:
    settings = FleetSettings(
        goals=goals,
        mode=mode,
        spread_s=1.0,
        operator_delay_s=delay_s,
        outages=((START_S, START_S + outage_s),),
    )
    model = Model(outage_rate_per_h=0.0, retry_after_p=0.0)
    return simulate_fleet(model, Policy(), seed=seed, settings=settings)


def figures(run: FleetRun) -> dict[str, float]:
    waits = sorted(w for w in run.recoveries_s() if w != float("inf"))
    return {
        "refused": run.tally.refused,
        "calls": run.tally.calls,
        "probes": run.tally.probes,
        "manual": run.tally.manual_resumes,
        "recover_median_s": statistics.median(waits) if waits else 0.0,
        "recover_max_s": waits[-1] if waits else 0.0,
    }


def spread(values: Sequence[float]) -> str:
    return f"{statistics.median(values):,.1f} ({min(values):,.1f} to {max(values):,.1f})"


def compare(args: argparse.Namespace) -> None:
    print(
        f"1. one outage of {args.outage_s:.0f} s from t = {START_S:.0f} s, {args.goals} goals, "
        f"seeds {args.seeds}"
    )
    rows: dict[str, list[dict[str, float]]] = {"aware": [], "per-goal": [], "per-goal-0": []}
    ratios: dict[str, list[float]] = {"refused": [], "calls": [], "recover": []}
    for seed in args.seeds:
        aware = figures(fleet(args.goals, seed, args.outage_s, "aware", 0.0))
        late = figures(fleet(args.goals, seed, args.outage_s, "per-goal", args.operator_delay_s))
        now = figures(fleet(args.goals, seed, args.outage_s, "per-goal", 0.0))
        rows["aware"].append(aware)
        rows["per-goal"].append(late)
        rows["per-goal-0"].append(now)
        ratios["refused"].append(late["refused"] / max(aware["refused"], 1))
        ratios["calls"].append(late["calls"] / max(aware["calls"], 1))
        ratios["recover"].append(late["recover_median_s"] / max(aware["recover_median_s"], 1))
        print(
            f"   seed {seed}: refused {late['refused']:.0f} per-goal vs {aware['refused']:.0f} "
            f"aware ({aware['probes']:.0f} probes); manual resumes {late['manual']:.0f} vs "
            f"{aware['manual']:.0f}; recovery median {late['recover_median_s']:.0f} s vs "
            f"{aware['recover_median_s']:.0f} s"
        )
    labels = {
        "aware": "fleet-aware",
        "per-goal": f"per-goal, resumed {args.operator_delay_s:.0f} s after",
        "per-goal-0": "per-goal, resumed at once",
    }
    print(f"   {'':38} {'refused':>22} {'vendor calls':>24} {'manual resumes':>22} "
          f"{'recovery median s':>22} {'recovery worst s':>22}")  # fmt: skip
    for key, label in labels.items():
        runs = rows[key]
        cells = [
            spread([r[k] for r in runs])
            for k in ("refused", "calls", "manual", "recover_median_s", "recover_max_s")
        ]
        print(f"   {label:38} " + " ".join(f"{c:>22}" for c in cells))
    print(
        f"   ratios per-goal / aware (median, range): refused calls {spread(ratios['refused'])}x, "
        f"vendor calls {spread(ratios['calls'])}x, recovery {spread(ratios['recover'])}x"
    )


# --- 2. the health record under many workers ---------------------------------------------


def answered(record: UpstreamHealth | None) -> UpstreamHealth | None:
    """What an answered call does to the record (as the runner's monitor records it)."""
    return observed(record, UPSTREAM, Seen("answered"), datetime.now(UTC), UpstreamBackoff())


def _observe(url: str, calls: int, start: Any) -> float:
    with closing(open_store(url)) as store:
        start.wait()
        began = time.perf_counter()
        for _ in range(calls):
            store.change_upstream(UPSTREAM.name, answered)
        return (time.perf_counter() - began) / calls


def _append(url: str, calls: int, start: Any, goal_id: str) -> float:
    with closing(open_store(url)) as store:
        events = record.create_goal(
            goal_id, title="t", objective="o", acceptance=[], profiles={"p": Profile(harness="scripted")},
            planner="p", worker="p", at=datetime.now(UTC),
        )  # fmt: skip
        store.append(goal_id, events, expected_seq=0)
        start.wait()
        began = time.perf_counter()
        seq = 1
        for n in range(calls):
            event = BudgetRaised(
                goal_id=goal_id, seq=seq + 1, at=datetime.now(UTC), actor="bench",
                reason="bench", ledger="total_attempts", to=101 + n,
            )  # fmt: skip
            store.append(goal_id, [event], expected_seq=seq)
            seq += 1
        return (time.perf_counter() - began) / calls


def _parallel(work: Callable[..., float], args: list[tuple[Any, ...]]) -> list[float]:
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        start = manager.Event()
        with context.Pool(len(args)) as pool:
            pending = [pool.apply_async(work, (*a[:2], start, *a[2:])) for a in args]
            time.sleep(1.0)  # every process has opened its store
            start.set()
            return [p.get() for p in pending]


def health(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder, store_url(args, Path(folder)) as url:
        with closing(open_store(url)) as store:
            now = datetime.now(UTC)
            store.change_upstream(
                UPSTREAM.name,
                lambda r: observed(r, UPSTREAM, Seen("answered"), now, UpstreamBackoff()),
            )
            written = store.upstreams()[0].updated_at
        n = args.processes
        observe = _parallel(_observe, [(url, args.calls) for _ in range(n)])
        append = _parallel(_append, [(url, args.appends, f"bench-{i}") for i in range(n)])
        with closing(open_store(url)) as store:
            rewritten = store.upstreams()[0].updated_at != written
    per_observe, per_append = statistics.median(observe), statistics.median(append)
    print(
        f"2. the health record, {n} processes x {args.calls} calls at once, against "
        f"{args.appends} appends each ({url.split(':')[0]})"
    )
    print(f"   an answered call observed: {per_observe * 1e6:,.0f} us (median over processes)")
    print(f"   an event appended:         {per_append * 1e6:,.0f} us")
    print(f"   ratio append / observe: {per_append / per_observe:,.1f}x; "
          f"health writes taken: {'some' if rewritten else 0}")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--goals", type=int, default=500)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--outage-s", type=float, default=3600.0)
    parser.add_argument("--operator-delay-s", type=float, default=900.0)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--store", metavar="URL")
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--skip-health", action="store_true")
    args = parser.parse_args(argv)
    compare(args)
    if not args.skip_health:
        health(args)


if __name__ == "__main__":
    main()
