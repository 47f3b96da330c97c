"""Simulate: deterministic, valid histories, and the coupling the tuner relies on."""

from __future__ import annotations

from governor.analysis.fit import fit
from governor.analysis.model import Model
from governor.analysis.simulate import simulate, simulate_goal
from governor.analysis.whatif import whatif
from governor.core.history import validate_events
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.wire.codec import encode

LOOSE = Policy(max_replans=6, max_uncharged_replans=4)
TIGHT = with_overrides(LOOSE, {"max_replans": 2})


def test_a_seed_gives_the_same_corpus_byte_for_byte() -> None:
    first = [b"".join(encode(e) for e in h) for h in simulate(Model(), LOOSE, goals=30, seed=4)]
    again = [b"".join(encode(e) for e in h) for h in simulate(Model(), LOOSE, goals=30, seed=4)]
    other = [b"".join(encode(e) for e in h) for h in simulate(Model(), LOOSE, goals=30, seed=5)]
    assert first == again
    assert first != other


def test_every_simulated_history_validates() -> None:
    for history in simulate(
        Model(missing_binary=0.1, outage_rate_per_h=2.0), LOOSE, goals=80, seed=1
    ):
        assert validate_events(history).created is not None


def test_a_tighter_policy_tells_the_same_story_until_it_stops() -> None:
    for goal in range(60):
        loose = simulate_goal(Model(), LOOSE, 9, goal)
        tight = simulate_goal(Model(), TIGHT, 9, goal)
        result = whatif(loose, TIGHT)
        if result.outcome == "same":
            assert [e.type for e in tight] == [e.type for e in loose]
        if result.outcome == "stopped_earlier" and result.divergence is not None:
            n = result.divergence.seq - 1
            assert [(e.type, e.at) for e in tight[:n]] == [(e.type, e.at) for e in loose[:n]]
            assert len(tight) == n  # the tighter policy stopped right there


def test_fitting_a_large_corpus_recovers_the_model() -> None:
    truth = Model()
    fitted = fit(simulate(truth, LOOSE, goals=1500, seed=2))
    assert abs(fitted.plan_success - truth.plan_success) < 0.03
    assert abs(fitted.complete_after_milestone - truth.complete_after_milestone) < 0.06
    mean = fitted.item_a / (fitted.item_a + fitted.item_b)
    assert abs(mean - truth.item_a / (truth.item_a + truth.item_b)) < 0.05
    assert 0.25 < fitted.outage_rate_per_h < 0.9
    assert 600 < fitted.outage_mean_s < 1300
