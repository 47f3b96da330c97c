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

import dataclasses
import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from governor.analysis.demands import Demands, first_difference
from governor.analysis.divergence import WhatIf, _diverges, _retarget
from governor.analysis.simulate import T0, Episode, Model, Vendor, World
from governor.analysis.whatif import Trace
from governor.core.budgets import BUDGETS, BY_FIELD, charged_attempts, charged_replans
from governor.core.decide import decide
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.policy import (
    Policy,
    check_policy_value,
    default_milestones,
    milestones_above_replans,
    whole,
    with_overrides,
)
from governor.core.view import GoalView, evolve, fold
from governor.errors import PolicyError

Grid = dict[str, list[Any]]


def parse_grid(specs: Sequence[str]) -> Grid:
    """``["max_replans=1..10", "auto_apply=true,false", "upstream_backoff.initial_s=10..60:10"]``."""
    grid: Grid = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        if not sep or not values:
            raise PolicyError(f"--grid '{spec}' is not field=a..b, field=a..b:step or field=a,b,c")
        grid[name.strip()] = _checked(name.strip(), values.strip())
    return grid


def _checked(name: str, text: str) -> list[Any]:
    """The values of one grid field, each a value the field may hold (SPEC §11.1: never a
    non-finite number); whether they fit together is the candidates' business."""
    values = _values(name, text)
    for value in values:
        if name in Policy.model_fields:
            problem = check_policy_value(name, value)
        elif isinstance(value, float) and not math.isfinite(value):
            problem = "Input should be a finite number"
        else:
            continue  # an unknown field, a nested one: the policy built from it says
        if problem is not None:
            raise PolicyError(
                f"--grid {name}={text}: {value!r} is not a valid {name} ({problem})", field=name
            )
    return values


def _values(name: str, text: str) -> list[Any]:
    from governor.core.durations import duration_or_same  # noqa: PLC0415 - with the parser
    from governor.core.policy import parse_assignments  # noqa: PLC0415 - one parser of values

    read = duration_or_same if name.endswith("_s") else (lambda value: value)
    if ".." in text:
        low, _, rest = text.partition("..")
        high, _, step = rest.partition(":")
        a, b = (read(parse_assignments(f"x={v}")["x"]) for v in (low, high))
        s = read(parse_assignments(f"x={step}")["x"]) if step else 1
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
    return [read(parse_assignments(f"x={v}")["x"]) for v in text.split(",")]


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
    """Every combination of the grid's values that makes a policy a goal may have, as
    overrides (``split_grid``'s first list).

    Raises:
        PolicyError: for milestones without replans, or when no combination is feasible.
    """
    return split_grid(grid)[0]


def split_grid(grid: Grid) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], str]]]:
    """The grid's combinations: those to estimate, and those SPEC §12.1 refuses — no planner
    call left for the completion review (``max_replans`` below 2, or ``max_milestones``
    above ``max_replans - 1``) — each with why. Those are listed as ``infeasible``, never
    estimated nor recommended. A lower ``max_replans`` takes the milestones down with it
    (``with_overrides``); a grid over the milestones must also range over the replans
    (else its validity would depend on each history's recorded replans).

    Raises:
        PolicyError: for milestones without replans, or when no combination is feasible.
    """
    names = list(grid)
    _check_size("the grid", math.prod(len(values) for values in grid.values()))
    if "max_milestones" in grid and "max_replans" not in grid:
        raise PolicyError(
            "--grid max_milestones needs a --grid max_replans too: a policy's max_milestones "
            "must leave a planner call for the completion review under its max_replans"
        )
    feasible, infeasible = [], []
    for combo in itertools.product(*(grid[n] for n in names)):
        override = dict(zip(names, combo, strict=True))
        problem = _infeasible(override)
        if problem is None:
            feasible.append(override)
        else:
            infeasible.append((override, problem))
    if infeasible and not feasible:
        raise PolicyError(f"no policy of the grid can succeed: {infeasible[0][1]}")
    return feasible, infeasible


def _infeasible(override: dict[str, Any]) -> str | None:
    """Why a grid point breaks SPEC §12.1 on its own (None: it does not)."""
    replans = whole(override.get("max_replans"))
    if replans is None:
        return None
    named = whole(override.get("max_milestones"))
    milestones = default_milestones(replans) if named is None else named
    if replans >= 2 and milestones <= replans - 1:
        return None
    return milestones_above_replans(milestones, replans)


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


def _outage(view: GoalView) -> tuple[float, float] | None:
    """(how long the outage had lasted at its last refusal, seconds since) when no call got
    through after the latest refusal; None when the vendor was last seen up."""
    refused = [
        p.failure.at for p in view.plans.values() if p.failure_class == "upstream" and p.failure
    ]
    refused += [
        w.finish.at for w in view.work.values() if w.failure_class == "upstream" and w.finish
    ]
    if not refused or view.last_at is None:
        return None
    through = [p.proposal.at for p in view.plans.values() if p.proposal is not None]
    through += [
        p.failure.at
        for p in view.plans.values()
        if p.failure is not None and p.failure_class != "upstream"
    ]
    through += [
        w.finish.at for w in view.work.values() if w.finish and w.failure_class != "upstream"
    ]
    last_ok = max(through, default=None)
    last = max(refused)
    if last_ok is not None and last_ok >= last:
        return None
    start = min(t for t in refused if last_ok is None or t > last_ok)
    return (last - start).total_seconds(), (view.last_at - last).total_seconds()


class _Tail(Episode):
    """A simulated continuation that keeps its events and when each budget's demand grew."""

    def __init__(self, w: World, view: GoalView, t: float, demands: Demands | None) -> None:
        super().__init__(w, view, [], t)
        self.demands = demands
        self.rises: dict[str, list[tuple[int, float]]] = {}
        self.refused_at: int | None = None

    def add(self, events: list[Event]) -> None:
        for event in events:
            fold(self.view, [event])
            if self.demands is not None:
                most = self.demands.most
                for name in self.demands.note(self.view, event):
                    self.rises.setdefault(name, []).append((len(self.events), most[name]))
                if self.refused_at is None and self.demands.refused:
                    self.refused_at = len(self.events)
            self.events.append(event)


def _world(view: GoalView, model: Model, rng: random.Random) -> tuple[World, float]:
    assert view.last_at is not None
    t = (view.last_at - T0).total_seconds()
    streams = random.Random(rng.random())
    outage, down, left = _outage(view), False, None
    if outage is not None and model.outage_rate_per_h > 0:
        lasted, since = outage
        down = rng.random() < model.outage_survives(lasted, since)
        left = model.outage_rest(lasted + since, rng) if down else None
    vendor = Vendor.steady(
        model.outage_rate_per_h / 3600,
        model.outage_mean_s,
        random.Random(rng.random()),
        start=t,
        down=down,
        model=model,
        left_s=left,
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
    return w, t


def simulate_tail(
    view: GoalView, model: Model, rng: random.Random, demands: Demands | None = None
) -> tuple[Result, _Tail, Decision]:
    """Simulate on from ``view`` (which it takes over) with the fitted model, under its policy."""
    w, t = _world(view, model, rng)
    tail = _Tail(w, view, t, demands)
    final = tail.run()
    return measure(tail.view, final.status == "succeeded", censored=True), tail, final


def complete(result: WhatIf, model: Model, rng: random.Random) -> Result:
    """Simulate a censored tail on from where the re-fold stopped knowing."""
    return simulate_tail(result.view.copy(), model, rng)[0]


@dataclass(slots=True)
class _Story:
    """One simulated continuation, shared by the censored policies that would tell it too."""

    start: int
    """Where in the recorded history it starts (``WhatIf.events``)."""
    policy: Policy
    events: list[Event]
    rises: dict[str, list[tuple[int, float]]]
    """When each budget's demand grew, by index into ``events`` (-1: before the first, the
    counters where it starts)."""
    refused_at: int | None
    final: Decision
    result: Result
    known: dict[tuple[object, ...], Result] = field(default_factory=dict)
    """Outcomes decided on this story, by what the story can tell of the policy."""

    def _key(self, policy: Policy) -> tuple[object, ...]:
        return tuple(
            budget.bucket(getattr(policy, budget.field), self.rises[budget.name][-1][1])
            for budget in BUDGETS
            if budget.scope == "goal"
        )

    def follow(self, policy: Policy, view: GoalView, model: Model, rng: random.Random) -> Result:
        """``policy``'s outcome from ``view`` (its own, at the same start) along this story.

        The same story, where the demands cannot tell the policies apart; else re-folded
        under ``policy`` up to where it would act otherwise: a stop there is its outcome, any
        other difference is simulated on from there. (Policies that differ from the story's
        only in limits of the goal, and alike as far as the story can tell, share an outcome
        decided on it.)
        """
        end = len(self.events)
        skip = first_difference(self.rises, self.refused_at, end, policy, self.policy)
        if skip >= end:  # it asked too little of every budget they differ on: the same
            return self.result
        key = self._key(policy)
        if key in self.known:
            return self.known[key]
        view = view.copy()
        for index, event in enumerate(self.events):
            diverged = _diverges(view, event) if index >= skip else None
            if diverged is not None:
                kind, decision = diverged
                if kind == "stop":
                    result = measure(view, decision.status == "succeeded", censored=True)
                    self.known[key] = result
                    return result
                return simulate_tail(view, model, rng)[0]
            retargeted = _retarget(event, policy, self.policy, view)
            if retargeted is not None:
                evolve(view, retargeted)
            else:
                view.seq, view.last_at = event.seq, event.at
        assert view.last_at is not None
        final = decide(view, view.last_at, with_ledger=False)
        if (final.status, final.next_action) == (self.final.status, self.final.next_action):
            self.known[key] = measure(view, final.status == "succeeded", censored=True)
            return self.known[key]
        return simulate_tail(view, model, rng)[0]


def _looser_first(override: dict[str, Any]) -> tuple[Any, ...]:
    """Candidates with larger limits first: their stories serve the tighter ones."""
    return tuple(
        -v if isinstance(v, int | float) and not isinstance(v, bool) else 0
        for v in override.values()
    )


def _at_start(trace: Trace, view: GoalView) -> Demands:
    """What the decisions from ``view`` on have been asked of each budget so far: the goal's
    counters where the story starts (the record before it agreed with every policy that
    follows the story); the record's most for the per-item and per-run ones (stories serve
    only policies alike in those)."""
    demands = Demands(most=dict(trace.demands.most), refused=trace.demands.refused)
    for budget in BUDGETS:
        if budget.scope == "goal":
            demands.most[budget.name] = budget.used(view, None)
    return demands


def _alike(policy: Policy, other: Policy) -> bool:
    """Whether one policy's story may serve the other: they differ only in limits of the
    goal whose spending stops it (an item's limits send it elsewhere: a replan)."""
    for name in Policy.model_fields:
        if getattr(policy, name) != getattr(other, name):
            budget = BY_FIELD.get(name)
            if budget is None or budget.scope != "goal":
                return False
    return True


def complete_all(
    trace: Trace,
    censored: Sequence[tuple[dict[str, Any], Policy, WhatIf]],
    model: Model,
    rng: random.Random,
) -> list[Result]:
    """One Monte Carlo outcome for each censored candidate (in the order given).

    Candidates share stories (common random numbers): the loosest simulates on, and the
    others follow its story while they would act alike, simulating their own only from
    where they would not. Each outcome is still a draw from the fitted model under its
    own policy.
    """
    order = sorted(range(len(censored)), key=lambda i: _looser_first(censored[i][0]))
    stories: list[_Story] = []
    out: dict[int, Result] = {}
    for i in order:
        _, policy, result = censored[i]
        for story in stories:
            if story.start == result.events and _alike(policy, story.policy):
                out[i] = story.follow(policy, result.view, model, rng)
                break
        else:
            demands = _at_start(trace, result.view)
            start = dict(demands.most)
            done, tail, final = simulate_tail(result.view.copy(), model, rng, demands)
            rises = {name: [(-1, most), *tail.rises.get(name, [])] for name, most in start.items()}
            refused = -1 if trace.refused_at is not None else tail.refused_at
            stories.append(_Story(result.events, policy, tail.events, rises, refused, final, done))
            out[i] = done
    return [out[i] for i in range(len(censored))]


def _mean(results: list[Result]) -> Result:
    """The average of Monte Carlo tails: a censored result."""
    m = [sum(column) / len(results) for column in zip(*(r.row() for r in results), strict=True)]
    return Result(m[0], m[1], m[2], m[3], m[4], m[5], m[6], censored=True)


_POLICIES: dict[tuple[Policy, tuple[tuple[tuple[str, Any], ...], ...]], tuple[Policy, ...]] = {}


def candidate_policies(recorded: Policy, overrides: Sequence[dict[str, Any]]) -> tuple[Policy, ...]:
    """The candidates as whole policies over ``recorded`` (built once per recorded policy:
    a corpus is mostly recorded under a few)."""
    key = (recorded, tuple(tuple(sorted(o.items())) for o in overrides))
    if key not in _POLICIES:
        if len(_POLICIES) > 64:
            _POLICIES.clear()
        _POLICIES[key] = tuple(with_overrides(recorded, o) for o in overrides)
    return _POLICIES[key]


def _fields_of(override: dict[str, Any]) -> list[str]:
    """The policy fields an override may change (a lower ``max_replans`` lowers the milestones)."""
    names = {name.partition(".")[0] for name in override}
    if "max_replans" in names:
        names.add("max_milestones")
    return sorted(names)


def _keys(
    trace: Trace, overrides: Sequence[dict[str, Any]], policies: Sequence[Policy]
) -> list[tuple[object, ...]]:
    """Each candidate's ``Demands.key`` over the fields its override may change (a grid's
    candidates all change the same ones: keyed together)."""
    names = [_fields_of(o) for o in overrides]
    if all(n == names[0] for n in names):
        return trace.demands.keys(policies, names[0] if names else [])
    return [trace.demands.key(p, n) for p, n in zip(policies, names, strict=True)]


def evaluate_models(
    events: list[Event],
    overrides: Sequence[dict[str, Any]],
    models: Sequence[Model],
    *,
    samples: int,
    rng: random.Random,
) -> list[list[Result]]:
    """One history under every candidate policy, completed with each model: ``[model][candidate]``.

    Re-projection runs once; only the censored candidates are completed: ``samples``
    tails in all, spread over the models (at least one each).
    """
    trace = Trace.of(events)
    policies = candidate_policies(trace.policy, overrides)
    keys = _keys(trace, overrides, policies)
    first: dict[tuple[object, ...], int] = {}
    for position, key in enumerate(keys):
        first.setdefault(key, position)
    # the history cannot tell apart policies of one key (they differ only in the grid's fields)
    refolds = trace.under_all([policies[p] for p in first.values()], ledger=False)
    known: dict[tuple[object, ...], tuple[WhatIf, Result | None]] = {
        key: (r, measure(r.view, r.final.status == "succeeded") if r.known else None)
        for key, r in zip(first, refolds, strict=True)
    }
    slots: list[Result | int] = []
    """Per candidate: its known result, or its index among the censored ones."""
    open_: list[tuple[dict[str, Any], Policy, WhatIf]] = []
    for position, (override, policy, key) in enumerate(zip(overrides, policies, keys, strict=True)):
        result, outcome = known[key]
        if outcome is not None:
            slots.append(outcome)
            continue
        if first[key] != position:  # censored: each goes on its own way, from its own view
            result = trace.alike(result, policy, ledger=False) or trace.under(policy, ledger=False)
        slots.append(len(open_))
        open_.append((override, policy, result))
    per_model = []
    each = max(1, math.ceil(samples / len(models)))  # the tails are spread over the models
    for model in models:
        drawn = [complete_all(trace, open_, model, rng) for _ in range(each)] if open_ else []
        tails = [_mean([d[i] for d in drawn]) for i in range(len(open_))]
        per_model.append([tails[x] if isinstance(x, int) else x for x in slots])
    return per_model


def evaluate(
    events: list[Event],
    overrides: Sequence[dict[str, Any]],
    model: Model,
    *,
    samples: int,
    rng: random.Random,
) -> list[Result]:
    """One history under every candidate policy."""
    return evaluate_models(events, overrides, [model], samples=samples, rng=rng)[0]


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
    success: float, n: int, replicates: Sequence[float], *, widen: float = 1.0
) -> tuple[float, float]:
    """The 95 % interval of a success rate.

    The Wilson interval over the goals (their sampling), widened to the bootstrap's:
    ``t`` standard deviations of the replicate estimates (each refitted the model on
    goals drawn with replacement and completed the censored ones with it: goal sampling,
    model uncertainty and Monte Carlo noise together). ``widen`` scales the bootstrap
    part when a model check is poor.
    """
    low, high = wilson(success * n, n)
    if len(replicates) >= 2:
        mean = sum(replicates) / len(replicates)
        sd = math.sqrt(sum((r - mean) ** 2 for r in replicates) / (len(replicates) - 1))
        half = t_quantile(len(replicates) - 1) * sd * widen
        low, high = min(low, success - half), max(high, success + half)
    elif widen > 1:
        low, high = success - (success - low) * widen, success + (high - success) * widen
    return (max(0.0, low), min(1.0, high))


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


# ---------------------------------------------------------------- the corpus, in parallel


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
        self, overrides: Sequence[dict[str, Any]], *, widen: float = 1.0
    ) -> list[Estimate]:
        """Every candidate's estimate; ``widen`` scales the intervals of extrapolated rows."""
        assert self.values is not None
        assert self.n > 0
        n = self.n
        out = []
        for j, (o, v) in enumerate(zip(overrides, self.values, strict=True)):
            basis = basis_of(v[7] / n)
            reps = [r[j] / n for r in self.replicates] if self.replicates else []
            ci = interval(v[0] / n, n, reps, widen=widen if basis == "extrapolated" else 1.0)
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


@dataclass(frozen=True, slots=True)
class Job:
    """What every worker process needs (sent once)."""

    overrides: tuple[dict[str, Any], ...]
    models: tuple[Model, ...]
    """One model (no bootstrap), or one per bootstrap replicate."""
    samples: int
    seed: int
    weights: tuple[tuple[int, ...], ...] = ()
    """Per bootstrap replicate, how often each history was drawn (empty: no bootstrap)."""


def run_chunk(job: Job, chunk: Sequence[tuple[int, list[Event]]]) -> Sums:
    """Evaluate a chunk of ``(index, events)`` histories; the rng of each depends only on its index.

    A history's estimate averages its outcomes over the models; replicate b adds its own
    outcomes with the weight its bootstrap draw gave the history.
    """
    sums = Sums()
    for index, events in chunk:
        rng = random.Random(f"tune:{job.seed}:{index}")
        per_model = evaluate_models(events, job.overrides, job.models, samples=job.samples, rng=rng)
        pooled = [_mean_of([m[j] for m in per_model]) for j in range(len(job.overrides))]
        replicates = (
            [(w[index], m) for w, m in zip(job.weights, per_model, strict=True)]
            if job.weights
            else []
        )
        sums.add(pooled, replicates)
    return sums


def _mean_of(results: list[Result]) -> Result:
    if len(results) == 1:
        return results[0]
    m = [sum(column) / len(results) for column in zip(*(r.row() for r in results), strict=True)]
    return Result(m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7] > 0)
