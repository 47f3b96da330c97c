"""Outages in a corpus: the refused calls it holds, and how many the fleet rule would have spared.

Rules (SPEC §11.10; ``tune`` reports it):
    * Every run refused by its upstream (``plan.failed`` or ``attempt.finished`` of class
      ``upstream``, charged or not) is placed on one time line across the corpus's
      histories, per upstream as far as a history can tell it: its planner's or its
      item's profile (harness, model and arguments).
    * An *outage* is a run of refusals no further apart than the longest back-off step
      of the policy recorded with the first of them (``upstream_backoff.max_s``).
    * Under the fleet rule one outage reaches the vendor with its first refusal and then
      one probe per back-off step of its span (the same steps, 30 s doubling to 900 s by
      default). The other refusals are *saved*. It is an estimate: the calls in flight
      when an outage begins (at most one per worker) are counted as one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from governor.core.events import Event, GoalCreated, PlanFailed
from governor.core.policy import UpstreamBackoff
from governor.core.work_events import AttemptFinished, WorkCreated


@dataclass(frozen=True, slots=True)
class Savings:
    """What the fleet rule would have spared a corpus."""

    outages: int
    refused: int
    """Refused runs in the corpus."""
    sent: int
    """Of those, what the fleet rule would still have sent (first refusals and probes)."""

    @property
    def saved(self) -> int:
        return self.refused - self.sent


def steps_within(backoff: UpstreamBackoff, span_s: float) -> int:
    """How many probes one outage of ``span_s`` seconds takes: one per back-off step."""
    steps, waited = 0, 0.0
    while True:
        waited += backoff.wait_s(steps + 1, None)
        if waited > span_s or backoff.wait_s(steps + 1, None) <= 0:
            return steps
        steps += 1


def _refusals(history: Iterable[Event]) -> list[tuple[str, datetime, UpstreamBackoff]]:
    created: GoalCreated | None = None
    profiles: dict[str, str] = {}
    found = []
    for event in history:
        if isinstance(event, GoalCreated):
            created = event
        elif isinstance(event, WorkCreated):
            profiles[event.work_id] = event.profile
        elif isinstance(event, PlanFailed | AttemptFinished) and event.failure_class == "upstream":
            assert created is not None
            name = (
                profiles.get(event.work_id, created.worker)
                if isinstance(event, AttemptFinished)
                else created.planner
            )
            p = created.profiles[name]
            found.append(
                (f"{p.harness} {p.model} {p.args}", event.at, created.policy.upstream_backoff)
            )
    return found


def savings(histories: Iterable[Iterable[Event]]) -> Savings:
    """The outages of a corpus, and what the fleet rule would have sent of their refusals."""
    by_upstream: dict[str, list[tuple[datetime, UpstreamBackoff]]] = {}
    for history in histories:
        for upstream, at, backoff in _refusals(history):
            by_upstream.setdefault(upstream, []).append((at, backoff))
    outages: list[tuple[datetime, datetime, UpstreamBackoff]] = []
    refused = 0
    for times in by_upstream.values():
        times.sort(key=lambda t: t[0])
        refused += len(times)
        start, last, backoff = times[0][0], times[0][0], times[0][1]
        for at, policy in times[1:]:
            if (at - last).total_seconds() > backoff.max_s:
                outages.append((start, last, backoff))
                start, backoff = at, policy
            last = at
        outages.append((start, last, backoff))
    sent = sum(1 + steps_within(b, (end - start).total_seconds()) for start, end, b in outages)
    return Savings(len(outages), refused, min(sent, refused))
