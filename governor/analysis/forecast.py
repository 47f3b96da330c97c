"""Forecast: before a goal starts, what it will take under its policy, from similar goals.

This is the library behind ``governor forecast`` and the line ``governor new`` prints
(SPEC §13.8; ``docs/tuning.md`` "Forecast")::

    fc = forecast(corpus_of(["histories/"]), policy)
    fc.quantities["cost_usd"].median, fc.quantities["cost_usd"].median_ci, fc.basis

Rules (one model with tune: the same fit, re-projection, tails, bootstrap and holdout):
    * **Similar goals** (``similar``): in the store, the goals whose planner and worker
      profiles run the same agents as the new goal's (``agent_of``: the same harness,
      model, upstream and arguments, a file argument compared by its name; the names the
      goal file gives the profiles, their timeouts, environment and instructions do not
      matter). A corpus the caller names (``--corpus``) is taken whole.
    * Each history is re-folded under the goal's policy (``tune.evaluate_models``): where
      the outcome is known it is the record's; where it is censored it is completed by
      the fitted model, one tail per bootstrap replicate's model.
    * Per quantity (charged attempts, planner calls, cost, run time), the **median** and
      the **90th percentile** of the pooled outcomes. Each has a 95 % interval: the
      distribution-free interval of that quantile over the histories (its ranks
      ``n p ± 1.96 sqrt(n p (1 - p))``, then ± n e c more: e the holdout's error of that
      quantile in probability per completed goal, c the censored share;
      ``governor.analysis.holdout``), widened to the bootstrap replicates' spread (``t``
      standard deviations, as tune's rows).
    * Its **basis** is tune's (``estimate.basis_of`` of the censored share).
    * ``need_to_finish`` answers the grants' question, "what does this goal need to
      finish": the same model, simulated on from the goal's own state.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Any, Final

from governor.analysis.corpus import Corpus
from governor.analysis.estimate import Basis, Result, basis_of, interval, measure, t_quantile
from governor.analysis.fit import Tally
from governor.analysis.holdout import (
    QUANTILES,
    QUANTITIES,
    Misfit,
    Stat,
    steps_past,
    weighted_quantile,
)
from governor.analysis.model import Model
from governor.analysis.parallel import map_histories
from governor.analysis.tails import simulate_tail
from governor.analysis.tune import evaluate_models
from governor.analysis.tune_corpus import BOOTSTRAP, bootstrap_models, holdout, scan_corpus
from governor.core.budgets import BUDGETS
from governor.core.event_fields import Profile
from governor.core.events import Event, GoalCreated
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.view import GoalView
from governor.errors import InputError

Z: Final = 1.96


@dataclass(frozen=True, slots=True)
class Quantity:
    """One quantity's forecast: its median and 90th percentile, each with a 95 % interval."""

    median: float
    median_ci: tuple[float, float]
    p90: float
    p90_ci: tuple[float, float]


@dataclass(frozen=True, slots=True)
class Forecast:
    """What a goal will take under ``policy``, from ``histories`` similar goals."""

    policy: Policy
    histories: int
    """How many histories it rests on (0: no data; the rest is empty)."""
    similar_by: str
    """``profiles`` (the store's goals with the same profiles) or ``corpus`` (taken whole)."""
    quantities: dict[str, Quantity] = field(default_factory=dict)
    """``charged_attempts``, ``planner_calls``, ``cost_usd``, ``run_time_s``."""
    success_rate: float = 0.0
    success_ci: tuple[float, float] = (0.0, 1.0)
    censored_share: float = 0.0
    basis: Basis = "observed"
    bootstrap: int = 0
    holdout: Misfit = field(default_factory=Misfit)


def agent_of(profile: Profile) -> tuple[object, ...]:
    """What a profile runs: its harness, model, upstream and arguments (a file argument by
    its name: a goal file's relative paths are resolved where the file lies). Timeouts,
    attempts, environment names and instructions do not make another agent."""
    return (
        profile.harness,
        profile.model,
        profile.upstream,
        tuple(PurePath(a).name if "/" in a or "\\" in a else a for a in profile.args),
    )


def profiles_of(created: GoalCreated) -> tuple[object, object]:
    """What makes goals similar: the agents of their planner's and worker's profiles."""
    return (
        agent_of(created.profiles[created.planner]),
        agent_of(created.profiles[created.worker]),
    )


def similar(a: GoalCreated, b: GoalCreated) -> bool:
    """Whether two goals are similar (``profiles_of`` alike)."""
    return profiles_of(a) == profiles_of(b)


def similar_corpus(
    corpus: Corpus, created: GoalCreated, *, workers: int = 1, exclude: str | None = None
) -> Corpus:
    """The histories of ``corpus`` similar to ``created`` (``exclude``: a goal id to leave out)."""
    firsts = map_histories(corpus, _first, None, workers=workers)
    keep = [
        i
        for i, first in enumerate(firsts)
        if first is not None and first.goal_id != exclude and similar(first, created)
    ]
    return subset(corpus, keep)


def _first(_: Any, __: int, events: list[Event]) -> GoalCreated | None:
    """The goal's creation, when it has done anything since (a goal not yet started tells
    nothing of what goals take)."""
    first = events[0] if len(events) > 1 else None
    return first if isinstance(first, GoalCreated) else None


def subset(corpus: Corpus, indices: Sequence[int]) -> Corpus:
    """The histories of ``corpus`` at ``indices`` (in that order: files first, then goals)."""
    nfiles = len(corpus.files)
    files = tuple(corpus.files[i] for i in indices if i < nfiles)
    goals = tuple(corpus.goal_ids[i - nfiles] for i in indices if i >= nfiles)
    return replace(corpus, files=files, goal_ids=goals)


def _difference(policy: Policy, recorded: Policy) -> dict[str, Any]:
    """The fields in which ``policy`` differs from ``recorded`` (tune's override form)."""
    mine, theirs = policy.model_dump(), recorded.model_dump()
    return {k: v for k, v in mine.items() if theirs.get(k) != v}


@dataclass(frozen=True, slots=True)
class _Job:
    policies: tuple[Policy, ...]
    models: tuple[Model, ...]
    samples: int
    seed: int


def _outcomes(job: _Job, index: int, events: list[Event]) -> list[list[list[Result]]]:
    """One history under each policy: ``[policy][model]``, ``samples`` outcomes each."""
    first = events[0]
    assert isinstance(first, GoalCreated)
    overrides = [_difference(p, first.policy) for p in job.policies]
    rng = random.Random(f"forecast:{job.seed}:{index}")
    drawn = [
        evaluate_models(events, overrides, job.models, samples=len(job.models), rng=rng)
        for _ in range(job.samples)
    ]
    return [
        [[d[m][j] for d in drawn] for m in range(len(job.models))] for j in range(len(job.policies))
    ]


def _quantile_ci(
    pooled: Sequence[tuple[float, float]],
    n: int,
    p: float,
    replicates: Sequence[float],
    extra: float = 0.0,
) -> tuple[float, float]:
    """The distribution-free interval of the ``p`` quantile over ``n`` histories (the pooled
    quantiles at ``p`` ± 1.96 sqrt(p (1 - p) / n), and ± ``extra`` more: the model's error in
    probability), widened to the bootstrap replicates' spread."""
    spread = Z * math.sqrt(p * (1 - p) / n) + extra
    low = weighted_quantile(pooled, max(0.0, p - spread))
    high = weighted_quantile(pooled, min(1.0, p + spread))
    if len(replicates) >= 2:
        mean = sum(replicates) / len(replicates)
        sd = math.sqrt(sum((r - mean) ** 2 for r in replicates) / (len(replicates) - 1))
        centre = weighted_quantile(pooled, p)
        half = t_quantile(len(replicates) - 1) * sd
        low, high = min(low, centre - half), max(high, centre + half)
    return low, high


def _summarise(
    policy: Policy,
    per_history: Sequence[list[list[Result]]],
    weights: Sequence[tuple[int, ...]],
    held: Misfit,
    steps: dict[str, int],
    *,
    similar_by: str,
    samples: int,
    bootstrap: int,
) -> Forecast:
    """One policy's forecast from each history's outcomes ``[model][sample]``."""
    n, models = len(per_history), len(per_history[0])
    pooled: list[tuple[float, Result]] = [
        (1 / (models * samples), r) for per_model in per_history for m in per_model for r in m
    ]
    censored = sum(w * r.censored for w, r in pooled) / n
    replicate_samples = (
        [
            [(w[i] / samples, r) for i, per_model in enumerate(per_history) for r in per_model[b]]
            for b, w in enumerate(weights)
        ]
        if bootstrap
        else []
    )
    quantities = {}
    for name, read in QUANTITIES.items():
        values = [(w, read(r)) for w, r in pooled]
        found: dict[str, tuple[float, tuple[float, float]]] = {}
        for label, p in QUANTILES.items():
            stat = Stat(name, p)
            reps = [stat.of(s) for s in replicate_samples]
            extra = held.widen(stat.name, censored, steps)
            low, high = _quantile_ci(values, n, p, reps, extra)
            found[label] = (float(stat.of(pooled)), (max(0.0, low), high))
        quantities[name] = Quantity(*found["median"], *found["p90"])
    success = Stat("success").of(pooled)
    reps = [Stat("success").of(s) for s in replicate_samples]
    ci = interval(success, n, reps, extra=held.widen("success", censored, steps))
    return Forecast(
        policy,
        n,
        similar_by,
        quantities,
        success,
        ci,
        censored,
        basis_of(censored),
        bootstrap,
        held,
    )


def forecasts(
    corpus: Corpus,
    policies: Sequence[Policy],
    *,
    similar_by: str = "corpus",
    bootstrap: int = BOOTSTRAP,
    samples: int = 1,
    workers: int = 1,
    seed: int = 0,
) -> list[Forecast]:
    """What a goal under each of ``policies`` will take, from the histories of ``corpus``
    (see the module): one fit, bootstrap and holdout for them all.

    An empty corpus gives forecasts of no histories (``histories == 0``).
    """
    if bootstrap == 1 or bootstrap < 0:
        raise InputError(f"bootstrap: 0 (off) or 2 or more replicates, not {bootstrap}")
    n = len(corpus)
    if n == 0:
        return [Forecast(p, 0, similar_by) for p in policies]
    scan = scan_corpus(corpus, workers=workers)
    if bootstrap:
        models, weights = bootstrap_models(scan.tallies, bootstrap, seed)
    else:
        total = Tally()
        for tally in scan.tallies:
            total.merge(tally)
        models, weights = (total.model(),), ((1,) * n,)
    job = _Job(tuple(policies), models, samples, seed)
    per_history = map_histories(corpus, _outcomes, job, workers=workers)
    held = holdout(corpus, scan.cuts, workers=workers)
    recorded = Counter(scan.policies).most_common(1)[0][0]
    return [
        _summarise(
            policy,
            [h[j] for h in per_history],
            weights,
            held,
            steps_past(policy, recorded),
            similar_by=similar_by,
            samples=samples,
            bootstrap=bootstrap,
        )
        for j, policy in enumerate(policies)
    ]


def forecast(
    corpus: Corpus,
    policy: Policy,
    *,
    similar_by: str = "corpus",
    bootstrap: int = BOOTSTRAP,
    samples: int = 1,
    workers: int = 1,
    seed: int = 0,
) -> Forecast:
    """What a goal under ``policy`` will take, from the histories of ``corpus`` (see the module)."""
    return forecasts(
        corpus,
        [policy],
        similar_by=similar_by,
        bootstrap=bootstrap,
        samples=samples,
        workers=workers,
        seed=seed,
    )[0]


# ---------------------------------------------------------------- what a goal needs to finish


@dataclass(frozen=True, slots=True)
class Need:
    """What a goal needs to finish from where it is, beyond what it has spent.

    ``median`` and ``p90``: per quantity of ``QUANTITIES`` (charged attempts, planner calls,
    cost in USD, run time in seconds), over ``tails`` simulated continuations;
    ``finishes``: the share of those that succeeded.
    """

    median: dict[str, float]
    p90: dict[str, float]
    finishes: float
    tails: int
    histories: int


LIFT: Final = 4
"""How many times its own limits a goal's budgets are lifted to, to see what finishing takes."""
NEED_TAILS: Final = 200


def lifted(policy: Policy) -> Policy:
    """``policy`` with every limit of the goal's own counted budgets ``LIFT`` times higher
    (and at least ``LIFT``): what the goal would do if they did not stop it."""
    changes: dict[str, Any] = {}
    for budget in BUDGETS:
        if budget.scope != "goal":
            continue
        limit = getattr(policy, budget.field)
        if isinstance(limit, bool) or not isinstance(limit, int | float):
            continue
        value = max(limit * LIFT, LIFT)
        changes[budget.field] = int(value) if isinstance(limit, int) else float(value)
    return with_overrides(policy, changes)


def _spent(r: Result) -> dict[str, float]:
    return {name: read(r) for name, read in QUANTITIES.items()}


def need_to_finish(
    view: GoalView, corpus: Corpus, *, tails: int = NEED_TAILS, seed: int = 0, workers: int = 1
) -> Need:
    """What ``view``'s goal needs to finish: the charged attempts, planner calls, cost and
    run time it would spend from where it is until it succeeds (or stops for a reason no
    budget lifts), with its goal's budgets lifted (``lifted``), by the model fitted to the
    histories of ``corpus`` similar to it (``similar``; all of them when none is; the
    model's defaults for an empty corpus).

    For the grants of SPEC §13.7: a request asks for the median (or the 90th percentile,
    to be safe) of what it needs.

    Raises:
        InputError: for a view of no goal (nothing created).
    """
    created = view.created
    if created is None or view.last_at is None:
        raise InputError("need_to_finish: the view holds no goal")
    alike = similar_corpus(corpus, created, workers=workers, exclude=created.goal_id)
    use = alike if len(alike) else corpus
    total = Tally()
    for tally in map_histories(use, _tally, None, workers=workers, checked=True):
        total.merge(tally)
    model = total.model() if len(use) else Model()
    start = view.copy()
    start.policy = lifted(view.policy)
    now = _spent(measure(view, False))
    rng = random.Random(f"need:{seed}:{created.goal_id}")
    extra: list[dict[str, float]] = []
    finished = 0
    for _ in range(tails):
        result = simulate_tail(start.copy(), model, rng)[0]
        finished += result.success > 0
        extra.append({k: max(0.0, v - now[k]) for k, v in _spent(result).items()})
    return Need(
        {k: weighted_quantile([(1.0, e[k]) for e in extra], 0.5) for k in QUANTITIES},
        {k: weighted_quantile([(1.0, e[k]) for e in extra], 0.9) for k in QUANTITIES},
        finished / tails if tails else 0.0,
        tails,
        len(use),
    )


def _tally(_: Any, __: int, events: list[Event]) -> Tally:
    tally = Tally()
    tally.add(events)
    return tally
