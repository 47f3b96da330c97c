"""Benchmark: tuning 10,000 histories x 100 grid points, against a naive re-fold.

Run: ``.venv/bin/python -m bench.tune [--goals 10000] [--sample 300] [--truth-points 6]``

Method (figures go to docs/performance.md):
    1. Simulate a corpus of ``--goals`` histories under a tight policy (seeded), into
       ``bench/out/tune-<goals>/`` (reused).
    2. Re-projection, side by side on the same ``--sample`` histories x the 100-point grid
       (max_replans 1..10 x max_uncharged_replans 0..9), interleaved, best of ``--repeat``:
         naive  for every history and policy: re-fold the whole history through the
                projection, deciding (with the full ledger) after every event
         ours   analyse each history once (``Trace``), skip policies it cannot tell apart
                (``Demands.key``), decide only at recorded actions, stop at the divergence
       Both give the same outcome per pair (checked).
    3. The full tuner (``tune_corpus``: fit, re-projection, Monte Carlo for censored
       tails with 1 sample, both cores) on the whole corpus x the grid: wall time and
       history-policy evaluations per second.
    4. Validity at scale: for ``--truth-points`` grid points, simulate the same model
       directly under the policy (same seeds) and report |estimate - truth|.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from governor.analysis.corpus import Corpus, corpus_of
from governor.analysis.simulate import Model, simulate
from governor.analysis.tune import candidates, parse_grid
from governor.analysis.tuning import tune_corpus
from governor.analysis.whatif import Trace, _retarget
from governor.core.decide import decide
from governor.core.events import Event
from governor.core.policy import Policy, with_overrides
from governor.core.view import GoalView, evolve, project
from governor.store.jsonl import write_history

OUT = Path(__file__).resolve().parent / "out"
RECORDED = Policy(max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2)
GRID = ["max_replans=1..10", "max_uncharged_replans=0..9"]


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
    view, recorded = GoalView(), events[0].policy  # type: ignore[union-attr]
    status = ""
    for event in events:
        retargeted = _retarget(event, policy, recorded, view)
        if retargeted is not None:
            evolve(view, retargeted)
        status = decide(view, event.at).status
    return status


def ours(trace: Trace, policies: list[Policy]) -> list[str]:
    seen: dict[tuple[object, ...], str] = {}
    out = []
    for policy in policies:
        key = trace.demands.key(policy)
        if key not in seen:
            seen[key] = trace.under(policy).final.status
        out.append(seen[key])
    return out


def side_by_side(
    histories: list[list[Event]], overrides: list[dict[str, object]], repeat: int
) -> tuple[float, float]:
    best_naive = best_ours = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for h in histories:
            policies = [with_overrides(h[0].policy, o) for o in overrides]  # type: ignore[union-attr]
            for p in policies:
                naive(h, p)
        best_naive = min(best_naive, time.perf_counter() - start)
        start = time.perf_counter()
        for h in histories:
            policies = [with_overrides(h[0].policy, o) for o in overrides]  # type: ignore[union-attr]
            ours(Trace.of(h), policies)
        best_ours = min(best_ours, time.perf_counter() - start)
    return best_naive, best_ours


def truth(goals: int, override: dict[str, object]) -> float:
    wins = 0
    for h in simulate(Model(), with_overrides(RECORDED, override), goals=goals, seed=1):
        view = project(h)
        wins += decide(view, h[-1].at, with_ledger=False).status == "succeeded"
    return wins / goals


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--truth-points", type=int, default=6)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    data = corpus(args.goals)
    overrides = candidates(parse_grid(GRID))
    sample = [data.read(i) for i in range(min(args.sample, len(data)))]
    for h in sample:  # the two methods agree on every pair
        policies = [with_overrides(h[0].policy, o) for o in overrides]  # type: ignore[union-attr]
        assert ours(Trace.of(h), policies) == [
            t.final.status for t in (Trace.of(h).under(p) for p in policies)
        ]
    t_naive, t_ours = side_by_side(sample, overrides, args.repeat)
    pairs = len(sample) * len(overrides)
    print(
        f"re-projection, {len(sample)} histories x {len(overrides)} policies ({pairs} pairs), best of {args.repeat}:"
    )
    print(f"  naive re-fold  {t_naive:7.2f} s  {pairs / t_naive:10,.0f} pairs/s")
    print(
        f"  governor       {t_ours:7.2f} s  {pairs / t_ours:10,.0f} pairs/s   ratio {t_naive / t_ours:5.1f}x (target >= 20x)"
    )
    start = time.perf_counter()
    report = tune_corpus(data, parse_grid(GRID), samples=1, workers=args.workers, seed=0)
    wall = time.perf_counter() - start
    total = report.histories * len(overrides)
    censored = sum(e.censored_share for e in report.estimates) / len(report.estimates)
    print(
        f"full tune (fit + re-projection + Monte Carlo), {report.histories} histories x {len(overrides)} policies:"
    )
    print(
        f"  {wall:.1f} s wall, {total / wall:,.0f} history-policy evaluations/s, {censored:.0%} of pairs censored"
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
            f"  validity {e.overrides}: estimate {e.success_rate:.3f}, truth {t:.3f}, diff {e.success_rate - t:+.3f}"
        )
    print(f"  largest |estimate - truth| over {args.truth_points} points: {worst:.3f} (bar: 0.03)")


if __name__ == "__main__":
    main()
