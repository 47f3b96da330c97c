"""The holdout (governor.analysis.holdout): where it cuts, what it measures, how it widens."""

from __future__ import annotations

import pytest

from governor.analysis.estimate import Result, Sums, interval, wilson
from governor.analysis.fit import Tally
from governor.analysis.holdout import (
    Cut,
    Stat,
    cut_of,
    misfit,
    tighter,
    weighted_quantile,
)
from governor.analysis.model import Model
from governor.analysis.simulate import simulate_goal
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides

TIGHT = Policy(max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2)


def _result(success: float, cost: float = 1.0, censored: bool = False) -> Result:
    return Result(success, 1, 0, 2, 0, 60.0, cost, censored)


def test_weighted_quantile_is_the_lower_quantile_by_weight() -> None:
    values = [(1.0, 3.0), (1.0, 1.0), (1.0, 2.0), (1.0, 4.0)]
    assert weighted_quantile(values, 0.5) == 2.0
    assert weighted_quantile(values, 0.9) == 4.0
    assert weighted_quantile([(3.0, 1.0), (1.0, 9.0)], 0.5) == 1.0
    assert weighted_quantile([], 0.5) == 0.0


def test_tighter_goes_one_step_in_each_direction_it_can() -> None:
    both = tighter(TIGHT)
    assert (both["replans"].max_replans, both["replans"].max_uncharged_replans) == (2, 1)
    assert both["attempts"].max_attempts == 1
    assert both["attempts"].max_replans == 3
    floor = with_overrides(TIGHT, {"max_replans": 1, "max_uncharged_replans": 0, "max_attempts": 1})
    assert tighter(floor) == {}


def test_a_cut_keeps_the_record_up_to_where_the_tighter_policy_parts_from_it() -> None:
    cut_somewhere = 0
    for goal in range(40):
        events = simulate_goal(Model(), TIGHT, 5, goal)
        cut = cut_of(events)
        whole = Tally()
        whole.add(events)
        for direction, at in cut.at.items():
            if at is None:
                assert cut.tallies[direction].events == len(events)
            else:
                assert 0 < at < len(events)
                assert cut.tallies[direction].events == at
                cut_somewhere += 1
        assert cut.recorded.censored is False
    assert cut_somewhere > 10


def test_misfit_is_the_error_per_completed_goal_and_directions_do_not_cancel() -> None:
    tally = Tally()
    cuts = [
        Cut({"replans": tally, "attempts": tally}, {"replans": 5, "attempts": 5}, _result(0.0)),
        Cut(
            {"replans": tally, "attempts": tally}, {"replans": None, "attempts": None}, _result(1.0)
        ),
    ]
    outcomes = {
        "replans": [[_result(1.0), _result(0.0)], [_result(1.0)]],  # +0.25 over 2 goals, half cut
        "attempts": [[_result(0.0)], [_result(0.5)]],  # -0.25
    }
    found = misfit(cuts, outcomes, [Stat("success")])
    assert found.cut_share == 0.5
    assert found.errors == {"replans:success": 0.25, "attempts:success": -0.25}
    assert found.per_completed["success"] == pytest.approx(0.5 + 0.5)
    assert found.widen("success", 0.3) == pytest.approx(0.3)
    assert found.widen("success", 0.0) == 0.0
    assert misfit(cuts[1:], {"replans": [[_result(1.0)]]}).per_completed == {}


def test_rows_widen_by_their_censored_share_times_the_misfit() -> None:
    sums = Sums()
    sums.add([_result(1.0), _result(1.0, censored=True)])
    sums.add([_result(0.0), _result(0.0, censored=False)])
    plain = sums.estimates([{"a": 1}, {"a": 2}])
    wide = sums.estimates([{"a": 1}, {"a": 2}], misfit=0.2)
    assert wide[0].success_ci == plain[0].success_ci  # observed: nothing completed
    assert wide[1].censored_share == 0.5
    assert wide[1].success_ci[0] == pytest.approx(max(0.0, plain[1].success_ci[0] - 0.1))
    assert wide[1].success_ci[1] == pytest.approx(min(1.0, plain[1].success_ci[1] + 0.1))
    low, high = wilson(40, 100)
    assert interval(0.4, 100, [], extra=0.05) == pytest.approx((low - 0.05, high + 0.05))


def test_a_row_further_past_the_record_widens_more() -> None:
    from governor.analysis.holdout import Misfit, steps_past

    loose = with_overrides(TIGHT, {"max_replans": 7, "max_attempts": 3})
    assert steps_past(loose, TIGHT) == {"replans": 4, "attempts": 1}
    assert steps_past(TIGHT, loose) == {"replans": 0, "attempts": 0}
    held = Misfit(
        {"success": 0.3}, 0.5, {}, {"replans": {"success": 0.1}, "attempts": {"success": 0.2}}
    )
    assert held.widen("success", 0.5) == pytest.approx(0.15)
    assert held.widen("success", 0.5, steps_past(TIGHT, TIGHT)) == pytest.approx(0.15)
    assert held.widen("success", 0.5, steps_past(loose, TIGHT)) == pytest.approx(0.5 * (0.4 + 0.2))
