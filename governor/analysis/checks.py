"""Model checks: does the fitted model reproduce the corpus it was fitted to?

Rules (``docs/tuning.md`` §3a):
    * A posterior predictive check: simulate a replicated corpus from the fitted model under
      each history's recorded policy (``replicate``), compute the same statistics on both,
      and compare their distributions.
    * Each check is a distribution over a few bins: attempts per item, refused calls per
      outage, outage lengths, charged replans per goal, items per proposal, and the first
      attempt of items proposed after another item failed (a planner that repeats failing
      items lowers it).
    * The distance is the total variation between the two distributions; the p-value a
      chi-square test of homogeneity (Wilson-Hilferty). A check is **poor** when
      p < ``POOR_P`` and the distance is at least ``POOR_DISTANCE``: a difference both
      real and large enough to move an estimate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, cast

from governor.analysis.model import Model
from governor.analysis.simulate import simulate_goal
from governor.core.events import Event, PlanFailed, PlanProposed
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.work_events import AttemptFinished, WorkCreated

POOR_P: Final = 0.001
POOR_DISTANCE: Final = 0.03

ATTEMPT_BINS: Final = ("1", "2", "3", "4+")
STREAK_BINS: Final = ("1", "2", "3-4", "5+")
LENGTH_BINS: Final = ("<2m", "2-10m", "10-30m", "30-90m", "90m+")
REPLAN_BINS: Final = ("0", "1", "2", "3", "4+")
FIRST_BINS: Final = ("succeeded", "failed")
SIZE_BINS: Final = ("1", "2", "3", "4", "5-6", "7+")

CHECKS: Final = {
    "attempts_per_item": "finished attempts per work item",
    "outage_streaks": "refused calls per outage (until a call got through or the goal stopped)",
    "outage_lengths": "outage length, first refusal to the next call that got through",
    "replans_per_goal": "charged replans per goal",
    "items_per_plan": "work items per applied proposal",
    "after_failure": "first attempt of items proposed after another item failed "
    "(a planner repeating failing items lowers it)",
}


@dataclass(slots=True)
class Stats:
    """Counts per bin of every check, over some histories."""

    bins: dict[str, Counter[str]] = field(default_factory=lambda: {k: Counter() for k in CHECKS})

    def add(self, events: Iterable[Event]) -> None:
        _read(self, events)

    def merge(self, other: Stats) -> None:
        for name, counts in other.bins.items():
            self.bins[name].update(counts)


def _bin(value: float, edges: Sequence[float], names: Sequence[str]) -> str:
    for edge, name in zip(edges, names, strict=False):
        if value < edge:
            return name
    return names[-1]


class _Reader:
    """One history's contribution to every check."""

    def __init__(self, bins: dict[str, Counter[str]]) -> None:
        self.b = bins
        self.attempts: Counter[str] = Counter()
        self.failed: set[str] = set()
        self.after: set[str] = set()
        self.first: dict[str, bool] = {}
        self.streak, self.since = 0, cast("datetime | None", None)

    def refused(self, at: datetime) -> None:
        self.streak, self.since = self.streak + 1, self.since or at

    def through(self, at: datetime) -> None:
        self.streak, self.since = _through(self.b, self.streak, self.since, at)

    def finished(self, event: AttemptFinished) -> None:
        self.through(event.at)
        if event.failure_class is None or event.outcome == "succeeded":
            self.attempts[event.work_id] += 1
            self.first.setdefault(event.work_id, event.outcome == "succeeded")
            if event.outcome == "succeeded":
                self.failed.discard(event.work_id)
            else:
                self.failed.add(event.work_id)

    def one(self, event: Event) -> None:
        match event:
            case WorkCreated() if self.failed:
                self.after.add(event.work_id)
            case PlanFailed() if event.failure_class == "upstream":
                self.refused(event.at)
            case PlanProposed():
                self.through(event.at)
                if event.work:
                    size = _bin(len(event.work), (2, 3, 4, 5, 7), SIZE_BINS)
                    self.b["items_per_plan"][size] += 1
            case PlanFailed():
                self.through(event.at)
            case AttemptFinished() if (
                event.failure_class == "upstream" and event.outcome == "failed"
            ):
                self.refused(event.at)
            case AttemptFinished():
                self.finished(event)
            case _:
                pass

    def close(self, events: list[Event]) -> None:
        b = self.b
        if self.streak:
            b["outage_streaks"][_bin(self.streak, (2, 3, 5), STREAK_BINS)] += 1
        for n in self.attempts.values():
            b["attempts_per_item"][ATTEMPT_BINS[min(n, 4) - 1]] += 1
        for work_id in self.after & set(self.first):
            b["after_failure"][FIRST_BINS[0] if self.first[work_id] else FIRST_BINS[1]] += 1
        if events:
            replans = project(events).charged_replans
            b["replans_per_goal"][REPLAN_BINS[min(int(replans), 4)]] += 1


def _read(stats: Stats, events: Iterable[Event]) -> None:
    kept = list(events)
    reader = _Reader(stats.bins)
    for event in kept:
        reader.one(event)
    reader.close(kept)


def _through(
    b: dict[str, Counter[str]], streak: int, since: datetime | None, at: datetime
) -> tuple[int, None]:
    if streak and since is not None:
        b["outage_streaks"][_bin(streak, (2, 3, 5), STREAK_BINS)] += 1
        minutes = (at - since).total_seconds() / 60
        b["outage_lengths"][_bin(minutes, (2, 10, 30, 90), LENGTH_BINS)] += 1
    return 0, None


@dataclass(frozen=True, slots=True)
class Check:
    """One model check: a statistic's distribution in the corpus and in the replicate."""

    name: str
    statistic: str
    observed: dict[str, float]
    """Share of each bin in the corpus."""
    replicated: dict[str, float]
    """Share of each bin in corpora simulated from the fitted model."""
    count: int
    """How many units (items, outages, goals) the corpus showed."""
    distance: float
    """Total variation between the two distributions (0: alike, 1: disjoint)."""
    p_value: float
    poor: bool


def _shares(counts: Counter[str], names: Sequence[str]) -> dict[str, float]:
    total = sum(counts.values())
    return {n: counts[n] / total if total else 0.0 for n in names}


def chi2_p(table: Sequence[tuple[int, int]]) -> float:
    """The p-value of a chi-square test of homogeneity of two rows of counts (by bin)."""
    rows = [sum(a for a, _ in table), sum(b for _, b in table)]
    used = [(a, b) for a, b in table if a + b > 0]
    if len(used) < 2 or 0 in rows:
        return 1.0
    total = rows[0] + rows[1]
    stat = 0.0
    for a, b in used:
        for seen, row in ((a, rows[0]), (b, rows[1])):
            expected = row * (a + b) / total
            stat += (seen - expected) ** 2 / expected
    k = len(used) - 1
    z = ((stat / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return 0.5 * math.erfc(z / math.sqrt(2))


BINS: Final = {
    "attempts_per_item": ATTEMPT_BINS,
    "outage_streaks": STREAK_BINS,
    "outage_lengths": LENGTH_BINS,
    "replans_per_goal": REPLAN_BINS,
    "items_per_plan": SIZE_BINS,
    "after_failure": FIRST_BINS,
}


def compare(observed: Stats, replicated: Stats) -> list[Check]:
    """Every check of a corpus against its replicate."""
    out = []
    for name, statistic in CHECKS.items():
        seen, again, names = observed.bins[name], replicated.bins[name], BINS[name]
        a, b = _shares(seen, names), _shares(again, names)
        distance = 0.5 * sum(abs(a[n] - b[n]) for n in names)
        p = chi2_p([(seen[n], again[n]) for n in names])
        poor = p < POOR_P and distance >= POOR_DISTANCE and sum(seen.values()) > 0
        out.append(Check(name, statistic, a, b, sum(seen.values()), distance, p, poor))
    return out


REPLICATED_GOALS: Final = 2000
"""How many goals the replicated corpus holds (at least as many as the corpus, up to this)."""


def replicate(model: Model, policies: Sequence[Policy], *, seed: int) -> Stats:
    """The statistics of goals simulated from ``model``, the i-th under ``policies[i % n]``."""
    stats = Stats()
    goals = max(len(policies), 1)
    for goal in range(min(REPLICATED_GOALS, max(goals, 500))):
        stats.add(simulate_goal(model, policies[goal % len(policies)], seed, goal))
    return stats
