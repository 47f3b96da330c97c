"""Tune's censored tails: simulate a goal on from where a re-fold stopped knowing.

Method (``docs/tuning.md`` step 3): where a policy would have gone on past what was
recorded, the tail is completed by Monte Carlo with the fitted model, through the real
core: an item's success is drawn from its posterior (what it already showed), and an
outage still open at the end goes on as the model says it survives.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from governor.analysis.demands import Demands
from governor.analysis.divergence import WhatIf
from governor.analysis.estimate import Result, measure
from governor.analysis.model import Model, Vendor
from governor.analysis.simulate import T0, Episode, World
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.fold import fold
from governor.core.view import GoalView


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
