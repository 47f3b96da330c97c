"""Tune's estimates: one goal's result under a candidate, their sums, each candidate's
estimate with its interval and basis, the Pareto frontier and the recommendation.

Method (``docs/tuning.md``):
    * A history's ``Result`` under a policy is observed (the outcome is known) or, censored,
      completed by simulation; ``Sums`` adds them per candidate (in worker processes,
      merged after).
    * Each candidate's ``Estimate``: its success rate with a 95 % interval (Wilson, or
      the bootstrap replicates'), its calls, wall time, cost and censored share, and its
      ``basis`` (observed, reprojected or extrapolated).
    * The Pareto frontier is success (higher) against cost (lower); the recommendation
      is the frontier policy with the highest success, the cheapest among those whose
      success is within the best one's interval.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from governor.core.view import GoalView


@dataclass(frozen=True, slots=True)
class Result:
    """How one goal fared (or, censored, is expected to fare) under one policy."""

    success: float
    planner_charged: float
    planner_uncharged: float
    attempts_charged: float
    attempts_uncharged: float
    wall_s: float
    cost_usd: float
    censored: bool

    def row(self) -> list[float]:
        """The fields as numbers, in order (``censored`` as 0 or 1): what sums and means add."""
        return [
            self.success,
            self.planner_charged,
            self.planner_uncharged,
            self.attempts_charged,
            self.attempts_uncharged,
            self.wall_s,
            self.cost_usd,
            float(self.censored),
        ]


def _plus(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    return [[x + y for x, y in zip(r, q, strict=True)] for r, q in zip(a, b, strict=True)]


def measure(view: GoalView, success: bool, *, censored: bool = False) -> Result:
    created = view.created
    assert created is not None
    assert view.last_at is not None
    return Result(
        float(success),
        view.charged_replans,
        view.plans_uncharged,
        view.charged_attempts,
        view.attempts_uncharged,
        (view.last_at - created.at).total_seconds(),
        view.cost_usd,
        censored,
    )


Basis = Literal["observed", "reprojected", "extrapolated"]

REPROJECTED_MAX: Final = 0.02
"""The largest censored share of a ``reprojected`` row: the model completes at most 2 % of
its goals, so it can move the success estimate by at most 2 points."""


def basis_of(censored_share: float) -> Basis:
    """What a row's estimate rests on (``docs/tuning.md`` §5)."""
    if censored_share <= 0:
        return "observed"
    return "reprojected" if censored_share <= REPROJECTED_MAX else "extrapolated"


@dataclass(frozen=True, slots=True)
class Estimate:
    """One candidate policy's estimated performance over the corpus."""

    overrides: dict[str, Any]
    success_rate: float
    success_ci: tuple[float, float]
    planner_calls: tuple[float, float]
    attempts: tuple[float, float]
    wall_s: float
    cost_usd: float
    censored_share: float
    pareto: bool = False
    basis: Basis = "extrapolated"
    """``observed``: no goal censored under it; ``reprojected``: at most ``REPROJECTED_MAX``
    censored; ``extrapolated``: more, its estimate rests on the fitted model."""
    replicates: tuple[float, ...] = ()
    """The success rate in each bootstrap replicate (empty: no bootstrap)."""


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # at p = 0 (or 1) the bound is exactly 0 (or 1); rounding would leave ~1e-19
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return (low, high)


def t_quantile(df: int, z: float = 1.96) -> float:
    """Student's t quantile matching the normal's ``z`` (Cornish-Fisher, good from df 3)."""
    v = max(df, 1)
    return z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v * v)


def interval(
    success: float, n: int, replicates: Sequence[float], *, widen: float = 1.0, extra: float = 0.0
) -> tuple[float, float]:
    """The 95 % interval of a success rate.

    The Wilson interval over the goals (their sampling), widened to the bootstrap's:
    ``t`` standard deviations of the replicate estimates (each refitted the model on
    goals drawn with replacement and completed the censored ones with it: goal sampling,
    model uncertainty and Monte Carlo noise together). ``widen`` scales the bootstrap
    part when a model check is poor; ``extra`` is added on each side: the model's own
    error where the record runs out (``governor.analysis.holdout``), a bias the bootstrap
    cannot see.
    """
    low, high = wilson(success * n, n)
    if len(replicates) >= 2:
        mean = sum(replicates) / len(replicates)
        sd = math.sqrt(sum((r - mean) ** 2 for r in replicates) / (len(replicates) - 1))
        half = t_quantile(len(replicates) - 1) * sd * widen
        low, high = min(low, success - half), max(high, success + half)
    elif widen > 1:
        low, high = success - (success - low) * widen, success + (high - success) * widen
    return (max(0.0, low - extra), min(1.0, high + extra))


def aggregate(overrides: dict[str, Any], results: list[Result]) -> Estimate:
    """One candidate's estimate over its per-history results (the same arithmetic as ``Sums``)."""
    sums = Sums()
    for r in results:
        sums.add([r])
    return sums.estimates([overrides])[0]


def pareto(estimates: list[Estimate]) -> list[Estimate]:
    """Mark the estimates no other beats on both success (higher) and cost (lower)."""

    def dominated(e: Estimate) -> bool:
        return any(
            o.success_rate >= e.success_rate
            and o.cost_usd <= e.cost_usd
            and (o.success_rate > e.success_rate or o.cost_usd < e.cost_usd)
            for o in estimates
        )

    return [dataclasses.replace(e, pareto=not dominated(e)) for e in estimates]


def as_good(e: Estimate, best: Estimate) -> bool:
    """Whether ``e``'s success is as good as ``best``'s within the uncertainty.

    With bootstrap replicates, the uncertainty of their *difference* (the replicates drew
    the same goals and refitted the same models for both, so most of their noise is
    shared): ``t`` standard deviations of the replicate differences. Without, ``best``'s
    interval.
    """
    if len(e.replicates) >= 2 and len(e.replicates) == len(best.replicates):
        diffs = [b - x for b, x in zip(best.replicates, e.replicates, strict=True)]
        mean = sum(diffs) / len(diffs)
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1))
        return e.success_rate >= best.success_rate - t_quantile(len(diffs) - 1) * sd
    return e.success_rate >= best.success_ci[0]


def recommend(estimates: list[Estimate]) -> tuple[Estimate, str]:
    """The frontier policy with the best success; the cheapest as good as it (``as_good``),
    preferring rows the record decides (observed, reprojected) to extrapolated ones."""
    frontier = [e for e in estimates if e.pareto] or estimates
    best = max(frontier, key=lambda e: e.success_rate)
    close = [e for e in frontier if e is best or as_good(e, best)]
    grounded = [e for e in close if e.basis != "extrapolated"]
    pick = min(grounded or close, key=lambda e: (e.cost_usd, -e.success_rate))
    within = (
        "within the uncertainty of its difference from that one (95 %, over the bootstrap)"
        if best.replicates
        else "within that one's interval"
    )
    why = (
        f"on the Pareto frontier with an estimated success rate of {pick.success_rate:.1%} "
        f"(95 % interval {pick.success_ci[0]:.1%} to {pick.success_ci[1]:.1%}); the highest estimate is "
        f"{best.success_rate:.1%}, and this is the cheapest policy {within} "
        f"(${pick.cost_usd:.2f} per goal)"
    )
    if grounded and any(e.basis == "extrapolated" for e in close):
        why += (
            f"; its estimate is {pick.basis} (the record decides it), preferred to "
            "extrapolated ones as good"
        )
    elif pick.basis == "extrapolated":
        why += "; its estimate is extrapolated (it rests on the fitted model's completion)"
    return pick, why


@dataclass(slots=True)
class Sums:
    """Per-policy running sums over histories (what a worker process sends back)."""

    n: int = 0
    values: list[list[float]] | None = None
    replicates: list[list[float]] | None = None
    """Per bootstrap replicate, per policy: the success summed with that replicate's weights."""

    def add(
        self, results: list[Result], replicates: Sequence[tuple[int, list[Result]]] = ()
    ) -> None:
        """One history's results, one per candidate (and ``(weight, results)`` per replicate)."""
        rows = [r.row() for r in results]
        self.values = rows if self.values is None else _plus(self.values, rows)
        if replicates:
            if self.replicates is None:
                self.replicates = [[0.0] * len(results) for _ in replicates]
            for mine, (weight, theirs) in zip(self.replicates, replicates, strict=True):
                if weight:
                    for j, r in enumerate(theirs):
                        mine[j] += weight * r.success
        self.n += 1

    def merge(self, other: Sums) -> None:
        if other.values is None:
            return
        self.values = other.values if self.values is None else _plus(self.values, other.values)
        if other.replicates is not None:
            self.replicates = (
                other.replicates
                if self.replicates is None
                else _plus(self.replicates, other.replicates)
            )
        self.n += other.n

    def estimates(
        self,
        overrides: Sequence[dict[str, Any]],
        *,
        widen: float = 1.0,
        misfit: float | Sequence[float] = 0.0,
    ) -> list[Estimate]:
        """Every candidate's estimate; ``widen`` scales the intervals of extrapolated rows,
        and each row's interval grows by ``misfit`` (the model's error in the success rate
        per goal it completes; one for every row, or one per row) times its censored
        share."""
        assert self.values is not None
        assert self.n > 0
        n = self.n
        out = []
        for j, (o, v) in enumerate(zip(overrides, self.values, strict=True)):
            basis = basis_of(v[7] / n)
            reps = [r[j] / n for r in self.replicates] if self.replicates else []
            ci = interval(
                v[0] / n,
                n,
                reps,
                widen=widen if basis == "extrapolated" else 1.0,
                extra=(misfit if isinstance(misfit, int | float) else misfit[j]) * v[7] / n,
            )
            out.append(
                Estimate(
                    o,
                    v[0] / n,
                    ci,
                    (v[1] / n, v[2] / n),
                    (v[3] / n, v[4] / n),
                    v[5] / n,
                    v[6] / n,
                    v[7] / n,
                    basis=basis,
                    replicates=tuple(reps),
                )
            )
        return out
