"""Benchmark: tuning 10,000 histories x 100 grid points, against a naive re-fold and main.

Run: ``.venv/bin/python -m bench.tune [--goals 10000] [--sample 300] [--runs 3] [--truth-points 6]``

Method (figures go to docs/performance.md):
    1. Simulate a corpus of ``--goals`` histories under a tight policy (seeded), into
       ``bench/out/tune-<goals>/`` (reused).
    2. Re-projection, side by side on the same ``--sample`` histories x the 100-point grid
       (max_replans 2..11 x max_uncharged_replans 0..9), interleaved, best of ``--repeat``:
         naive  for every history and policy: re-fold the whole history through the
                projection, deciding (with the full ledger) after every event
         ours   analyse each history once (``Trace``), skip policies it cannot tell apart
                (``Demands.key``), decide only at recorded actions that a limit may change
                (``Trace.first_check``), stop at the divergence; re-fold the policies together
                from a snapshot of the recorded fold (``Trace.under_all``; those that cannot
                yet be told apart at a check share its decision)
       Both give the same outcome per pair (checked). Wall and CPU time are printed.
    3. The whole corpus x the grid, **main against this checkout, side by side**, ``--runs``
       times interleaved: each evaluates every history under every candidate with one
       Monte Carlo tail per censored pair, from the same fitted model (the exponential
       outage lengths and uniform plan sizes main's model knows), in ``--workers``
       processes. *main* is ``governor/analysis/{tune,whatif}.py`` of ``--baseline``
       (default: the commit before issue 12's tune work), loaded from git beside the
       current modules. Printed: wall times and their ratio per run, the CPU seconds of
       the (ended) worker processes and their ratio, and the largest difference of the
       two success estimates (Monte Carlo noise: they draw differently).
    4. The full tuner as ``governor tune`` runs it by default (fit, model checks, 8
       bootstrap replicates, completion): wall time.
    5. Validity at scale: for ``--truth-points`` grid points, simulate the same model
       directly under the policy (same seeds) and report |estimate - truth|.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import multiprocessing
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

from governor.analysis.corpus import Corpus, corpus_of
from governor.analysis.divergence import _retarget
from governor.analysis.fit import Tally
from governor.analysis.grid import candidates, parse_grid
from governor.analysis.model import Model
from governor.analysis.simulate import simulate
from governor.analysis.tune import candidate_policies, evaluate
from governor.analysis.tune_corpus import tune_corpus
from governor.analysis.whatif import Trace
from governor.core.events import Event
from governor.core.fold import evolve, project
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.rules.decide import decide
from governor.core.rules.decider import Decider
from governor.store.jsonl import write_history

OUT = Path(__file__).resolve().parent / "out"
ROOT = Path(__file__).resolve().parent.parent
BASELINE = "183c0d0"
"""main before issue 12's tune work (the figures docs/performance.md compares against)."""
RECORDED = Policy(max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2)
GRID = ["max_replans=2..11", "max_uncharged_replans=0..9"]


def corpus(goals: int) -> Corpus:
    folder = OUT / f"tune-{goals}"
    if not folder.exists() or len(list(folder.glob("*.jsonl"))) != goals:
        folder.mkdir(parents=True, exist_ok=True)
        print(f"simulating {goals} histories into {folder} …", flush=True)
        for history in simulate(Model(), RECORDED, goals=goals, seed=1):
            with (folder / f"{history[0].goal_id}.jsonl").open("wb") as handle:
                write_history(history, handle)
    return corpus_of([str(folder)])


def naive(events: list[Event], policy: Policy) -> str:
    """The baseline: re-fold the whole history under the policy, deciding after every event."""
    decider, recorded = Decider(), events[0].policy  # type: ignore[union-attr]
    view, status = decider.view, ""
    for event in events:  # (the decider takes again only what the event changed)
        retargeted = _retarget(event, policy, recorded, view)
        if retargeted is not None:
            evolve(view, retargeted)
        status = decider.decide(event.at).status
    return status


def ours(trace: Trace, policies: Sequence[Policy], names: list[str] | None = None) -> list[str]:
    """Governor's re-projection (``names``: the grid's fields, as ``tune`` keys policies)."""
    first: dict[tuple[object, ...], int] = {}
    keys = trace.demands.keys(policies, names)
    for position, key in enumerate(keys):
        first.setdefault(key, position)
    distinct = list(first.values())
    results = trace.under_all([policies[p] for p in distinct], ledger=False)
    status = {p: r.final.status for p, r in zip(distinct, results, strict=True)}
    return [status[first[key]] for key in keys]


def side_by_side(
    histories: list[list[Event]], overrides: list[dict[str, object]], repeat: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Best-of-``repeat`` (wall, CPU) seconds of each method, (naive, ours); both get the
    candidates as policies."""
    naive_wall = naive_cpu = ours_wall = ours_cpu = float("inf")
    names = sorted({*overrides[0], "max_milestones"})
    policies = [candidate_policies(h[0].policy, overrides) for h in histories]  # type: ignore[union-attr]
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        for h, ps in zip(histories, policies, strict=True):
            for p in ps:
                naive(h, p)
        naive_wall = min(naive_wall, time.perf_counter() - start)
        naive_cpu = min(naive_cpu, time.process_time() - cpu)
        start, cpu = time.perf_counter(), time.process_time()
        for h, ps in zip(histories, policies, strict=True):
            ours(Trace.of(h), ps, names)
        ours_wall = min(ours_wall, time.perf_counter() - start)
        ours_cpu = min(ours_cpu, time.process_time() - cpu)
    return (naive_wall, naive_cpu), (ours_wall, ours_cpu)


def baseline(rev: str) -> ModuleType:
    """main's ``tune`` module at ``rev``, with main's ``whatif`` beside it (from git)."""

    def load(name: str, path: str, replace: tuple[str, str] | None = None) -> ModuleType:
        source = subprocess.run(
            ["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout
        if replace:
            source = source.replace(*replace)
        spec = importlib.util.spec_from_loader(name, loader=None)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)
        return module

    load("bench_main_whatif", "governor/analysis/whatif.py")
    return load(
        "bench_main_tune",
        "governor/analysis/tune.py",
        ("from governor.analysis.whatif import", "from bench_main_whatif import"),
    )


_DATA: Corpus | None = None
_EVALUATE: Callable[..., Any] | None = None


def _chunk(job: tuple[list[int], list[dict[str, object]], Model]) -> list[float]:
    """Successes per candidate over some histories (one tail per censored pair)."""
    indices, overrides, model = job
    assert _DATA is not None
    assert _EVALUATE is not None
    sums = [0.0] * len(overrides)
    for i in indices:
        rng = random.Random(f"tune:0:{i}")
        for j, r in enumerate(_EVALUATE(_DATA.read(i), overrides, model, samples=1, rng=rng)):
            sums[j] += r.success
    return sums


def whole(
    data: Corpus,
    overrides: list[dict[str, object]],
    model: Model,
    how: Callable[..., Any],
    workers: int,
) -> tuple[float, float, list[float]]:
    """(wall seconds, CPU seconds of the processes, success per candidate): every history
    under every candidate."""
    global _DATA, _EVALUATE
    _DATA, _EVALUATE = data, how
    n = len(data)
    chunks = [list(range(i, min(i + 100, n))) for i in range(0, n, 100)]
    start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        parts = list(pool.map(_chunk, [(c, overrides, model) for c in chunks]))
    wall = time.perf_counter() - start
    used = time.process_time() - cpu + _children_cpu() - children  # the workers have ended
    return wall, used, [sum(p[j] for p in parts) / n for j in range(len(overrides))]


def _children_cpu() -> float:
    """CPU seconds (user + system) of the ended child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main_against_ours(
    data: Corpus, overrides: list[dict[str, object]], runs: int, workers: int, rev: str
) -> None:
    old = baseline(rev)
    tally = Tally.of(data)
    # the model main knows: exponential outages, uniform plan sizes, no repeated items
    model = dataclasses.replace(
        tally.model(), outage_lengths_s=(), plan_sizes=(), repeat_failed=0.0
    )
    olds, news, diffs, cpu_ratios = [], [], [], []
    for run in range(runs):
        t_old, c_old, s_old = whole(data, overrides, model, old.evaluate, workers)
        t_new, c_new, s_new = whole(data, overrides, model, evaluate, workers)
        olds.append(t_old)
        news.append(t_new)
        cpu_ratios.append(c_old / c_new)
        diffs.append(max(abs(a - b) for a, b in zip(s_old, s_new, strict=True)))
        print(
            f"  run {run + 1}: main {t_old:7.1f} s   this {t_new:7.1f} s   ratio {t_old / t_new:4.1f}x"
            f"   largest success difference {diffs[-1]:.3f}\n"
            f"         CPU: main {c_old:7.1f} s   this {c_new:7.1f} s   ratio {c_old / c_new:4.1f}x",
            flush=True,
        )
    ratios = [a / b for a, b in zip(olds, news, strict=True)]
    pairs = len(data) * len(overrides)
    print(
        f"  median: main {statistics.median(olds):.1f} s ({pairs / statistics.median(olds):,.0f} pairs/s), "
        f"this {statistics.median(news):.1f} s ({pairs / statistics.median(news):,.0f} pairs/s), "
        f"ratio {statistics.median(ratios):.1f}x (runs {min(ratios):.1f}-{max(ratios):.1f}x; target >= 3x); "
        f"CPU ratio {statistics.median(cpu_ratios):.1f}x (runs {min(cpu_ratios):.1f}-{max(cpu_ratios):.1f}x)"
    )


def truth(goals: int, override: dict[str, object]) -> float:
    wins = 0
    for h in simulate(Model(), with_overrides(RECORDED, override), goals=goals, seed=1):
        view = project(h)
        wins += decide(view, h[-1].at, with_ledger=False).status == "succeeded"
    return wins / goals


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--goals", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3, help="main-against-this runs")
    parser.add_argument("--truth-points", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument(
        "--only-reprojection", action="store_true", help="step 2 alone (naive against ours)"
    )
    parser.add_argument(
        "--whole-goals",
        type=int,
        default=None,
        help="step 3 on the first N histories only (default: all)",
    )
    parser.add_argument("--skip-default", action="store_true", help="skip steps 4 and 5")
    args = parser.parse_args(argv)
    data = corpus(args.goals)
    overrides = candidates(parse_grid(GRID))
    sample = [data.read(i) for i in range(min(args.sample, len(data)))]
    for h in sample:  # the two methods agree on every pair
        policies = [with_overrides(h[0].policy, o) for o in overrides]  # type: ignore[union-attr]
        assert ours(Trace.of(h), policies) == [
            t.final.status for t in (Trace.of(h).under(p, events=h) for p in policies)
        ]
    (t_naive, c_naive), (t_ours, c_ours) = side_by_side(sample, overrides, args.repeat)
    pairs = len(sample) * len(overrides)
    print(
        f"re-projection, {len(sample)} histories x {len(overrides)} policies ({pairs} pairs), best of {args.repeat}:"
    )
    print(f"  naive re-fold  {t_naive:7.2f} s  {pairs / t_naive:10,.0f} pairs/s")
    print(
        f"  governor       {t_ours:7.2f} s  {pairs / t_ours:10,.0f} pairs/s   ratio {t_naive / t_ours:5.1f}x (target >= 40x)"
    )
    print(
        f"  CPU time: naive {c_naive:.2f} s, governor {c_ours:.3f} s, ratio {c_naive / c_ours:5.1f}x",
        flush=True,
    )
    if args.only_reprojection:
        return
    print(
        f"whole corpus, {args.whole_goals or len(data)} histories x {len(overrides)} policies, "
        "1 tail per censored pair, "
        f"{args.workers} processes, main ({args.baseline}) against this checkout:",
        flush=True,
    )
    whole_data = data
    if args.whole_goals is not None:
        whole_data = dataclasses.replace(data, files=data.files[: args.whole_goals])
    main_against_ours(whole_data, overrides, args.runs, args.workers, args.baseline)
    if args.skip_default:
        return
    start = time.perf_counter()
    report = tune_corpus(data, parse_grid(GRID), workers=args.workers, seed=0)
    wall = time.perf_counter() - start
    total = report.histories * len(overrides)
    censored = sum(e.censored_share for e in report.estimates) / len(report.estimates)
    poor = [c.name for c in report.checks if c.poor]
    print(
        f"governor tune as by default (fit, model checks, {report.bootstrap} bootstrap replicates), "
        f"{report.histories} histories x {len(overrides)} policies:"
    )
    print(
        f"  {wall:.1f} s wall, {total / wall:,.0f} history-policy evaluations/s, {censored:.0%} of pairs censored, "
        f"model checks poor: {', '.join(poor) or 'none'}"
    )
    print(
        "  recommended: " + ", ".join(f"{k}={v}" for k, v in report.recommended.overrides.items())
    )
    step = max(1, len(report.estimates) // max(args.truth_points, 1))
    worst = 0.0
    for e in report.estimates[::step][: args.truth_points]:
        t = truth(args.goals, e.overrides)
        worst = max(worst, abs(e.success_rate - t))
        print(
            f"  validity {e.overrides}: estimate {e.success_rate:.3f} [{e.success_ci[0]:.3f}, "
            f"{e.success_ci[1]:.3f}], truth {t:.3f}, diff {e.success_rate - t:+.3f}"
        )
    print(f"  largest |estimate - truth| over {args.truth_points} points: {worst:.3f} (bar: 0.03)")


if __name__ == "__main__":
    main()
