"""The generative model of goal histories: its parameters, and the vendor's outage process.

The model is stated in ``governor.analysis.simulate`` (and ``docs/tuning.md``, with its
defaults); ``Model`` holds its parameters, ``Vendor`` draws its on/off outage process
lazily along the clock. The simulator (``simulate``), the fit (``fit``) and tune's tails
(``tails``) share them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Model:
    """The generative model's parameters (see the module docstring)."""

    outage_rate_per_h: float = 0.5
    outage_mean_s: float = 900.0
    retry_after_p: float = 0.3
    missing_binary: float = 0.02
    plan_success: float = 0.85
    plan_decision: float = 0.01
    max_items: int = 4
    complete_after_milestone: float = 0.6
    item_a: float = 2.0
    item_b: float = 1.0
    attempt_decision: float = 0.01
    planner_s: float = 60.0
    worker_s: float = 300.0
    refusal_s: float = 2.0
    worker_cost_usd: float = 0.25
    repeat_failed: float = 0.0
    """The chance that an item of a plan is a failed item of an earlier plan, proposed
    again (its success probability is that item's): planners that repeat a failing item."""
    outage_lengths_s: tuple[float, ...] = ()
    """Outage lengths to draw from, equally likely, counted from the first call that meets
    the outage to its end, as a goal sees them (empty: exponential, ``outage_mean_s``)."""
    plan_sizes: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """Per kind of plan (``initial``, ``replan``, ``milestone``), proposal sizes to draw
    from, equally likely (none for a kind: 1 to ``max_items``, uniformly)."""

    def plan_size(self, rng: random.Random, trigger: str = "initial") -> int:
        """How many items a proposal holds (``trigger``: why the plan was asked for)."""
        kind = trigger if trigger in ("replan", "milestone") else "initial"
        sizes = dict(self.plan_sizes).get(kind)
        if not sizes:
            return rng.randint(1, self.max_items)
        return sizes[int(rng.random() * len(sizes))]

    def outage_length(self, rng: random.Random) -> float:
        """A new outage's length."""
        if not self.outage_lengths_s:
            return rng.expovariate(1 / self.outage_mean_s)
        return self.outage_lengths_s[int(rng.random() * len(self.outage_lengths_s))]

    def outage_survives(self, lasted_s: float, more_s: float) -> float:
        """The chance an outage that lasted ``lasted_s`` lasts ``more_s`` more."""
        if not self.outage_lengths_s:
            return math.exp(-more_s / self.outage_mean_s)
        alive = [x for x in self.outage_lengths_s if x > lasted_s]
        if not alive:
            return 0.0
        return sum(x > lasted_s + more_s for x in alive) / len(alive)

    def outage_rest(self, lasted_s: float, rng: random.Random) -> float:
        """What is left of an outage known to have lasted ``lasted_s`` (and still going)."""
        if not self.outage_lengths_s:
            return rng.expovariate(1 / self.outage_mean_s)
        alive = [x for x in self.outage_lengths_s if x > lasted_s]
        if not alive:
            return rng.expovariate(1 / self.outage_mean_s)
        return alive[int(rng.random() * len(alive))] - lasted_s


@dataclass(slots=True)
class Vendor:
    """An on/off outage process in its steady state, drawn lazily along the clock.

    At ``start`` it is down with probability r*m / (1 + r*m) (r: outages per second, m:
    their mean length), so a call at any time meets an outage with that probability.
    """

    rate_per_s: float
    mean_s: float
    rng: random.Random
    windows: list[tuple[float, float]] = field(default_factory=list)
    horizon: float = 0.0
    model: Model | None = None
    """Draws the outages' lengths (None: exponential with mean ``mean_s``)."""
    met: set[int] = field(default_factory=set)
    """Outages (by index) a call has met: with the model's lengths, an outage lasts a drawn
    length from the first call that meets it (as the fit measures them)."""

    @classmethod
    def steady(
        cls,
        rate_per_s: float,
        mean_s: float,
        rng: random.Random,
        *,
        start: float = 0.0,
        down: bool | None = None,
        model: Model | None = None,
        left_s: float | None = None,
    ) -> Vendor:
        """A vendor at ``start``: down or up as given, else as the steady state draws it.

        ``model`` draws the outages' lengths; ``left_s``: what is left of the outage it is in.
        """
        vendor = cls(rate_per_s, mean_s, rng, horizon=start, model=model)
        busy = rate_per_s * mean_s
        if down is None:
            down = rng.random() < busy / (1 + busy)
        if down:
            if left_s is None:
                left_s = rng.expovariate(1 / mean_s) if model is None else model.outage_length(rng)
            vendor.horizon = start + left_s
            vendor.windows.append((start - 1e-9, vendor.horizon))
            vendor.met.add(0)
        return vendor

    def _extend(self, t: float) -> None:
        while self.horizon <= t:
            if self.rate_per_s <= 0:
                self.horizon = math.inf
                return
            start = self.horizon + self.rng.expovariate(self.rate_per_s)
            if self.model is None:
                end = start + self.rng.expovariate(1 / self.mean_s)
            else:
                end = start + self.model.outage_length(self.rng)
            self.windows.append((start, end))
            self.horizon = end

    def down_until(self, t: float) -> float | None:
        """When the current outage ends, or None when the vendor is up at ``t``."""
        self._extend(t)
        for index in range(len(self.windows) - 1, -1, -1):
            start, end = self.windows[index]
            if start <= t < end:
                return self._meet(index, t)
            if end <= t:
                return None
        return None

    def _meet(self, index: int, t: float) -> float:
        """A call at ``t`` meets outage ``index``: with the model's lengths, the first such
        call fixes its end (what was drawn after it is drawn again)."""
        start, end = self.windows[index]
        if index in self.met or self.model is None or not self.model.outage_lengths_s:
            return end
        self.met.add(index)
        end = t + self.model.outage_length(self.rng)
        del self.windows[index:]
        self.windows.append((start, end))
        self.horizon = end
        return end
