"""Fleet outages, simulated (SPEC §11.10): one shared vendor, the fleet rule against per-goal."""

from __future__ import annotations

from collections import Counter

import pytest

from governor.analysis.fleet import FleetRun, FleetSettings, parked_over_time, simulate_fleet
from governor.analysis.model import Model
from governor.analysis.outages import savings, steps_within
from governor.core.history import validate_events
from governor.core.policy import Policy

MODEL = Model(outage_rate_per_h=0.0, retry_after_p=0.0)
OUTAGE = ((600.0, 4200.0),)


@pytest.fixture(scope="module")
def runs() -> dict[str, FleetRun]:
    return {
        mode: simulate_fleet(
            MODEL,
            Policy(),
            seed=3,
            settings=FleetSettings(goals=60, mode=mode, spread_s=5.0, outages=OUTAGE),  # type: ignore[arg-type]
        )
        for mode in ("aware", "per-goal")
    }


def test_every_simulated_history_validates(runs: dict[str, FleetRun]) -> None:
    for run in runs.values():
        for history in run.histories:
            validate_events(history)


def test_the_tally_is_what_the_histories_record(runs: dict[str, FleetRun]) -> None:
    for run in runs.values():
        types = Counter(e.type for h in run.histories for e in h)
        operators = sum(e.actor == "operator" for h in run.histories for e in h)
        assert run.tally.parks == types["goal.parked"]
        assert run.tally.manual_resumes == operators
        refused = sum(
            getattr(e, "failure_class", None) == "upstream" for h in run.histories for e in h
        )
        assert run.tally.refused == refused + sum(
            what == "probe_refused" for _, what, _ in run.tally.timeline
        )


def test_the_fleet_rule_refuses_a_few_calls_and_needs_no_person(
    runs: dict[str, FleetRun],
) -> None:
    aware, per_goal = runs["aware"].tally, runs["per-goal"].tally
    assert aware.manual_resumes == 0
    assert per_goal.manual_resumes > 0
    assert aware.parks > 0
    assert aware.probes >= 5  # a one-hour outage, a probe per back-off step (30 s doubling)
    assert aware.refused <= aware.probes + 5
    assert per_goal.refused >= 10 * aware.refused


def test_every_goal_a_probe_found_back_resumes_once_the_outage_ends(
    runs: dict[str, FleetRun],
) -> None:
    waits = runs["aware"].recoveries_s()
    finite = [w for w in waits if w != float("inf")]
    assert finite
    assert max(finite) <= 900 + 60  # within one (longest) probe step of the end
    parked = parked_over_time(runs["aware"], 60.0)
    assert max(n for _, n in parked) > 0
    assert parked[-1][1] == 0


def test_tune_estimates_the_calls_the_fleet_rule_saves_from_a_per_goal_corpus(
    runs: dict[str, FleetRun],
) -> None:
    per_goal = savings(runs["per-goal"].histories)
    assert per_goal.outages == 1
    assert per_goal.refused == runs["per-goal"].tally.refused
    assert 1 <= per_goal.sent <= runs["aware"].tally.refused  # at most what the rule really sent
    assert per_goal.saved == per_goal.refused - per_goal.sent
    assert savings([]).refused == 0


@pytest.mark.parametrize(
    ("span_s", "steps"), [(0, 0), (29, 0), (30, 1), (90, 2), (3600, 7), (3630, 8), (4530, 9)]
)
def test_an_outage_takes_one_probe_per_back_off_step(span_s: float, steps: int) -> None:
    assert steps_within(Policy().upstream_backoff, span_s) == steps
