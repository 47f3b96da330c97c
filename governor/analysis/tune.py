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

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from governor.analysis.demands import Demands, first_difference
from governor.analysis.divergence import WhatIf, _diverges, _retarget
from governor.analysis.estimate import Result, Sums, measure
from governor.analysis.model import Model
from governor.analysis.tails import simulate_tail
from governor.analysis.whatif import Trace
from governor.core.budgets import BUDGETS, BY_FIELD
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.fold import evolve
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.rules.decider import Decider
from governor.core.view import GoalView


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
        decider = Decider(view)
        for index, event in enumerate(self.events):
            diverged = _diverges(decider, event) if index >= skip else None
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
        final = decider.decide(view.last_at, with_ledger=False)
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
    key = (recorded, tuple(_frozen(o) for o in overrides))
    if key not in _POLICIES:
        if len(_POLICIES) > 64:
            _POLICIES.clear()
        _POLICIES[key] = tuple(with_overrides(recorded, o) for o in overrides)
    return _POLICIES[key]


def _frozen(value: Any) -> Any:
    """``value`` as a dictionary key: a mapping (a nested policy field such as ``grants``
    or ``upstream_backoff``) as its sorted items, a list as a tuple."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


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


# ---------------------------------------------------------------- the corpus, in parallel


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
