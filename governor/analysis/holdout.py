"""Holdout: the fitted model's own error where the record runs out, measured on the record.

A row that extrapolates rests on the model's completion of goals past what was recorded.
The bootstrap measures how much the model's *parameters* could move; it cannot see
whether the model's *form* is wrong past the record (a drift the record never shows, a
selection of hard goals among those that go on). This module measures that error the
only way the corpus allows: it hides the record's own tail and asks the model to
complete it (``docs/tuning.md`` "Intervals where the record runs out", decision 0032).

Rules:
    * For each direction a row may extrapolate in (the goal's replans; an item's
      attempts), each history is **cut** where its recorded policy made one step tighter
      in that direction (``tighter``) would first have acted otherwise: the record with
      its own tail held out. A history the tighter policy re-folds alike is kept whole.
    * The model is fitted to the cut histories only (``Tally``), and completes every cut
      history under the policy actually recorded, ``HOLDOUT_SAMPLES`` tails each: an
      extrapolation of one step whose truth the record holds.
    * For each statistic (``Stat``: the success rate, or a quantile of a goal's cost,
      attempts, planner calls or run time) the error of that completion against the
      record, divided by the share of histories that were cut, is the model's error per
      completed goal; the directions' errors add up, unsigned (``Misfit.per_completed``).
      A quantile's error is measured in probability (``Stat.error``). A row or a forecast
      whose censored share is c widens its 95 % interval on each side by c times the sum
      over the directions of each one's error times the steps it goes past the record in
      that direction, at least 1 (``Misfit.widen``, ``steps_past``: the error is of one
      step; a completed goal of a row k steps out may go through k such steps): a success
      rate by that much, a quantile by reading the pooled distribution that much further
      out.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from governor.analysis.estimate import Result, measure
from governor.analysis.fit import Tally
from governor.analysis.model import Model
from governor.analysis.tails import simulate_tail
from governor.analysis.whatif import Trace
from governor.core.events import Event
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.rules.decider import Decider

HOLDOUT_SAMPLES: Final = 4
"""Tails per cut history (their mean error is what is measured: more tails, less noise)."""

Sample = Sequence[tuple[float, Result]]
"""Weighted outcomes: ``(weight, result)``."""


def weighted_quantile(values: Sequence[tuple[float, float]], p: float) -> float:
    """The smallest value whose cumulative weight reaches ``p`` of the total."""
    ordered = sorted(values, key=lambda wv: wv[1])
    total = sum(w for w, _ in ordered)
    if not ordered or total <= 0:
        return 0.0
    running, goal = 0.0, p * total
    for w, v in ordered:
        running += w
        if running >= goal - 1e-12:
            return v
    return ordered[-1][1]


QUANTITIES: Final[dict[str, Callable[[Result], float]]] = {
    "charged_attempts": lambda r: r.attempts_charged,
    "planner_calls": lambda r: r.planner_charged + r.planner_uncharged,
    "cost_usd": lambda r: r.cost_usd,
    "run_time_s": lambda r: r.wall_s,
}
"""What a forecast tells of a goal, read off its ``Result``."""

QUANTILES: Final = {"median": 0.5, "p90": 0.9}


def mid_cdf(sample: Sample, quantity: str, at: float) -> float:
    """P(X < at) + P(X = at) / 2 of ``quantity`` over a weighted sample."""
    read = QUANTITIES[quantity]
    total = below = 0.0
    for w, r in sample:
        x = read(r)
        total += w
        below += w if x < at else w / 2 if x == at else 0.0
    return below / total if total else 0.0


@dataclass(frozen=True, slots=True)
class Stat:
    """One statistic of a weighted sample of outcomes: the success rate, or a quantile."""

    quantity: str
    """``success`` or a key of ``QUANTITIES``."""
    p: float = 0.5

    @property
    def name(self) -> str:
        if self.quantity == "success":
            return "success"
        return f"{self.quantity}@{self.p:g}"

    def error(self, held: Sample, record: Sample) -> float:
        """How far ``held`` is from ``record`` in this statistic: the success rates'
        difference; for a quantile, in probability: the held sample's mid-distribution
        function at the record's quantile, less the record's (a quantile of whole numbers
        jumps, its probability does not)."""
        if self.quantity == "success":
            return self.of(held) - self.of(record)
        at = self.of(record)
        return mid_cdf(held, self.quantity, at) - mid_cdf(record, self.quantity, at)

    def of(self, sample: Sample) -> float:
        if self.quantity == "success":
            total = sum(w for w, _ in sample)
            return sum(w * r.success for w, r in sample) / total if total else 0.0
        read = QUANTITIES[self.quantity]
        return weighted_quantile([(w, read(r)) for w, r in sample], self.p)


STATS: Final = (
    Stat("success"),
    *(Stat(q, p) for q in QUANTITIES for p in QUANTILES.values()),
)


@dataclass(frozen=True, slots=True)
class Misfit:
    """The model's error per completed goal, per statistic, measured on the held-out tails."""

    per_completed: dict[str, float] = field(default_factory=dict)
    """Statistic name -> |completed - recorded| / cut share (0: no history was cut): for
    the success rate in its own units, for a quantile in probability (``Stat.error``)."""
    cut_share: float = 0.0
    """The largest share of histories the holdout cut in one direction."""
    errors: dict[str, float] = field(default_factory=dict)
    """``direction:statistic`` -> completed - recorded (signed), over the whole corpus."""

    by_direction: dict[str, dict[str, float]] = field(default_factory=dict)
    """Direction -> statistic name -> |error| / that direction's cut share."""

    def widen(
        self, stat: str, censored_share: float, steps: Mapping[str, int] | None = None
    ) -> float:
        """How much a row with ``censored_share`` of its goals completed by the model widens
        its interval on each side for ``stat``: each direction's error per completed goal
        times the steps the row goes past the record in it (at least 1: ``steps_past``),
        summed, times the censored share. Without ``steps``, one step in each."""
        if steps is None or not self.by_direction:
            return self.per_completed.get(stat, 0.0) * censored_share
        total = sum(
            errors.get(stat, 0.0) * max(1, steps.get(direction, 0))
            for direction, errors in self.by_direction.items()
        )
        return total * censored_share


def tighter(policy: Policy) -> dict[str, Policy]:
    """``policy`` one step tighter in each direction a row may extrapolate in: the goal's
    replans (``max_replans`` and ``max_uncharged_replans``) and an item's attempts
    (``max_attempts``); a direction it cannot be tightened in is left out."""
    replans: dict[str, int] = {}
    if policy.max_replans > 1:
        replans["max_replans"] = policy.max_replans - 1
    if policy.max_uncharged_replans > 0:
        replans["max_uncharged_replans"] = policy.max_uncharged_replans - 1
    out = {}
    if replans:
        out["replans"] = with_overrides(policy, replans)
    if policy.max_attempts > 1:
        out["attempts"] = with_overrides(policy, {"max_attempts": policy.max_attempts - 1})
    return out


DIRECTIONS: Final = ("replans", "attempts")


@dataclass(frozen=True, slots=True)
class Cut:
    """One history's part in the holdout: per direction, what the fit may see; and the
    record's outcome."""

    tallies: dict[str, Tally]
    """Per direction: the counts of the history up to its cut (the whole history when it
    is not cut)."""
    at: dict[str, int | None]
    """Per direction: how many events the cut keeps (None: not cut)."""
    recorded: Result
    """The history's own outcome under its recorded policy."""


def cut_of(events: list[Event]) -> Cut:
    """Where the holdout cuts ``events`` in each direction, with the counts of what it keeps."""
    view = project(events)
    assert view.last_at is not None
    final = Decider(view).decide(view.last_at, with_ledger=False)
    recorded = measure(view, final.status == "succeeded")
    trace = Trace.of(events)
    tallies, cuts = {}, {}
    for direction, policy in tighter(view.policy).items():
        result = trace.under(policy, ledger=False)
        at = result.events if result.outcome != "same" and 0 < result.events < len(events) else None
        tally = Tally()
        tally.add(events if at is None else events[:at])
        tallies[direction], cuts[direction] = tally, at
    return Cut(tallies, cuts, recorded)


def completed(
    events: list[Event], cut: Cut, direction: str, model: Model, rng: random.Random
) -> list[Result]:
    """The held-out history's outcomes in ``direction``: ``HOLDOUT_SAMPLES`` tails from the
    cut on, under the recorded policy (the recorded outcome itself when it was not cut)."""
    at = cut.at.get(direction)
    if at is None:
        return [cut.recorded]
    view = project(events[:at])
    return [simulate_tail(view.copy(), model, rng)[0] for _ in range(HOLDOUT_SAMPLES)]


def fit_cut(cuts: Sequence[Cut], direction: str) -> Model:
    """The model fitted to the histories cut in ``direction`` only."""
    tally = Tally()
    for c in cuts:
        if direction in c.tallies:
            tally.merge(c.tallies[direction])
    return tally.model()


def error_of(
    cuts: Sequence[Cut], outcomes: Sequence[list[Result]], direction: str, stats: Sequence[Stat]
) -> tuple[float, dict[str, float]]:
    """One direction's cut share, and per statistic its error (completed - recorded)."""
    n = len(cuts)
    share = sum(c.at.get(direction) is not None for c in cuts) / n if n else 0.0
    if not share:
        return 0.0, {}
    held: list[tuple[float, Result]] = [(1 / len(draws), r) for draws in outcomes for r in draws]
    record = [(1.0, c.recorded) for c in cuts]
    return share, {s.name: s.error(held, record) for s in stats}


def misfit(
    cuts: Sequence[Cut],
    outcomes: Mapping[str, Sequence[list[Result]]],
    stats: Sequence[Stat] = STATS,
) -> Misfit:
    """The model's error per completed goal: per statistic, the sum over the directions of
    each one's |error| / cut share (errors of two directions may have opposite signs: a
    row may extrapolate in one only, so they are not let cancel)."""
    per: dict[str, float] = {}
    signed: dict[str, float] = {}
    by: dict[str, dict[str, float]] = {}
    shares = []
    for direction, drawn in outcomes.items():
        share, errors = error_of(cuts, drawn, direction, stats)
        shares.append(share)
        for name, e in errors.items():
            per[name] = per.get(name, 0.0) + abs(e) / share
            signed[f"{direction}:{name}"] = e
            by.setdefault(direction, {})[name] = abs(e) / share
    return Misfit(per, max(shares, default=0.0), signed, by)


def steps_past(policy: Policy, recorded: Policy) -> dict[str, int]:
    """How many steps ``policy`` goes past ``recorded`` in each direction the holdout
    measures: the goal's replans (the larger of ``max_replans``' and
    ``max_uncharged_replans``' excess) and an item's attempts (``max_attempts``')."""
    return {
        "replans": max(
            0,
            policy.max_replans - recorded.max_replans,
            policy.max_uncharged_replans - recorded.max_uncharged_replans,
        ),
        "attempts": max(0, policy.max_attempts - recorded.max_attempts),
    }
