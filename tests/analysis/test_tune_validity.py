"""The tuner's validation harness (bench/tune_validity.py) runs end to end on a tiny corpus.

Only its shape is checked here (the table, the summary, the criteria it reports); whether
the tuner meets them is the benchmark's business at full size (docs/tuning.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bench.tune_validity import GRID, RECORDED, compare, dominated, grid_of, summarise
from bench.worlds import world
from governor.analysis.grid import candidates, parse_grid
from governor.core.events import PlanFailed
from governor.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SMALL = [
    "--goals",
    "60",
    "--grid",
    "max_replans=2,4",
    "--grid",
    "max_uncharged_replans=1,3",
    "--grid",
    "max_attempts=1,3",
    "--workers",
    "1",
]
CRITERIA = {
    "every_row_within_5_points_or_covered_and_extrapolated",
    "coverage_at_least_95_percent",
    "recommendation_on_true_frontier",
}


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.tune_validity", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("world", ["rival", "simulate"])
def test_json_carries_a_row_per_policy_the_summary_and_the_criteria(world: str) -> None:
    done = harness("--world", world, *SMALL, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["world"] == world
    assert len(result["rows"]) == 8
    for row in result["rows"]:
        assert set(row["policy"]) == {"max_replans", "max_uncharged_replans", "max_attempts"}
        low, high = row["interval"]
        assert 0 <= low <= row["estimate"] <= high <= 1
        assert 0 <= row["truth"] <= 1
        assert row["error"] == pytest.approx(row["estimate"] - row["truth"])
        assert row["covered"] == (low <= row["truth"] <= high)
    assert set(result["criteria"]) == CRITERIA
    summary = result["summary"]
    assert summary["max_abs_error"] == pytest.approx(max(abs(r["error"]) for r in result["rows"]))
    assert 0 <= summary["coverage"] <= 1
    assert summary["recommended"] in [r["policy"] for r in result["rows"]]
    assert set(result["runtime_s"]) == {"corpus", "tune", "truth", "total"}
    assert "truth goals" in done.stderr  # progress on stderr


def test_text_prints_the_table_and_a_verdict_per_criterion() -> None:
    done = harness("--world", "rival", "--goals", "60", "--grid-points", "8", "--workers", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:3] == ["policy", "estimate", "95%"]
    assert sum(1 for line in lines if line.startswith("mr=")) == 8
    verdicts = [line.split()[0] for line in lines if line.strip().startswith(("PASS", "FAIL"))]
    assert len(verdicts) == 3


def test_a_bad_grid_is_one_line_and_exit_2() -> None:
    done = harness("--world", "rival", "--goals", "5", "--grid", "max_replans=9..1")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "error:" in done.stderr


@dataclass(frozen=True)
class Grown:
    """An estimate with fields the tuner may add (a basis, a model check)."""

    overrides: dict[str, Any]
    success_rate: float
    success_ci: tuple[float, float]
    cost_usd: float
    pareto: bool = False
    censored_share: float = 0.0
    basis: str | None = None
    checks: dict[str, float] = field(default_factory=dict)


def test_rows_read_any_estimate_and_the_extrapolated_escape_needs_coverage() -> None:
    overrides = [{"max_replans": 1}, {"max_replans": 2}, {"max_replans": 3}]
    estimates = [
        Grown(overrides[0], 0.50, (0.45, 0.55), 1.0, basis="observed"),
        Grown(overrides[1], 0.70, (0.55, 0.85), 2.0, basis="extrapolated"),  # off 10, covered
        Grown(overrides[2], 0.70, (0.65, 0.75), 3.0, basis="extrapolated", checks={"x": 1.0}),
    ]
    truths = [(0.52, 1.0), (0.60, 2.0), (0.58, 2.5)]
    rows = compare(estimates, overrides, truths, truth_goals=1000)
    assert [r["ok"] for r in rows] == [True, True, False]
    assert rows[2]["fields"]["checks"] == {"x": 1.0}
    summary, criteria = summarise(rows, estimates[2], truths)
    assert summary["rows_failing"] == 1
    assert summary["coverage"] == pytest.approx(2 / 3)
    assert summary["recommended_dominated_by"][0]["policy"] == {"max_replans": 2}
    assert criteria == {
        "every_row_within_5_points_or_covered_and_extrapolated": False,
        "coverage_at_least_95_percent": False,
        "recommendation_on_true_frontier": False,
    }


def test_the_frontier_is_success_up_and_cost_down() -> None:
    points = [(0.5, 1.0), (0.6, 1.0), (0.6, 0.9), (0.4, 0.5)]
    assert dominated(0, points) == [1, 2]
    assert dominated(1, points) == [2]
    assert dominated(2, points) == []
    assert dominated(3, points) == []


def test_a_world_setting_changes_the_model_and_an_unknown_one_is_refused() -> None:
    make = world("rival", {"planner_missing": "1"})
    history = make(RECORDED, 1, 0)
    assert isinstance(history[-1], PlanFailed)
    assert history[-1].failure_class == "environment"
    assert world("simulate", {"item_a": "3"})(RECORDED, 1, 0)[0].goal_id == "sim-000000"
    with pytest.raises(InputError, match="no number 'nope'"):
        world("rival", {"nope": "1"})
    done = harness("--world", "rival", "--goals", "5", "--set", "hard_share=lots")
    assert done.returncode == 2
    assert "hard_share=lots: not a float" in done.stderr


@pytest.mark.parametrize("points", [8, 12, 30, 100, 120])
def test_grid_points_cut_the_default_grid_keeping_both_ends(points: int) -> None:
    grid = parse_grid(grid_of(points))
    assert points <= len(candidates(grid)) < points * 1.5
    full = parse_grid(GRID)
    for name, values in grid.items():
        assert values[0] == full[name][0]
        assert values[-1] == full[name][-1]
        assert values[0] < getattr(RECORDED, name) < values[-1]
    with pytest.raises(InputError, match="choose 8 to 120"):
        grid_of(121)
