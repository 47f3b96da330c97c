"""Fit: the generative model's parameters, estimated from a corpus of recorded histories.

Rules (the estimators are stated in ``docs/tuning.md``):
    * Planner and worker outcome rates are counted over calls that reached the vendor
      (refusals and missing binaries are the outage and environment parts of the model).
      Proposal sizes are drawn from those seen.
    * An item's success probability is Beta(a, b) across items; (a, b) maximise the
      Beta-geometric likelihood of "f charged failures, then a success" per item, with
      items that never succeeded counted as censored ("f failures, then nothing"), over
      the items proposed while no item of the goal had failed (those are new for sure).
    * An item proposed after another failed is, with probability ``repeat_failed``, one of
      those failed items again (its q given their failures so far), else new: the share
      maximises that mixture's likelihood.
    * An outage episode runs from the first refusal to the first call that got through
      after it; episodes a goal stopped inside are censored. Lengths are the
      Kaplan-Meier estimate (no shape assumed: outages may be heavy-tailed). The rate
      is fitted to the calls that met or missed an outage.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from governor.analysis.model import Model
from governor.core.events import Event, PlanFailed, PlanProposed, PlanRequested
from governor.core.fold import evolve
from governor.core.headroom import must_say_complete
from governor.core.numbers import later
from governor.core.view import GoalView
from governor.core.work_events import AttemptFinished, AttemptStarted, WorkCreated


@dataclass(slots=True)
class Tally:
    """Counts gathered over a corpus, turned into a ``Model`` by :meth:`model`."""

    plans: Counter[str] = field(default_factory=Counter)
    attempts: Counter[str] = field(default_factory=Counter)
    items: Counter[tuple[int, bool]] = field(default_factory=Counter)
    """(charged failures, succeeded) -> number of items proposed while none had failed."""
    later: Counter[tuple[int, bool, tuple[int, ...]]] = field(default_factory=Counter)
    """(charged failures, succeeded, the failures of each failed item of the goal when it
    was proposed) -> number of items proposed after an item failed."""
    milestones: Counter[bool] = field(default_factory=Counter)
    sizes: Counter[tuple[str, int]] = field(default_factory=Counter)
    """(kind of plan, items proposed) -> number of proposals."""
    max_items: int = 1
    planner_s: list[float] = field(default_factory=list)
    worker_s: list[float] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)
    outage_s: list[float] = field(default_factory=list)
    outage_censored_s: list[float] = field(default_factory=list)
    fresh: Counter[tuple[float | None, bool]] = field(default_factory=Counter)
    """(seconds since the last call that got through, or None for a goal's first call; refused?)
    for every call made while no outage was known."""
    refusals: int = 0
    hinted: int = 0

    events: int = 0
    """How many events the tallied histories hold."""

    @classmethod
    def of(cls, corpus: Iterable[Iterable[Event]]) -> Tally:
        """The counts of a whole corpus."""
        tally = cls()
        for history in corpus:
            tally.add(history)
        return tally

    def merge(self, other: Tally, times: int = 1) -> None:
        """Add ``other``'s counts ``times`` over (a bootstrap draws a history that often)."""
        for name in ("plans", "attempts", "items", "later", "milestones", "fresh", "sizes"):
            mine: Counter[object] = getattr(self, name)
            for key, n in getattr(other, name).items():
                mine[key] += n * times
        for name in ("planner_s", "worker_s", "costs", "outage_s", "outage_censored_s"):
            getattr(self, name).extend(getattr(other, name) * times)
        self.max_items = max(self.max_items, other.max_items)
        self.refusals += other.refusals * times
        self.hinted += other.hinted * times
        self.events += other.events * times

    def add(self, events: Iterable[Event]) -> None:
        """Count one history."""
        _History(self).read(events)

    def model(self) -> Model:
        """The maximum-likelihood model (defaults where the corpus says nothing)."""
        base = Model()
        a, b = beta_geometric(self.items) if self.items else (base.item_a, base.item_b)
        lengths = kaplan_meier(self.outage_s, self.outage_censored_s)
        reached = sum(self.plans.values())
        tried = sum(self.attempts.values())
        mean_out = max(sum(lengths) / len(lengths) if lengths else base.outage_mean_s, 1.0)
        return Model(
            outage_rate_per_h=outage_rate(self.fresh, mean_out) * 3600,
            outage_mean_s=mean_out,
            retry_after_p=self.hinted / self.refusals if self.refusals else base.retry_after_p,
            missing_binary=0.0,
            plan_success=self.plans["proposed"] / reached if reached else base.plan_success,
            plan_decision=self.plans["decision"] / reached if reached else base.plan_decision,
            max_items=self.max_items,
            complete_after_milestone=(
                self.milestones[True] / sum(self.milestones.values())
                if self.milestones
                else base.complete_after_milestone
            ),
            item_a=a,
            item_b=b,
            attempt_decision=self.attempts["decision"] / tried if tried else base.attempt_decision,
            planner_s=_mean(self.planner_s, base.planner_s),
            worker_s=_mean(self.worker_s, base.worker_s),
            refusal_s=base.refusal_s,
            worker_cost_usd=_mean(self.costs, base.worker_cost_usd),
            repeat_failed=repeat_share(self.later, a, b) if self.later else 0.0,
            outage_lengths_s=lengths,
            plan_sizes=tuple(
                (kind, _spread(Counter({n: c for (k, n), c in self.sizes.items() if k == kind})))
                for kind in ("initial", "replan", "milestone")
                if any(k == kind for k, _ in self.sizes)
            ),
        )


SIZE_POINTS: Final = 200


def _spread(counts: Counter[int]) -> tuple[int, ...]:
    """About ``SIZE_POINTS`` equally likely values in the proportions of ``counts``."""
    total = sum(counts.values())
    spread = [k for k, n in sorted(counts.items()) for _ in range(round(SIZE_POINTS * n / total))]
    return tuple(spread) or tuple(sorted(counts))


def _mean(values: list[float], default: float) -> float:
    return sum(values) / len(values) if values else default


class _History:
    """Reads one history into a tally: runs, outage episodes, items."""

    def __init__(self, tally: Tally) -> None:
        self.t = tally
        self.started: dict[str, datetime] = {}
        self.requested: dict[str, tuple[datetime, str]] = {}
        self.failures: Counter[str] = Counter()
        self.succeeded: set[str] = set()
        self.before: dict[str, tuple[int, ...]] = {}
        """Work id -> the failures of each failed item of other plans when it was created."""
        self.plan_of: dict[str, str] = {}
        self.outage_since: datetime | None = None
        self.last_refusal: datetime | None = None
        self.hint: float | None = None
        self.last_through: datetime | None = None
        self.view = GoalView()
        """The history folded up to the event being read (what its milestone prompt allowed)."""

    def read(self, events: Iterable[Event]) -> None:
        last = None
        for event in events:
            last = event.at
            self.t.events += 1
            self._one(event)
            evolve(self.view, event)
        for work_id in set(self.failures) | self.succeeded:
            seen = (self.failures[work_id], work_id in self.succeeded)
            before = self.before.get(work_id, ())
            if before:
                self.t.later[(*seen, before)] += 1
            else:
                self.t.items[seen] += 1
        if last is not None:
            self._close(last)

    def _close(self, end: datetime) -> None:
        if self.outage_since is not None:
            self.t.outage_censored_s.append((end - self.outage_since).total_seconds())

    def _refused(self, at: datetime, retry_after: float | None) -> None:
        self.t.refusals += 1
        self.t.hinted += retry_after is not None
        if self.outage_since is None:
            self.t.fresh[(self._gap(at), True)] += 1
            self.outage_since = at
        self.last_refusal, self.hint = at, retry_after

    def _gap(self, at: datetime) -> float | None:
        return (
            None if self.last_through is None else round((at - self.last_through).total_seconds())
        )

    def _through(self, at: datetime) -> None:
        if self.outage_since is None:
            self.t.fresh[(self._gap(at), False)] += 1
        else:
            assert self.last_refusal is not None
            # it ended between the last refusal and this call: when the vendor said, else midway
            end = self.last_refusal + (at - self.last_refusal) / 2
            if self.hint is not None:
                end = min(at, later(self.last_refusal, self.hint))
            self.t.outage_s.append((end - self.outage_since).total_seconds())
            self.outage_since = None
        self.last_through = at

    def _one(self, event: Event) -> None:
        match event:
            case PlanRequested():
                self.requested[event.plan_id] = (event.at, event.trigger)
            case PlanProposed():
                self._planned(event.plan_id, event.at)
                self.t.plans["proposed"] += 1
                self.t.max_items = max(self.t.max_items, len(event.work))
                if event.work:
                    trigger = self.requested.get(event.plan_id, (event.at, "initial"))[1]
                    kind = trigger if trigger in ("replan", "milestone") else "initial"
                    self.t.sizes[(kind, len(event.work))] += 1
                # a planner whose milestone prompt allowed only ``complete`` (its milestones
                # used, SPEC §5) chose nothing: only a free choice tells the model's rate
                milestone = self.requested.get(event.plan_id, (event.at, ""))[1] == "milestone"
                if milestone and not must_say_complete(self.view):
                    self.t.milestones[event.decision == "complete"] += 1
            case PlanFailed() if event.failure_class == "upstream":
                self._refused(event.at, event.retry_after_s)
            case PlanFailed() if event.failure_class != "environment":
                self._planned(event.plan_id, event.at)
                self.t.plans["decision" if event.failure_class == "decision" else "failed"] += 1
            case WorkCreated():
                self.plan_of[event.work_id] = event.plan_id
                self.before[event.work_id] = tuple(
                    sorted(
                        n
                        for w, n in self.failures.items()
                        if n and w not in self.succeeded and self.plan_of.get(w) != event.plan_id
                    )
                )
            case AttemptStarted():
                self.started[event.work_id] = event.at
            case AttemptFinished():
                self._finished(event)
            case _:
                pass

    def _planned(self, plan_id: str, at: datetime) -> None:
        self._through(at)
        if plan_id in self.requested:
            self.t.planner_s.append((at - self.requested[plan_id][0]).total_seconds())

    def _finished(self, event: AttemptFinished) -> None:
        if event.failure_class == "upstream" and event.outcome == "failed":
            self._refused(event.at, event.retry_after_s)
            return
        self._through(event.at)
        if event.work_id in self.started:
            self.t.worker_s.append((event.at - self.started[event.work_id]).total_seconds())
        if event.cost_usd is not None:
            self.t.costs.append(event.cost_usd)
        kind = "decision" if event.failure_class == "decision" else event.outcome
        self.t.attempts[kind] += 1
        if event.outcome == "succeeded":
            self.succeeded.add(event.work_id)
        elif event.failure_class is None:
            self.failures[event.work_id] += 1


def outage_rate(fresh: Counter[tuple[float | None, bool]], mean_s: float) -> float:
    """Outages per second, by maximum likelihood of the calls that met (or missed) an outage.

    For an on/off process with start rate r and mean length m observed at a call, the
    chance it is down is pi = r*m/(1+r*m) for a first call, and pi*(1 - exp(-(r+1/m)*gap))
    ``gap`` seconds after a call that got through.
    """
    if not fresh or not any(hit for (_, hit) in fresh):
        return 0.0

    def loglik(rate: float) -> float:
        busy = rate * mean_s
        pi, speed = busy / (1 + busy), rate + 1 / mean_s
        total = 0.0
        for (gap, hit), n in fresh.items():
            p = pi if gap is None else pi * (1 - math.exp(-speed * gap))
            p = min(max(p, 1e-12), 1 - 1e-12)
            total += n * (math.log(p) if hit else math.log(1 - p))
        return total

    grid = [1e-7 * 1.1**k for k in range(160)]
    return max(grid, key=loglik)


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def beta_geometric(items: Counter[tuple[int, bool]]) -> tuple[float, float]:
    """(a, b) maximising the Beta-geometric likelihood of the items' failure counts."""
    grid = [0.25 * 1.15**k for k in range(40)]

    def loglik(a: float, b: float) -> float:
        base = _log_beta(a, b)
        total = 0.0
        for (failures, succeeded), n in items.items():
            total += n * (
                (_log_beta(a + 1, b + failures) if succeeded else _log_beta(a, b + failures)) - base
            )
        return total

    return max(((a, b) for a in grid for b in grid), key=lambda ab: loglik(*ab))


def repeat_share(later: Counter[tuple[int, bool, tuple[int, ...]]], a: float, b: float) -> float:
    """The share of items proposed after a failure that repeat a failed item (grid MLE).

    A repeat of an item that failed F times has q ~ Beta(a, b + F); a new item Beta(a, b).
    """

    def item(failures: int, succeeded: bool, extra: int) -> float:
        top = _log_beta(a + succeeded, b + extra + failures) - _log_beta(a, b + extra)
        return math.exp(top)

    rows = [
        (n, item(f, s, 0), sum(item(f, s, e) for e in before) / len(before))
        for (f, s, before), n in later.items()
    ]

    def loglik(rho: float) -> float:
        return sum(n * math.log((1 - rho) * new + rho * again + 1e-300) for n, new, again in rows)

    return max((k / 100 for k in range(101)), key=loglik)


KM_POINTS: Final = 400
"""How many equally likely lengths stand for the fitted outage-length distribution."""


def kaplan_meier(ended: list[float], censored: list[float]) -> tuple[float, ...]:
    """Equally likely lengths following the Kaplan-Meier estimate of the outage lengths.

    An outage a goal stopped inside (censored) says only "longer than this". Beyond the
    longest outage seen to end, the estimate says nothing: there the lengths go on as an
    exponential tail whose mean is the censored MLE of the excess over the upper quartile.
    """
    if not ended:
        return ()
    times = sorted([(x, True) for x in ended] + [(x, False) for x in censored])
    at_risk, alive, steps = len(times), 1.0, []
    for x, end in times:
        if end:
            alive *= 1 - 1 / at_risk
            steps.append((x, 1 - alive))
        at_risk -= 1
    last = steps[-1][0]
    cut = sorted(ended)[(3 * len(ended)) // 4]
    over = sum(1 for x in ended if x > cut)
    excess = sum(x - cut for x, _ in times if x > cut)
    tail_mean = excess / over if over else max(last, 1.0)
    points, k = [], 0
    for i in range(KM_POINTS):
        u = (i + 0.5) / KM_POINTS
        while k < len(steps) and steps[k][1] < u:
            k += 1
        if k < len(steps):
            points.append(steps[k][0])
        else:  # past the last ended outage: the exponential tail, from there
            reached = steps[-1][1]
            points.append(
                last - tail_mean * math.log(max(1 - (u - reached) / (1 - reached), 1e-12))
            )
    return tuple(max(p, 1.0) for p in points)


def fit(corpus: Iterable[Iterable[Event]]) -> Model:
    """The model that best explains a corpus."""
    return Tally.of(corpus).model()
