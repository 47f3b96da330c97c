"""Fit: the generative model's parameters, estimated from a corpus of recorded histories.

Rules (the estimators are stated in ``docs/tuning.md``):
    * Planner and worker outcome rates are counted over calls that reached the vendor
      (refusals and missing binaries are the outage and environment parts of the model).
    * An item's success probability is Beta(a, b) across items; (a, b) maximise the
      Beta-geometric likelihood of "f charged failures, then a success" per item, with
      items that never succeeded counted as censored ("f failures, then nothing").
    * An outage episode runs from the first refusal to the first call that got through
      after it; episodes a goal stopped inside are censored (exponential MLE). The rate
      is episodes per second of time the vendor was seen up.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from governor.analysis.simulate import Model
from governor.core.events import (
    AttemptFinished,
    AttemptStarted,
    Event,
    PlanFailed,
    PlanProposed,
    PlanRequested,
)
from governor.core.numbers import later


@dataclass(slots=True)
class Tally:
    """Counts gathered over a corpus, turned into a ``Model`` by :meth:`model`."""

    plans: Counter[str] = field(default_factory=Counter)
    attempts: Counter[str] = field(default_factory=Counter)
    items: Counter[tuple[int, bool]] = field(default_factory=Counter)
    """(charged failures, succeeded) -> number of items."""
    milestones: Counter[bool] = field(default_factory=Counter)
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

    def add(self, events: Iterable[Event]) -> None:
        """Count one history."""
        _History(self).read(events)

    def model(self) -> Model:
        """The maximum-likelihood model (defaults where the corpus says nothing)."""
        base = Model()
        a, b = beta_geometric(self.items) if self.items else (base.item_a, base.item_b)
        reached = sum(self.plans.values())
        tried = sum(self.attempts.values())
        episodes = len(self.outage_s)
        mean_out = (
            (sum(self.outage_s) + sum(self.outage_censored_s)) / episodes
            if episodes
            else base.outage_mean_s
        )
        mean_out = max(mean_out, 1.0)
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
        )


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
        self.outage_since: datetime | None = None
        self.last_refusal: datetime | None = None
        self.hint: float | None = None
        self.last_through: datetime | None = None

    def read(self, events: Iterable[Event]) -> None:
        last = None
        for event in events:
            last = event.at
            self.t.events += 1
            self._one(event)
        for work_id in set(self.failures) | self.succeeded:
            self.t.items[(self.failures[work_id], work_id in self.succeeded)] += 1
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
                if self.requested.get(event.plan_id, (event.at, ""))[1] == "milestone":
                    self.t.milestones[event.decision == "complete"] += 1
            case PlanFailed() if event.failure_class == "upstream":
                self._refused(event.at, event.retry_after_s)
            case PlanFailed() if event.failure_class != "environment":
                self._planned(event.plan_id, event.at)
                self.t.plans["decision" if event.failure_class == "decision" else "failed"] += 1
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


def fit(corpus: Iterable[Iterable[Event]]) -> Model:
    """The model that best explains a corpus."""
    return Tally.of(corpus).model()
