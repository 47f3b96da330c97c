"""Following a goal that another driver runs (``run --watch``, ``status --watch``).

Rules:
    * Read-only: the store is polled every ``POLL_S`` for the events appended since the
      last look, which are folded into the view; nothing is written and no lease taken,
      so a follower never disturbs whoever drives the goal (``governor serve``, a
      LangGraph server, another ``governor run``).
    * It follows until the goal stops: succeeded, cancelled, blocked, budget exhausted,
      or awaiting a person's review. A goal that waits (a cooldown, a park) or that nobody
      drives at the moment is followed on: a driver may come.
    * The calls in flight are the view's: the plans requested and the attempts started
      but not finished, each since its run started (its agent's output lives in the
      driver's process only).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from governor.clock import utc_now
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.fold import fold, project
from governor.core.rules.decide import decide
from governor.core.view import GoalView
from governor.drive.calls import RunningCall
from governor.drive.goals import exists
from governor.store.base import EventStore

POLL_S: Final = 1.0
"""How often a follower looks at the store."""
ENDS: Final = frozenset(
    {"succeeded", "cancelled", "blocked", "budget_exhausted", "awaiting_review"}
)
"""The statuses a followed goal stops at."""


@dataclass(slots=True)
class Look:
    """What one look at the store found."""

    view: GoalView
    decision: Decision
    events: list[Event] = field(default_factory=list)
    """Appended since the previous look."""
    holder: str | None = None
    """Who holds the goal's lease (None: nobody drives it now)."""

    @property
    def ended(self) -> bool:
        return self.decision.status in ENDS


def running_calls(view: GoalView, now: datetime) -> list[RunningCall]:
    """The planner and worker runs started and not yet finished, oldest first."""
    calls = [
        RunningCall(f"plan {p.plan_id}", None, _since(p.run_started_at, now), "")
        for p in view.plans.values()
        if p.status == "requested"
    ]
    calls += [
        RunningCall(w.work_id, w.attempt, _since(w.run_started_at, now), "")
        for w in view.work.values()
        if w.running
    ]
    return sorted(calls, key=lambda c: -c.elapsed_s)


def _since(started: datetime | None, now: datetime) -> float:
    return max((now - started).total_seconds(), 0.0) if started else 0.0


def follow(
    store: EventStore,
    goal_id: str,
    *,
    poll_s: float = POLL_S,
    clock: Callable[[], datetime] = utc_now,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Look]:
    """Look at the goal now, then every ``poll_s``, until it stops (the last look ends).

    The first look holds every event so far; each later one the events since.

    Raises:
        NotFoundError: when the goal is not in the store.
    """
    exists(store, goal_id)
    events = list(store.load(goal_id))
    view = project(events)
    while True:
        lease = store.current_lease(goal_id)
        now = clock()
        holder = lease.holder if lease is not None and not lease.is_expired(now) else None
        look = Look(view, decide(view, now, with_ledger=True), events, holder)
        yield look
        if look.ended:
            return
        sleep(poll_s)
        events = list(store.load(goal_id, after_seq=view.seq))
        fold(view, events)
