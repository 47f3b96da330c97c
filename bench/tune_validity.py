"""Benchmark: is the tuner right? Tune a world's corpus and check every row against the truth.

Run: ``.venv/bin/python -m bench.tune_validity --world rival --goals 3000 [--grid F=A..B ...
| --grid-points N] [--set NAME=VALUE ...] [--truth-goals N] [--fresh-truth] [--samples K]
[--workers W] [--seed S] [--out DIR] [--json]``

Method (docs/tuning.md, "Validation against an independent world"):
    1. **Corpus.** ``--goals`` histories from the world (``bench.worlds``: ``simulate``,
       governor's own model, or ``rival``, an independent one) under a tight recorded
       policy, written as JSON Lines to a scratch folder (``--out`` keeps them).
    2. **Tune.** ``governor.analysis.tune_corpus.tune_corpus`` - the library call behind
       ``governor tune`` - over the grid (default: 120 points, max_replans 2..7 x
       max_uncharged_replans 0..4 x max_attempts 1..4, tighter and looser than the recorded
       3 / 2 / 2 in each dimension).
    3. **Truth.** Every grid policy simulated directly in the same world on
       ``--truth-goals`` goals (default: as many as the corpus). By default these are the
       corpus's own goals first (same seeds: common random numbers, so the comparison
       isolates the tuner's model error from the luck of the corpus's draw), then further
       goals; ``--fresh-truth`` takes goals disjoint from the corpus instead (a population
       truth: noisier, and its own error is printed per row).
    4. **Criteria** (issue 16): (a) every estimate within 5 points of the truth, or the
       truth inside its 95 % interval and the row flagged extrapolated (the estimate's
       ``basis``, when it has one); (b) at least 95 % of the intervals cover the truth;
       (c) the recommendation is on the true Pareto frontier (success against cost per goal,
       as ``governor.analysis.estimate.pareto`` defines it). Each is printed PASS or FAIL; a
       completed run exits 0 whatever they say (it is a benchmark, not a test).

Progress goes to stderr; ``--json`` prints one object (rows, summary, criteria, runtimes).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Final

from bench.worlds import WORLDS, GoalMaker, world
from governor.analysis.corpus import corpus_of
from governor.analysis.grid import candidates, parse_grid
from governor.analysis.tune_corpus import tune_corpus
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.rules.decide import decide
from governor.errors import GovernorError, InputError
from governor.store.jsonl import write_history

RECORDED: Final = Policy(
    max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2
)
GRID: Final = ["max_replans=2..7", "max_uncharged_replans=0..4", "max_attempts=1..4"]
"""The default grid: 6 x 5 x 4 = 120 points (``max_replans`` from 2: SPEC §12.1 refuses 1)."""
TOLERANCE: Final = 0.05
COVERAGE: Final = 0.95
SLACK: Final = 1e-9
"""Interval ends are compared with this slack: a widened interval's ends are sums of
floating-point terms (the Wilson interval itself is exactly closed at 0 and at n)."""
CHUNK: Final = 50
"""Goals per truth task (each task simulates them under every policy)."""


class Meter:
    """Progress on stderr: at most one line every two seconds, and the last one."""

    def __init__(self, what: str) -> None:
        self.what, self.last, self.start = what, 0.0, time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - self.last < 2.0:
            return
        self.last = now
        print(
            f"  {self.what}: {done:,}/{total:,} ({now - self.start:.0f} s)",
            file=sys.stderr,
            flush=True,
        )


def write_corpus(make: GoalMaker, goals: int, seed: int, folder: Path) -> int:
    """The corpus: ``goals`` histories of a world under ``RECORDED``; returns the events."""
    meter, events = Meter("corpus goals"), 0
    folder.mkdir(parents=True, exist_ok=True)
    for goal in range(goals):
        history = make(RECORDED, seed, goal)
        with (folder / f"{history[0].goal_id}.jsonl").open("wb") as handle:
            events += write_history(history, handle)
        meter(goal + 1, goals)
    return events


def grid_of(points: int) -> list[str]:
    """A product grid of about ``points`` policies cut from ``GRID``: each dimension keeps
    its two ends (tighter and looser than the recorded policy) and values evenly between.

    Raises:
        InputError: for fewer than 8 or more points than ``GRID`` holds.
    """
    full = parse_grid(GRID)
    sizes = [len(v) for v in full.values()]
    if not 8 <= points <= math.prod(sizes):
        raise InputError(f"--grid-points {points}: choose 8 to {math.prod(sizes)}")
    shapes = itertools.product(*(range(2, n + 1) for n in sizes))
    best = min(
        (shape for shape in shapes if math.prod(shape) >= points),
        key=lambda shape: (math.prod(shape), max(shape) - min(shape)),
    )
    specs = []
    for (name, values), k in zip(full.items(), best, strict=True):
        picked = [values[round(i * (len(values) - 1) / (k - 1))] for i in range(k)]
        specs.append(f"{name}={','.join(str(v) for v in picked)}")
    return specs


# ---------------------------------------------------------------- the truth


def truth_chunk(
    make: GoalMaker, overrides: Sequence[dict[str, Any]], seed: int, goals: Sequence[int]
) -> list[tuple[float, float]]:
    """(successes, summed cost) per policy over ``goals``, simulated directly."""
    policies = [with_overrides(RECORDED, o) for o in overrides]
    sums = [(0.0, 0.0)] * len(policies)
    for goal in goals:
        for j, policy in enumerate(policies):
            history = make(policy, seed, goal)
            view = project(history)
            won = decide(view, history[-1].at, with_ledger=False).status == "succeeded"
            s, c = sums[j]
            sums[j] = (s + won, c + view.cost_usd)
    return sums


def truth(
    make: GoalMaker,
    overrides: Sequence[dict[str, Any]],
    seed: int,
    goals: Sequence[int],
    *,
    workers: int,
    progress: Callable[[int, int], None],
) -> list[tuple[float, float]]:
    """(success rate, cost per goal) per policy, over ``goals``, in ``workers`` processes."""
    chunks = [list(goals[i : i + CHUNK]) for i in range(0, len(goals), CHUNK)]
    totals = [(0.0, 0.0)] * len(overrides)
    done = 0

    def merge(part: list[tuple[float, float]], size: int) -> None:
        nonlocal totals, done
        totals = [(a + x, b + y) for (a, b), (x, y) in zip(totals, part, strict=True)]
        done += size
        progress(done, len(goals))

    if workers <= 1:
        for chunk in chunks:
            merge(truth_chunk(make, overrides, seed, chunk), len(chunk))
    else:
        context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            futures = {
                pool.submit(truth_chunk, make, overrides, seed, chunk): len(chunk)
                for chunk in chunks
            }
            for future in as_completed(futures):
                merge(future.result(), futures[future])
    n = len(goals)
    return [(s / n, c / n) for s, c in totals]


# ---------------------------------------------------------------- comparing


def estimate_fields(estimate: object) -> dict[str, Any]:
    """Every field of an estimate as JSON values, whatever fields it has grown."""
    if dataclasses.is_dataclass(estimate) and not isinstance(estimate, type):
        names = [f.name for f in dataclasses.fields(estimate)]
    else:
        names = [n for n in vars(estimate) if not n.startswith("_")]
    return {n: _json(getattr(estimate, n)) for n in names}


def _json(value: object) -> Any:
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return estimate_fields(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def dominated(i: int, points: Sequence[tuple[float, float]]) -> list[int]:
    """The points that beat point ``i`` on both success (higher) and cost (lower), as
    ``governor.analysis.estimate.pareto`` defines the frontier."""
    s, c = points[i]
    return [j for j, (s2, c2) in enumerate(points) if s2 >= s and c2 <= c and (s2 > s or c2 < c)]


def _key(overrides: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, repr(v)) for k, v in overrides.items()))


def compare(
    estimates: Sequence[object],
    overrides: Sequence[dict[str, Any]],
    truths: Sequence[tuple[float, float]],
    truth_goals: int,
) -> list[dict[str, Any]]:
    """One row per grid policy: the estimate beside the truth."""
    by_key = {_key(getattr(e, "overrides")): e for e in estimates}  # noqa: B009 - any estimate type
    frontier = [not dominated(i, truths) for i in range(len(truths))]
    rows = []
    for j, override in enumerate(overrides):
        e = by_key[_key(override)]
        fields = estimate_fields(e)
        success, (low, high) = float(fields["success_rate"]), fields["success_ci"]
        true_success, true_cost = truths[j]
        error = success - true_success
        covered = low - SLACK <= true_success <= high + SLACK
        basis = fields.get("basis")
        rows.append(
            {
                "policy": override,
                "estimate": success,
                "interval": [low, high],
                "truth": true_success,
                "truth_se": math.sqrt(true_success * (1 - true_success) / truth_goals),
                "error": error,
                "covered": covered,
                "basis": basis,
                "censored_share": fields.get("censored_share"),
                "cost_estimate": fields.get("cost_usd"),
                "cost_truth": true_cost,
                "pareto_estimate": fields.get("pareto"),
                "pareto_truth": frontier[j],
                "ok": abs(error) <= TOLERANCE or (covered and basis == "extrapolated"),
                "fields": fields,
            }
        )
    return rows


def summarise(
    rows: list[dict[str, Any]], recommended: object, truths: Sequence[tuple[float, float]]
) -> tuple[dict[str, Any], dict[str, bool]]:
    """The summary figures and the three criteria of issue 16."""
    errors = [r["error"] for r in rows]
    covered = sum(r["covered"] for r in rows) / len(rows)
    failing = [r for r in rows if not r["ok"]]
    keys = [_key(r["policy"]) for r in rows]
    pick = keys.index(_key(getattr(recommended, "overrides")))  # noqa: B009
    beaten_by = dominated(pick, truths)
    summary = {
        "rows": len(rows),
        "max_abs_error": max(abs(e) for e in errors),
        "mean_error": sum(errors) / len(errors),
        "rows_over_tolerance": sum(abs(e) > TOLERANCE for e in errors),
        "coverage": covered,
        "rows_failing": len(failing),
        "failing_policies": [r["policy"] for r in failing],
        "flagged_extrapolated": sum(r["basis"] == "extrapolated" for r in rows),
        "has_basis": any(r["basis"] is not None for r in rows),
        "recommended": rows[pick]["policy"],
        "recommended_truth": {"success": truths[pick][0], "cost_usd": truths[pick][1]},
        "recommended_dominated_by": [
            {"policy": rows[j]["policy"], "success": truths[j][0], "cost_usd": truths[j][1]}
            for j in beaten_by
        ],
        "true_frontier": [r["policy"] for r in rows if r["pareto_truth"]],
    }
    criteria = {
        "every_row_within_5_points_or_covered_and_extrapolated": not failing,
        "coverage_at_least_95_percent": covered >= COVERAGE,
        "recommendation_on_true_frontier": not beaten_by,
    }
    return summary, criteria


# ---------------------------------------------------------------- printing


def _policy(p: dict[str, Any]) -> str:
    short = {"max_replans": "mr", "max_uncharged_replans": "mur", "max_attempts": "ma"}
    return " ".join(f"{short.get(k, k)}={v}" for k, v in p.items())


def format_table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'policy':<22} {'estimate':>8} {'95% interval':>15} {'truth':>7} {'±se':>5} "
        f"{'error':>7} {'cov':>4} {'basis':<12} {'cens':>5} {'cost est':>8} {'true':>6} "
        f"{'front':>6} {'ok':>4}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        low, high = r["interval"]
        front = ("E" if r["pareto_estimate"] else ".") + ("T" if r["pareto_truth"] else ".")
        cens = r["censored_share"]
        lines.append(
            f"{_policy(r['policy']):<22} {r['estimate']:8.3f} [{low:6.3f},{high:6.3f}] "
            f"{r['truth']:7.3f} {r['truth_se']:5.3f} {r['error']:+7.3f} "
            f"{'yes' if r['covered'] else 'NO':>4} {r['basis'] or '-':<12} "
            f"{'-' if cens is None else f'{cens:5.2f}':>5} {r['cost_estimate']:8.3f} "
            f"{r['cost_truth']:6.3f} {front:>6} {'ok' if r['ok'] else 'FAIL':>4}"
        )
    return "\n".join(lines)


def format_summary(result: dict[str, Any]) -> str:
    s, c, t = result["summary"], result["criteria"], result["runtime_s"]
    lines = [
        f"world {result['world']}: {result['goals']} goals recorded under "
        f"{_policy(result['recorded_policy'])}, {s['rows']} grid policies, truth over "
        f"{result['truth_goals']} goals per policy ({result['truth_goals_kind']})"
        + "".join(f", {k}={v}" for k, v in result.get("world_settings", {}).items()),
        f"  largest |estimate - truth|: {s['max_abs_error']:.3f}   mean error: {s['mean_error']:+.3f}"
        f"   rows over {TOLERANCE:.0%}: {s['rows_over_tolerance']}",
        f"  intervals covering the truth: {s['coverage']:.1%}   rows flagged extrapolated: "
        f"{s['flagged_extrapolated']}"
        + ("" if s["has_basis"] else " (the estimates carry no basis)"),
        f"  recommended: {_policy(s['recommended'])} (true success "
        f"{s['recommended_truth']['success']:.3f}, cost ${s['recommended_truth']['cost_usd']:.3f})",
    ]
    for d in s["recommended_dominated_by"][:5]:
        lines.append(
            f"    beaten on the truth by {_policy(d['policy'])}: success {d['success']:.3f}, "
            f"cost ${d['cost_usd']:.3f}"
        )
    names = {
        "every_row_within_5_points_or_covered_and_extrapolated": "every row within 5 points, or covered and flagged extrapolated"
        + f" ({s['rows_failing']} of {s['rows']} rows fail)",
        "coverage_at_least_95_percent": f"at least 95 % of intervals cover the truth ({s['coverage']:.1%})",
        "recommendation_on_true_frontier": "the recommendation is on the true Pareto frontier",
    }
    for key, ok in c.items():
        lines.append(f"  {'PASS' if ok else 'FAIL'}  {names[key]}")
    lines.append("  runtime: " + ", ".join(f"{k} {v:.0f} s" for k, v in t.items()))
    return "\n".join(lines)


# ---------------------------------------------------------------- the run


def run(args: argparse.Namespace) -> dict[str, Any]:
    specs = args.grid or (grid_of(args.grid_points) if args.grid_points else GRID)
    grid = parse_grid(specs)
    settings = dict(s.partition("=")[::2] for s in args.set or [])
    make = world(args.world, settings)
    overrides = candidates(grid)
    timer: dict[str, float] = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tune-validity-") as scratch:
        folder = Path(args.out) if args.out else Path(scratch)
        print(f"{args.world}: writing {args.goals} histories to {folder}", file=sys.stderr)
        events = write_corpus(make, args.goals, args.seed, folder)
        timer["corpus"] = time.perf_counter() - start
        print(f"tuning {args.goals} histories x {len(overrides)} policies", file=sys.stderr)
        mark = time.perf_counter()
        report = tune_corpus(
            corpus_of([str(folder)]),
            grid,
            samples=args.samples,
            workers=args.workers,
            seed=args.seed,
            progress=Meter("tune histories"),
        )
        timer["tune"] = time.perf_counter() - mark
    first = args.goals if args.fresh_truth else 0
    goals = range(first, first + args.truth_goals)
    print(
        f"truth: {len(overrides)} policies x {args.truth_goals} goals, simulated directly",
        file=sys.stderr,
    )
    mark = time.perf_counter()
    truths = truth(
        make, overrides, args.seed, goals, workers=args.workers, progress=Meter("truth goals")
    )
    timer["truth"] = time.perf_counter() - mark
    timer["total"] = time.perf_counter() - start
    rows = compare(report.estimates, overrides, truths, args.truth_goals)
    summary, criteria = summarise(rows, report.recommended, truths)
    return {
        "world": args.world,
        "world_settings": settings,
        "goals": args.goals,
        "events": events,
        "seed": args.seed,
        "samples": args.samples,
        "recorded_policy": {
            k: getattr(RECORDED, k)
            for k in (
                "max_replans",
                "max_uncharged_replans",
                "max_attempts",
                "max_uncharged_attempts",
            )
        },
        "grid": specs,
        "truth_goals": args.truth_goals,
        "truth_goals_kind": "disjoint from the corpus"
        if args.fresh_truth
        else "the corpus's seeds first",
        "recommended_why": getattr(report, "why", None),
        "rows": rows,
        "summary": summary,
        "criteria": criteria,
        "runtime_s": timer,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--world", choices=sorted(WORLDS), required=True)
    parser.add_argument("--goals", type=int, default=3000)
    parser.add_argument(
        "--grid",
        action="append",
        metavar="FIELD=A..B",
        help=f"repeatable (default: {' '.join(GRID)})",
    )
    parser.add_argument(
        "--grid-points",
        type=int,
        metavar="N",
        help="about N policies cut evenly from the default grid (8 to 120)",
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="NAME=VALUE",
        help="change a number of the world's model (repeatable), e.g. hard_share=0.5",
    )
    parser.add_argument("--truth-goals", type=int, default=None, help="default: --goals")
    parser.add_argument(
        "--fresh-truth", action="store_true", help="truth goals disjoint from the corpus"
    )
    parser.add_argument("--samples", type=int, default=2, help="the tuner's Monte Carlo tails")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", help="keep the corpus in this folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.goals < 1 or args.workers < 1 or args.samples < 1:
        parser.error("--goals, --workers and --samples must be at least 1")
    args.truth_goals = args.truth_goals or args.goals
    try:
        result = run(args)
    except GovernorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result))
    else:
        print(format_table(result["rows"]))
        print(format_summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
