"""tune's 95 % intervals on a larger grid, in three worlds, extrapolated rows included (issue 33).

The larger sibling of ``test_forecast_validity.py``: 36 policies over 800 goals, in
governor's own world, in one whose items get harder with every replan (``drift``) and in
the rival world (heavy-tailed outages, goals of varied difficulty) — two structures tune's
model does not assume. tune and the truth run in two worker processes, as ``tune
--workers 2`` does: the process tier.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analysis.test_forecast_validity import grid_of, tune_coverage


@pytest.mark.slow
@pytest.mark.parametrize("name", ["simulate", "drift", "rival"])
def test_tune_intervals_cover_the_truth_on_a_larger_grid(name: str, tmp_path: Path) -> None:
    grid = grid_of([2, 3, 5, 7], [0, 2, 4], [1, 2, 4])
    coverage = tune_coverage(name, 800, grid, tmp_path, workers=2)
    assert coverage >= 0.9, coverage
