"""Tuning you can trust (issue 16): model checks, bootstrap intervals, each row's basis,
the planner that repeats a failing item, and the shortcuts that keep tune fast."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from governor.analysis.checks import Stats, compare, replicate
from governor.analysis.corpus import corpus_of
from governor.analysis.estimate import (
    Estimate,
    Result,
    Sums,
    as_good,
    basis_of,
    interval,
    recommend,
    wilson,
)
from governor.analysis.fit import fit, kaplan_meier
from governor.analysis.grid import candidates
from governor.analysis.model import Model
from governor.analysis.simulate import simulate
from governor.analysis.tails import complete
from governor.analysis.tune import complete_all
from governor.analysis.tune_corpus import tune_corpus
from governor.analysis.whatif import Trace
from governor.core.events import Event
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.rules.decide import decide
from governor.errors import InputError
from governor.render.table import format_report
from governor.store.jsonl import read_history, write_history

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
RECORDED = Policy(max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2)
REPEATING = Model(repeat_failed=0.7)


def _status(history: list[Event]) -> str:
    return decide(project(history), history[-1].at, with_ledger=False).status


@pytest.fixture(scope="module")
def repeating() -> list[list[Event]]:
    """A corpus whose planner proposes a failed item again 7 times in 10."""
    return list(simulate(REPEATING, RECORDED, goals=1200, seed=5))


def _stats(corpus: list[list[Event]]) -> Stats:
    stats = Stats()
    for history in corpus:
        stats.add(history)
    return stats


def test_fitting_learns_how_often_the_planner_repeats_a_failed_item(
    repeating: list[list[Event]],
) -> None:
    assert 0.5 <= fit(repeating).repeat_failed <= 0.9
    assert fit(simulate(Model(), RECORDED, goals=600, seed=5)).repeat_failed <= 0.15


def test_a_model_that_ignores_repeats_fails_its_check_and_the_fitted_one_passes(
    repeating: list[list[Event]],
) -> None:
    fitted = fit(repeating)
    observed = _stats(repeating)
    naive = {
        c.name: c
        for c in compare(
            observed,
            replicate(dataclasses.replace(fitted, repeat_failed=0.0), [RECORDED] * 1200, seed=2),
        )
    }
    assert naive["after_failure"].poor, naive["after_failure"]
    assert naive["after_failure"].p_value < 1e-4
    good = {c.name: c for c in compare(observed, replicate(fitted, [RECORDED] * 1200, seed=2))}
    assert not good["after_failure"].poor, good["after_failure"]


def test_every_check_passes_on_the_model_that_wrote_the_corpus() -> None:
    corpus = list(simulate(Model(), RECORDED, goals=800, seed=8))
    checks = compare(_stats(corpus), replicate(fit(corpus), [RECORDED] * 800, seed=3))
    assert [c.name for c in checks] == [
        "attempts_per_item",
        "outage_streaks",
        "outage_lengths",
        "replans_per_goal",
        "items_per_plan",
        "after_failure",
    ]
    assert not [c for c in checks if c.poor], checks
    for c in checks:
        assert 0 <= c.distance <= 1
        assert 0 <= c.p_value <= 1
        assert abs(sum(c.observed.values()) - 1) < 1e-9 or c.count == 0


def test_kaplan_meier_keeps_a_heavy_tail_that_the_censoring_hides() -> None:
    rng = random.Random(4)
    lengths = [600 * rng.paretovariate(1.5) for _ in range(3000)]
    cut = [min(x, 1800.0) for x in lengths]  # goals stop half an hour into an outage
    ended = [x for x, c in zip(lengths, cut, strict=True) if x <= 1800]
    censored = [c for x, c in zip(lengths, cut, strict=True) if x > 1800]
    points = kaplan_meier(ended, censored)
    assert len(points) == 400
    median = sorted(points)[200]
    assert abs(median - sorted(lengths)[1500]) / sorted(lengths)[1500] < 0.1
    assert max(points) > 1800  # beyond the censoring point, the tail goes on


@pytest.mark.parametrize(
    ("share", "basis"),
    [
        (0.0, "observed"),
        (0.005, "reprojected"),
        (0.02, "reprojected"),
        (0.021, "extrapolated"),
        (0.6, "extrapolated"),
    ],
    ids=str,
)
def test_a_rows_basis_follows_its_censored_share(share: float, basis: str) -> None:
    assert basis_of(share) == basis


def _write(folder: Path, corpus: list[list[Event]]) -> Path:
    folder.mkdir()
    for history in corpus:
        with (folder / f"{history[0].goal_id}.jsonl").open("wb") as handle:
            write_history(history, handle)
    return folder


def test_basis_on_a_constructed_corpus(tmp_path: Path) -> None:
    """99 goals that succeeded within their limits and one stopped by its replans: a looser
    policy re-projects 99 and completes 1 (reprojected); a tighter one decides all
    (observed); on a corpus of stopped goals a looser one extrapolates."""
    loose = with_overrides(RECORDED, {"max_replans": 6})
    every = list(simulate(Model(outage_rate_per_h=0.0), RECORDED, goals=400, seed=2))
    won = [h for h in every if _status(h) == "succeeded"]
    stopped = [
        h
        for h in every
        if _status(h) != "succeeded" and Trace.of(h).under(loose).outcome == "censored"
    ]
    assert len(won) >= 99
    assert stopped
    corpus = corpus_of([str(_write(tmp_path / "c", won[:99] + stopped[:1]))])
    grid = {"max_replans": [1, 3, 6]}
    report = tune_corpus(corpus, grid, bootstrap=0, workers=1, checks=False)
    by = {e.overrides["max_replans"]: e for e in report.estimates}
    assert by[3].basis == "observed"
    assert by[3].censored_share == 0
    assert 1 not in by  # SPEC §12.1: no planner call left for the completion review
    assert [o for o, _ in report.infeasible] == [{"max_replans": 1}]
    assert by[6].basis == "reprojected"
    assert by[6].censored_share == pytest.approx(0.01)
    corpus = corpus_of([str(_write(tmp_path / "s", stopped[:30]))])
    report = tune_corpus(corpus, grid, bootstrap=0, workers=1, checks=False)
    assert {e.overrides["max_replans"]: e.basis for e in report.estimates}[6] == "extrapolated"


def test_bootstrap_intervals_are_wider_than_wilson_and_a_misfit_widens_them(tmp_path: Path) -> None:
    corpus = corpus_of(
        [str(_write(tmp_path / "c", list(simulate(Model(), RECORDED, goals=150, seed=4))))]
    )
    grid = {"max_replans": [2, 5], "max_uncharged_replans": [2, 4]}
    plain = tune_corpus(corpus, grid, bootstrap=0, workers=1, checks=False)
    booted = tune_corpus(corpus, grid, bootstrap=6, workers=2, checks=True)
    assert booted.bootstrap == 6
    assert len(booted.checks) == 6
    for a, b in zip(plain.estimates, booted.estimates, strict=True):
        assert a.overrides == b.overrides
        assert a.basis == b.basis
        low, high = wilson(b.success_rate * 150, 150)
        assert b.success_ci[0] <= low + 1e-9
        assert b.success_ci[1] >= high - 1e-9

    def wilson_width(e: Estimate) -> float:
        low, high = wilson(e.success_rate * 150, 150)
        return high - low

    # the bootstrap (model refits, tails) adds to the goals' sampling somewhere
    assert any(e.success_ci[1] - e.success_ci[0] > wilson_width(e) + 1e-6 for e in booted.estimates)
    assert (
        interval(0.5, 100, [0.4, 0.6, 0.5], widen=2.0)[0] < interval(0.5, 100, [0.4, 0.6, 0.5])[0]
    )
    with pytest.raises(InputError, match="--bootstrap"):
        tune_corpus(corpus, grid, bootstrap=1)


def _row(success: float, ci: tuple[float, float], cost: float, basis: str) -> Estimate:
    return Estimate({"max_replans": cost}, success, ci, (0, 0), (0, 0), 0, cost, 0, True, basis)  # type: ignore[arg-type]


def test_the_recommendation_prefers_a_row_the_record_decides_when_it_is_as_good() -> None:
    rows = [
        _row(0.80, (0.76, 0.84), 1.0, "extrapolated"),
        _row(0.78, (0.75, 0.81), 1.2, "observed"),
        _row(0.70, (0.66, 0.74), 0.5, "observed"),
    ]
    pick, why = recommend(rows)
    assert pick is rows[1]
    assert "observed" in why
    assert "extrapolated" in why
    alone = [
        _row(0.80, (0.76, 0.84), 1.0, "extrapolated"),
        _row(0.6, (0.55, 0.65), 0.4, "observed"),
    ]
    pick, why = recommend(alone)
    assert pick is alone[0]
    assert "extrapolated" in why


def _histories() -> list[list[Event]]:
    found = list(simulate(Model(outage_rate_per_h=2.0), RECORDED, goals=120, seed=6))
    for path in sorted(GOLDEN.glob("*.jsonl")):
        try:
            found.append([e for _, e in read_history(path)])
            Trace.of(found[-1])
        except Exception:
            found.pop()
    return found


def test_skipping_the_decisions_no_limit_is_near_changes_no_re_projection() -> None:
    rng = random.Random(0)
    for history in _histories():
        trace = Trace.of(history)
        for _ in range(12):
            override = {
                "max_replans": rng.randint(1, 8),
                "max_uncharged_replans": rng.randint(0, 6),
                "max_attempts": rng.randint(1, 4),
                "max_total_attempts": rng.randint(2, 30),
            }
            policy = with_overrides(
                trace.policy, {k: v for k, v in override.items() if rng.random() < 0.6}
            )
            fast, slow = trace.under(policy), trace.under(policy, events=trace.events)
            assert (fast.outcome, fast.events, fast.final.status, fast.final.next_action) == (
                slow.outcome,
                slow.events,
                slow.final.status,
                slow.final.next_action,
            ), (trace.goal_id, override)
            assert (fast.divergence is None) == (slow.divergence is None)


def test_shared_stories_give_the_same_success_rates_as_separate_tails() -> None:
    """Stories shared between censored candidates are a variance trick, not a bias: over a
    corpus, the success rate of each candidate matches independent completions."""
    corpus = list(simulate(Model(), RECORDED, goals=250, seed=12))
    model = fit(corpus)
    overrides = candidates({"max_replans": [4, 6, 8], "max_uncharged_replans": [1, 3]})
    shared = [0.0] * len(overrides)
    apart = [0.0] * len(overrides)
    rng = random.Random(3)
    draws = 4
    for history in corpus:
        trace = Trace.of(history)
        policies = [with_overrides(trace.policy, o) for o in overrides]
        results = [trace.under(p) for p in policies]
        open_ = [
            (o, p, r) for o, p, r in zip(overrides, policies, results, strict=True) if not r.known
        ]
        for j, r in enumerate(results):
            if r.known:
                won = float(r.final.status == "succeeded")
                shared[j] += won
                apart[j] += won
        for _ in range(draws):
            tails = complete_all(trace, open_, model, rng)
            for (o, _, r), t in zip(open_, tails, strict=True):
                j = overrides.index(o)
                shared[j] += t.success / draws
                apart[j] += complete(r, model, rng).success / draws
    for j in range(len(overrides)):
        assert abs(shared[j] - apart[j]) / len(corpus) < 0.04, (overrides[j], shared[j], apart[j])


def test_a_poor_check_widens_only_the_rows_that_rest_on_the_model() -> None:
    sums = Sums()
    known = Result(1.0, 1, 0, 2, 0, 60.0, 0.5, censored=False)
    for i in range(40):
        tail = Result(0.5 + 0.05 * (i % 2), 2, 0, 3, 0, 90.0, 0.75, censored=True)
        weights = (2 * (i % 2 == 0), 2 * (i % 2), 1)  # three bootstrap draws of the 40 goals
        sums.add([known, tail], [(w, [known, tail]) for w in weights])
    overrides = [{"max_replans": 2}, {"max_replans": 5}]
    plain, widened = sums.estimates(overrides), sums.estimates(overrides, widen=2.0)
    assert [e.basis for e in plain] == ["observed", "extrapolated"]
    assert plain[0].success_ci == widened[0].success_ci
    plain_width = plain[1].success_ci[1] - plain[1].success_ci[0]
    assert widened[1].success_ci[1] - widened[1].success_ci[0] > plain_width


def test_the_text_report_says_when_the_model_fits_poorly(tmp_path: Path) -> None:
    corpus = corpus_of(
        [str(_write(tmp_path / "c", list(simulate(Model(), RECORDED, goals=60, seed=4))))]
    )
    report = tune_corpus(corpus, {"max_replans": [2, 5]}, bootstrap=0, workers=1)
    assert report.checks
    assert not report.misfit
    text = format_report(report, every=True)
    assert "model checks" in text
    assert "POOR" not in text
    assert report.holdout.cut_share > 0
    assert "past the record (its own tail held out)" in text
    poor = dataclasses.replace(report.checks[-1], poor=True)
    text = format_report(
        dataclasses.replace(report, checks=(*report.checks[:-1], poor)), every=True
    )
    assert "POOR  after_failure" in text
    assert "fits the corpus poorly" in text


def test_with_replicates_as_good_means_within_the_uncertainty_of_the_difference() -> None:
    """The replicates drew the same goals for both rows: their difference is steadier than
    either level, so a row 3 points below the best in every replicate is not as good, even
    inside the best one's interval."""
    best = dataclasses.replace(
        _row(0.80, (0.70, 0.90), 2.0, "extrapolated"), replicates=(0.74, 0.80, 0.86, 0.80)
    )
    below = dataclasses.replace(
        _row(0.77, (0.67, 0.87), 1.0, "extrapolated"), replicates=(0.71, 0.77, 0.83, 0.77)
    )
    noisy = dataclasses.replace(
        _row(0.77, (0.67, 0.87), 1.0, "extrapolated"), replicates=(0.76, 0.70, 0.88, 0.74)
    )
    assert not as_good(below, best)
    assert as_good(noisy, best)
    assert as_good(dataclasses.replace(below, replicates=()), best)  # no bootstrap: the interval
    assert recommend([best, below])[0] is best
    pick, why = recommend([best, noisy])
    assert pick is noisy
    assert "difference" in why


@pytest.mark.parametrize("n", [1, 7, 150, 10_000])
def test_wilson_is_exactly_closed_at_no_and_every_success(n: int) -> None:
    low, high = wilson(0, n)
    assert low == 0.0
    assert 0.0 < high < 1.0
    low, high = wilson(n, n)
    assert high == 1.0
    assert 0.0 < low < 1.0
    low, high = wilson(n / 2, n)
    assert 0.0 < low < 0.5 < high < 1.0
