"""What the pool pages show, read from the store (SPEC §13.6, §13.7): every pool's spend in
its period, and one pool's goals, open requests for more budget and recent history.

Rules:
    * Read only, and the time is an argument (``now``), as in ``governor.ui.data``.
    * A pool's figures are ``governor pool show --json``'s (``render.pools.pool_record``).
    * A goal's request is open on the pool while it holds the goal: the goal's open
      ``budget.requested`` names the pool and its decision now is the request's
      (``rules.budget``' ``PARKS`` or ``ASKS``); its commands are the grant blocker's
      (``governor.analysis.unblock``), each one the core would take now.
    * What each goal spent in the pool's current period is the sum of the pool's own
      ``pool.settled`` events of that goal since the period began.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from governor.analysis.unblock import unblocking
from governor.core.fold import project
from governor.core.pools import UNITS, PoolEvent, PoolSettled, PoolState
from governor.core.rules.budget import ASKS, PARKS
from governor.core.rules.decide import decide
from governor.core.view import BudgetRequest
from governor.drive.pools import goals_naming, pool_or_error, zone
from governor.render.pools import pool_record
from governor.store.base import EventStore

RECENT: Final = 30
"""How many of the pool's latest events its page lists."""


@dataclass(frozen=True, slots=True)
class PoolGoal:
    """One goal that names the pool."""

    goal_id: str
    title: str
    status: str
    spent: dict[str, float]
    """What its calls spent in the pool's current period, by unit."""
    request: BudgetRequest | None = None
    """Its request for more budget on this pool, while that request holds it."""
    person: bool = False
    """Whether only a person's grant moves it (else its pool renews by itself)."""
    commands: tuple[str, ...] = ()
    """The grant and decline commands, each one the core would take now."""


@dataclass(frozen=True, slots=True)
class PoolPage:
    """One pool's page: its figures, its goals, its latest events."""

    name: str
    record: dict[str, Any]
    goals: list[PoolGoal]
    recent: list[PoolEvent]

    @property
    def requests(self) -> list[PoolGoal]:
        """The goals whose request on this pool is open."""
        return [g for g in self.goals if g.request is not None]


def pool_list(store: EventStore, now: datetime) -> list[dict[str, Any]]:
    """Every pool not deleted, by name, as ``pool list --json`` prints it."""
    states = [s for s in store.pool_states() if not s.deleted and s.limits is not None]
    return [_record(s, now) for s in sorted(states, key=lambda s: s.name)]


def pool_page(
    store: EventStore, name: str, now: datetime, *, store_arg: str | None = None
) -> PoolPage:
    """The page of one pool.

    Raises:
        NotFoundError: no pool of that name (or it was deleted).
        InputError: a name that cannot be a pool's.
    """
    state = pool_or_error(store, name)
    ids = goals_naming(store, name)
    record = _record(state, now, ids)
    events = store.pool_events(name)
    start = record["period"]["start"]
    since = datetime.fromisoformat(start) if start else None
    spent = _spent_by_goal(events, since)
    summaries = {s.goal_id: s for s in store.goals()}
    found = []
    for goal_id in ids:
        summary = summaries.get(goal_id)
        mine = spent.get(goal_id) or dict.fromkeys(UNITS, 0.0)
        if summary is not None and summary.status not in ("succeeded", "cancelled"):
            found.append(_goal(store, name, goal_id=goal_id, now=now, store_arg=store_arg,
                               spent=mine))  # fmt: skip
        else:
            title, status = (summary.title, summary.status) if summary else ("", "unknown")
            found.append(PoolGoal(goal_id, title, status, mine))
    found.sort(key=lambda g: (g.request is None, not g.person, g.goal_id))
    return PoolPage(name, record, found, list(reversed(events[-RECENT:])))


def _record(state: PoolState, now: datetime, goals: list[str] | None = None) -> dict[str, Any]:
    assert state.limits is not None
    return pool_record(state, zone(state.limits.tz), now, goals)


def _spent_by_goal(events: list[PoolEvent], since: datetime | None) -> dict[str, dict[str, float]]:
    """Each goal's settled spend on the pool since ``since`` (the period's start)."""
    parts: dict[str, dict[str, list[float]]] = {}
    for event in events:
        if isinstance(event, PoolSettled) and (since is None or event.at >= since):
            mine = parts.setdefault(event.goal_id, {u: [] for u in UNITS})
            for unit in UNITS:
                mine[unit].append(event.figure.of(unit))
    return {g: {u: math.fsum(v) for u, v in by.items()} for g, by in parts.items()}


def _goal(
    store: EventStore,
    pool: str,
    *,
    goal_id: str,
    now: datetime,
    store_arg: str | None,
    spent: dict[str, float],
) -> PoolGoal:
    """A goal that has not ended: its decision now, and its request if open on the pool."""
    view = project(list(store.load(goal_id)))
    decision = decide(view, now)
    title = view.created.title if view.created else ""
    request = view.budget_request
    if request is None or request.budget != f"pool:{pool}" or decision.rule not in (ASKS, PARKS):
        return PoolGoal(goal_id, title, decision.status, spent)
    grant = next(u for u in unblocking(view, decision, now, store_arg) if u.blocker.kind == "grant")
    return PoolGoal(
        goal_id, title, decision.status, spent, request, decision.rule == ASKS, grant.commands
    )
