"""Are forecast's and tune's 95 % intervals honest, extrapolated rows included? (issue 33)

Each test writes a corpus from a world under a tight recorded policy, estimates a grid of
policies looser and tighter than it, and computes the truth by simulating every policy
directly in the same world:

    * ``forecast``'s interval for the median cost per goal covers the true median (over
      fresh goals of the world) for at least 90 % of the grid;
    * ``tune``'s 95 % intervals of the success rate cover the truth (on the corpus's own
      seeds: common random numbers, as ``bench/tune_validity.py``) in at least 90 % of the
      rows, in governor's own world (``simulate``) and in one whose items get harder with
      every replan (``drift``: a structure tune's model does not assume).

The default sizes keep each test to about a minute on one core and start no process (the
fast tier); ``test_forecast_validity_grids.py`` runs the larger grid, with the rival world
(heavy-tailed outages, goals of varied difficulty), in worker processes as ``tune
--workers`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.tune_validity import RECORDED, compare, summarise, truth, write_corpus
from bench.worlds import world
from governor.analysis.corpus import corpus_of
from governor.analysis.forecast import forecasts
from governor.analysis.grid import candidates
from governor.analysis.holdout import weighted_quantile
from governor.analysis.tune_corpus import tune_corpus
from governor.core.fold import project
from governor.core.policy_input import with_overrides

SEED = 7
SLACK = 1e-9


def _silent(_done: int, _total: int) -> None:
    pass


def grid_of(replans: list[int], uncharged: list[int], attempts: list[int]) -> dict[str, list[Any]]:
    return {
        "max_replans": replans,
        "max_uncharged_replans": uncharged,
        "max_attempts": attempts,
    }


def tune_coverage(
    name: str, goals: int, grid: dict[str, list[Any]], folder: Path, *, workers: int = 1
) -> float:
    """The share of the grid's rows whose 95 % interval covers the truth (``workers`` > 1:
    tune and the truth in that many processes)."""
    make = world(name)
    write_corpus(make, goals, SEED, folder)
    report = tune_corpus(corpus_of([str(folder)]), grid, workers=workers, seed=SEED, checks=False)
    overrides = candidates(grid)
    truths = truth(make, overrides, SEED, range(goals), workers=workers, progress=_silent)
    rows = compare(report.estimates, overrides, truths, goals)
    summary, _ = summarise(rows, report.recommended, truths)
    assert sum(r["basis"] == "extrapolated" for r in rows) >= len(rows) // 2
    return float(summary["coverage"])


@pytest.mark.parametrize("name", ["simulate", "drift"])
def test_tune_intervals_cover_the_truth_extrapolated_rows_included(
    name: str, tmp_path: Path
) -> None:
    grid = grid_of([2, 4, 7], [0, 4], [1, 4])
    coverage = tune_coverage(name, 250, grid, tmp_path)
    assert coverage >= 0.9, coverage


def _median_cost(name: str, overrides: dict[str, Any], goals: range) -> float:
    make = world(name)
    policy = with_overrides(RECORDED, overrides)
    costs = [project(make(policy, SEED, g)).cost_usd for g in goals]
    return weighted_quantile([(1.0, c) for c in costs], 0.5)


@pytest.mark.parametrize("name", ["simulate"])
def test_forecast_covers_the_true_median_cost(name: str, tmp_path: Path) -> None:
    goals = 250
    write_corpus(world(name), goals, SEED, tmp_path)
    overrides = candidates(grid_of([2, 3, 5, 7], [2], [1, 2, 4]))
    policies = [with_overrides(RECORDED, o) for o in overrides]
    found = forecasts(corpus_of([str(tmp_path)]), policies, seed=SEED)
    fresh = range(goals, goals + 600)  # the population: goals the corpus never saw
    covered = []
    for o, fc in zip(overrides, found, strict=True):
        true = _median_cost(name, o, fresh)
        low, high = fc.quantities["cost_usd"].median_ci
        assert fc.histories == goals
        assert low <= fc.quantities["cost_usd"].median <= high
        covered.append(low - SLACK <= true <= high + SLACK)
    assert sum(covered) >= 0.9 * len(covered), list(zip(overrides, covered, strict=True))
    assert {fc.basis for fc in found} >= {"observed", "extrapolated"}
