"""Tune: estimate, for every policy of a grid, how a corpus of goals would have fared.

Method (``docs/tuning.md``):
    1. Fit the generative model to the corpus (``governor.analysis.fit``).
    2. For each history and each candidate policy, re-fold the recorded outcomes under
       the policy (``governor.analysis.whatif``). Where the outcome is known (it is the
       recorded one, or the policy stops the goal earlier), take it as observed.
    3. Where it is censored (the policy would have gone on past what was recorded),
       complete the tail by Monte Carlo: simulate on from that state with the fitted
       model, through the real core, ``samples`` times.
    4. Average per policy: success rate with a 95 % interval, charged and uncharged
       planner calls and attempts, wall time and cost per goal, the censored share.
    5. The Pareto frontier is success (higher) against cost (lower); the recommendation
       is the frontier policy with the highest success, the cheapest among those whose
       success is within the best one's interval.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from governor.analysis.simulate import T0, Episode, Model, Vendor, World
from governor.analysis.whatif import Trace, WhatIf
from governor.core.budgets import charged_attempts, charged_replans
from governor.core.events import Event
from governor.core.policy import milestones_above_replans, with_overrides
from governor.core.view import GoalView
from governor.errors import PolicyError

Grid = dict[str, list[Any]]


def parse_grid(specs: Sequence[str]) -> Grid:
    """``["max_replans=1..10", "auto_apply=true,false", "upstream_backoff.initial_s=10..60:10"]``."""
    grid: Grid = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        if not sep or not values:
            raise PolicyError(f"--grid '{spec}' is not field=a..b, field=a..b:step or field=a,b,c")
        grid[name.strip()] = _values(name.strip(), values.strip())
    return grid


def _values(name: str, text: str) -> list[Any]:
    from governor.core.policy import parse_assignments  # noqa: PLC0415 - one parser of values

    if ".." in text:
        low, _, rest = text.partition("..")
        high, _, step = rest.partition(":")
        a, b = parse_assignments(f"x={low}")["x"], parse_assignments(f"x={high}")["x"]
        s = parse_assignments(f"x={step}")["x"] if step else 1
        numbers = all(isinstance(v, int | float) and math.isfinite(v) for v in (a, b, s))
        if not numbers or s <= 0 or b < a:
            raise PolicyError(
                f"--grid {name}={text}: a range is low..high[:step] of finite numbers, low <= high"
            )
        count = math.floor((b - a) / s + 1e-9) + 1
        _check_size(f"--grid {name}={text}", count)
        return [
            type(a)(a + i * s) if isinstance(a, int) and isinstance(s, int) else a + i * s
            for i in range(count)
        ]
    return [parse_assignments(f"x={v}")["x"] for v in text.split(",")]


MAX_CANDIDATES: Final = 10_000
"""The most candidate policies one tune evaluates (each is re-folded over every history)."""


def _check_size(what: str, count: int) -> None:
    if count > MAX_CANDIDATES:
        shown = f"{count:,}" if count < 10**9 else "over a billion"
        raise PolicyError(
            f"{what} has {shown} candidate policies; a tune evaluates at most "
            f"{MAX_CANDIDATES:,}: narrow the ranges or take larger steps"
        )


def candidates(grid: Grid) -> list[dict[str, Any]]:
    """Every combination of the grid's values that makes a valid policy, as overrides.

    ``max_milestones`` may not exceed ``max_replans`` (SPEC §11.5): a grid over the
    milestones must also range over the replans, and combinations above it are left out.

    Raises:
        PolicyError: for milestones without replans, or when no combination is valid.
    """
    names = list(grid)
    _check_size("the grid", math.prod(len(values) for values in grid.values()))
    if "max_milestones" in grid and "max_replans" not in grid:
        raise PolicyError(
            "--grid max_milestones needs a --grid max_replans too: a policy's max_milestones "
            "may not exceed its max_replans"
        )
    combos = [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(grid[n] for n in names))
    ]
    valid = [c for c in combos if c.get("max_milestones", 0) <= c.get("max_replans", 0)]
    if combos and not valid:
        raise PolicyError(
            milestones_above_replans(min(grid["max_milestones"]), max(grid["max_replans"]))
        )
    return valid


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
        charged_replans(view),
        view.plans_uncharged,
        charged_attempts(view),
        view.attempts_uncharged,
        (view.last_at - created.at).total_seconds(),
        view.cost_usd,
        censored,
    )


def posterior(model: Model) -> Callable[[GoalView, str, random.Random], float]:
    """An item's success probability given what it already showed: Beta(a, b + its failures).

    Only *finished* charged failures count: an attempt in flight is charged in the ledger but
    has told nothing yet (the draw happens right after ``attempt.started``).
    """

    def draw(view: GoalView, work_id: str, rng: random.Random) -> float:
        item = view.work[work_id]
        failures = item.charged_attempts - int(item.running)
        return rng.betavariate(model.item_a, model.item_b + failures)

    return draw


def _down(view: GoalView, mean_s: float, rng: random.Random) -> bool:
    """Was the vendor still down? Only if the last finished run was a refusal, and then with
    the chance that its outage has not ended since (memoryless)."""
    refused = [
        p.failure.at for p in view.plans.values() if p.failure_class == "upstream" and p.failure
    ]
    refused += [
        w.finish.at for w in view.work.values() if w.failure_class == "upstream" and w.finish
    ]
    if not refused or view.last_at is None or max(refused) < view.last_at:
        return False
    return rng.random() < math.exp(-(view.last_at - max(refused)).total_seconds() / mean_s)


def complete(result: WhatIf, model: Model, rng: random.Random) -> Result:
    """Simulate a censored tail on from where the re-fold stopped knowing."""
    view = result.view.copy()
    assert view.last_at is not None
    t = (view.last_at - T0).total_seconds()
    streams = random.Random(rng.random())
    vendor = Vendor.steady(
        model.outage_rate_per_h / 3600,
        model.outage_mean_s,
        random.Random(rng.random()),
        start=t,
        down=_down(view, model.outage_mean_s, rng),
    )
    w = World(
        model,
        vendor,
        random.Random(rng.random()),
        random.Random(rng.random()),
        lambda i: random.Random(streams.random() + i),
        False,
        posterior(model),
    )
    w._runs = 10**6  # continuation run ids never collide with recorded ones
    episode = Episode(w, view, [], t)
    final = episode.run()
    return measure(episode.view, final.status == "succeeded", censored=True)


def _mean(results: list[Result]) -> Result:
    """The average of Monte Carlo tails: a censored result."""
    m = [sum(column) / len(results) for column in zip(*(r.row() for r in results), strict=True)]
    return Result(m[0], m[1], m[2], m[3], m[4], m[5], m[6], censored=True)


def evaluate(
    events: list[Event],
    overrides: Sequence[dict[str, Any]],
    model: Model,
    *,
    samples: int,
    rng: random.Random,
) -> list[Result]:
    """One history under every candidate policy."""
    trace = Trace.of(events)
    known: dict[tuple[object, ...], Result] = {}
    out = []
    for override in overrides:
        policy = with_overrides(trace.policy, override)
        key = trace.demands.key(policy)
        if key in known:  # the history cannot tell these policies apart
            out.append(known[key])
            continue
        result = trace.under(policy)
        if result.known:
            known[key] = measure(result.view, result.final.status == "succeeded")
            out.append(known[key])
        else:
            out.append(_mean([complete(result, model, rng) for _ in range(samples)]))
    return out


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


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


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

    return [Estimate(**{**_fields(e), "pareto": not dominated(e)}) for e in estimates]


def _fields(e: Estimate) -> dict[str, Any]:
    return {f: getattr(e, f) for f in Estimate.__slots__}


def recommend(estimates: list[Estimate]) -> tuple[Estimate, str]:
    """The frontier policy with the best success; the cheapest within the best one's interval."""
    frontier = [e for e in estimates if e.pareto] or estimates
    best = max(frontier, key=lambda e: e.success_rate)
    close = [e for e in frontier if e.success_rate >= best.success_ci[0]]
    pick = min(close, key=lambda e: (e.cost_usd, -e.success_rate))
    why = (
        f"on the Pareto frontier with an estimated success rate of {pick.success_rate:.1%} "
        f"(95 % interval {pick.success_ci[0]:.1%} to {pick.success_ci[1]:.1%}); the highest estimate is "
        f"{best.success_rate:.1%}, and this is the cheapest policy within its interval "
        f"(${pick.cost_usd:.2f} per goal)"
    )
    return pick, why


# ---------------------------------------------------------------- the corpus, in parallel


@dataclass(slots=True)
class Sums:
    """Per-policy running sums over histories (what a worker process sends back)."""

    n: int = 0
    values: list[list[float]] | None = None

    def add(self, results: list[Result]) -> None:
        """One history's results, one per candidate."""
        rows = [r.row() for r in results]
        self.values = rows if self.values is None else _plus(self.values, rows)
        self.n += 1

    def merge(self, other: Sums) -> None:
        if other.values is None:
            return
        self.values = other.values if self.values is None else _plus(self.values, other.values)
        self.n += other.n

    def estimates(self, overrides: Sequence[dict[str, Any]]) -> list[Estimate]:
        assert self.values is not None
        assert self.n > 0
        n = self.n
        return [
            Estimate(
                o,
                v[0] / n,
                wilson(v[0], n),
                (v[1] / n, v[2] / n),
                (v[3] / n, v[4] / n),
                v[5] / n,
                v[6] / n,
                v[7] / n,
            )
            for o, v in zip(overrides, self.values, strict=True)
        ]


@dataclass(frozen=True, slots=True)
class Job:
    """What every worker process needs (sent once)."""

    overrides: tuple[dict[str, Any], ...]
    model: Model
    samples: int
    seed: int


def run_chunk(job: Job, chunk: Sequence[tuple[int, list[Event]]]) -> Sums:
    """Evaluate a chunk of ``(index, events)`` histories; the rng of each depends only on its index."""
    sums = Sums()
    for index, events in chunk:
        rng = random.Random(f"tune:{job.seed}:{index}")
        sums.add(evaluate(events, job.overrides, job.model, samples=job.samples, rng=rng))
    return sums
