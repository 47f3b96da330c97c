"""Tuner validity (SPEC §9): on a simulated corpus, estimates match direct simulation.

The truth for each candidate is computable: simulate the same generative model directly
under that policy, same seeds. The tuner only sees the corpus recorded under one policy.
"""

from __future__ import annotations

import random

import pytest

from governor.analysis.estimate import aggregate, pareto, recommend
from governor.analysis.fit import fit
from governor.analysis.grid import candidates, parse_grid
from governor.analysis.model import Model
from governor.analysis.simulate import simulate
from governor.analysis.tune import evaluate
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.rules.decide import decide
from governor.errors import PolicyError

GOALS, SEED = 600, 11
RECORDED = Policy(max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2)
GRID = {"max_replans": [2, 4, 6], "max_uncharged_replans": [1, 3], "max_attempts": [1, 3]}


def truth(override: dict[str, int]) -> tuple[float, float]:
    """(success rate, cost per goal) simulating directly under the candidate."""
    succeeded = cost = 0.0
    for history in simulate(Model(), with_overrides(RECORDED, override), goals=GOALS, seed=SEED):
        view = project(history)
        succeeded += decide(view, history[-1].at, with_ledger=False).status == "succeeded"
        cost += view.cost_usd
    return succeeded / GOALS, cost / GOALS


@pytest.fixture(scope="module")
def estimates() -> list:  # type: ignore[type-arg]
    corpus = list(simulate(Model(), RECORDED, goals=GOALS, seed=SEED))
    model = fit(corpus)
    overrides = candidates(GRID)
    rng = random.Random(1)
    per_goal = [evaluate(h, overrides, model, samples=2, rng=rng) for h in corpus]
    return pareto([aggregate(o, [row[j] for row in per_goal]) for j, o in enumerate(overrides)])


@pytest.mark.slow
def test_every_estimate_is_within_3_points_of_the_truth_and_the_pick_is_on_the_true_frontier(
    estimates: list,
) -> None:  # type: ignore[type-arg]
    true = {tuple(e.overrides.items()): truth(e.overrides) for e in estimates}
    for e in estimates:
        success, _ = true[tuple(e.overrides.items())]
        assert abs(e.success_rate - success) <= 0.03, (e.overrides, e.success_rate, success)
    pick, why = recommend(estimates)
    s, c = true[tuple(pick.overrides.items())]
    beaten_by = [o for o, (s2, c2) in true.items() if s2 >= s and c2 <= c and (s2 > s or c2 < c)]
    assert beaten_by == [], (pick.overrides, beaten_by)
    assert "Pareto frontier" in why


def test_known_outcomes_have_no_censoring_and_looser_ones_are_completed(estimates: list) -> None:  # type: ignore[type-arg]
    by = {tuple(sorted(e.overrides.items())): e for e in estimates}
    same = by[(("max_attempts", 3), ("max_replans", 2), ("max_uncharged_replans", 1))]
    assert same.censored_share < 0.5
    looser = by[(("max_attempts", 3), ("max_replans", 6), ("max_uncharged_replans", 3))]
    assert looser.censored_share > 0.2
    assert looser.success_rate > same.success_rate


def test_grids_parse_ranges_steps_and_lists() -> None:
    assert parse_grid(
        ["max_replans=1..4", "upstream_backoff.initial_s=10..30:10", "auto_apply=true,false"]
    ) == {
        "max_replans": [1, 2, 3, 4],
        "upstream_backoff.initial_s": [10, 20, 30],
        "auto_apply": [True, False],
    }
    with pytest.raises(PolicyError, match="low <= high"):
        parse_grid(["max_replans=5..1"])
    with pytest.raises(PolicyError, match=r"is not field=a\.\.b"):
        parse_grid(["max_replans"])
