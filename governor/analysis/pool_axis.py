"""Tune's pool axis: a corpus's goals replayed through one shared pool per limit, in their
recorded start order (SPEC §13.6; ``docs/pools.md``, "What a pool would have done").

Rules:
    * Each goal's calls (planner and worker runs) are read off its history as recorded:
      when each started and ended, what it spent (``call_figure``: the one definition of
      charged; cost counts for every call) and what it would have reserved at its start
      (``expected_figure``, the live driver's rule, on the goal as folded up to then).
    * The goals run through one ``SharedPool`` in time order. A call that does not fit
      parks its goal until the pool renews; the rest of the goal moves later by the time
      it waited. A pool that never renews (``total``), or a call larger than the whole
      limit, parks the goal for good: it ends there, unfinished, having spent what it had.
    * Everything else is the record: the policies, the outcomes, the calls. So a row says
      what the recorded goals would have done under the pool; the candidate policies'
      rows are not re-estimated under it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

from governor.analysis.shared_pool import Parked, Period, SharedPool
from governor.core.events import Event, GoalCreated, PlanFailed, PlanProposed
from governor.core.fold import evolve, project
from governor.core.pools import Figure, PoolLimits, Refusal, call_figure, period_end
from governor.core.rules.decide import decide
from governor.core.view import GoalView
from governor.core.work_events import AttemptFinished
from governor.drive.pools import expected_figure

POOL: str = "tune"
"""The replayed pool's name (it lives only in the replay)."""


@dataclass(frozen=True, slots=True)
class Call:
    start: datetime
    end: datetime
    ask: Figure
    """What the live driver would have reserved at its start."""
    figure: Figure
    """What it spent."""


@dataclass(frozen=True, slots=True)
class Goal:
    """What the replay needs of one history."""

    goal_id: str
    created: datetime
    calls: tuple[Call, ...]
    end: datetime
    succeeded: bool


def _profile(view: GoalView, event: Event) -> str:
    created = view.created
    assert created is not None
    if event.type in ("plan.requested", "plan.continued"):
        return created.planner
    item = view.work.get(getattr(event, "work_id", ""))
    return (item.spec.profile if item is not None else None) or created.worker


def _reserve_usd(view: GoalView, profile: str) -> float | None:
    created = view.created
    given = created.profiles.get(profile) if created is not None else None
    return given.reserve_usd if given is not None else None


def goal_of(events: Sequence[Event]) -> Goal:
    """The calls of one recorded history, each with what it would have reserved."""
    created = events[0]
    assert isinstance(created, GoalCreated)
    view = GoalView()
    open_: dict[str, tuple[datetime, Figure]] = {}
    calls: list[Call] = []
    for event in events:
        key = getattr(event, "plan_id", None) or getattr(event, "run_id", None)
        if event.type in (
            "plan.requested",
            "plan.continued",
            "attempt.started",
            "attempt.continued",
        ):
            assert key is not None
            profile = _profile(view, event)
            open_[key] = (event.at, expected_figure(view, profile, _reserve_usd(view, profile)))
        elif isinstance(event, PlanProposed | PlanFailed | AttemptFinished) and key in open_:
            assert key is not None
            start, ask = open_.pop(key)
            calls.append(Call(start, event.at, ask, call_figure(event, start)))
        evolve(view, event)
    final = project(list(events))
    last = events[-1].at
    status = decide(final, final.last_at or last, with_ledger=False).status
    return Goal(created.goal_id, created.at, tuple(calls), last, status == "succeeded")


@dataclass(frozen=True, slots=True)
class PoolRow:
    """The corpus under one pool limit."""

    limits: PoolLimits
    goals: int
    parked: tuple[Parked, ...]
    """Each parked goal's first park, in time order."""
    parks: int
    """Calls that did not fit (a goal may park more than once)."""
    stopped: tuple[str, ...]
    """Goals parked for good (a ``total`` pool, or a call larger than the limit)."""
    parked_s: float
    """Goal-time spent parked, summed over goals (seconds; parked for good: not counted)."""
    finished_in_period: int
    """Goals that ended before the period they started in renewed (``total``: at all)."""
    succeeded: int
    succeeded_in_period: int
    cost_usd: float
    """What the goals spent under the pool (every call made, charged or not)."""
    periods: tuple[Period, ...]


@dataclass(frozen=True, slots=True)
class PoolAxis:
    """The recorded corpus's figures and one row per pool limit."""

    goals: int
    succeeded: int
    cost_usd: float
    rows: tuple[PoolRow, ...]


def _order(goals: Sequence[Goal]) -> list[int]:
    """The goals' recorded start order (first call, else creation; then the id)."""
    return sorted(
        range(len(goals)),
        key=lambda i: (
            goals[i].calls[0].start if goals[i].calls else goals[i].created,
            goals[i].goal_id,
        ),
    )


def _never_fits(refused: Refusal) -> bool:
    """A refusal no renewal cures: none comes, or the call asks more than a whole period."""
    return refused.renews_at is None or (refused.spent <= 0 and refused.reserved <= 0)


def replay(goals: Sequence[Goal], limits: PoolLimits, zone: tzinfo) -> PoolRow:
    """The goals through one shared pool of ``limits`` (the module's rules)."""
    order = _order(goals)
    first = min((g.created for g in goals), default=datetime(1970, 1, 1, tzinfo=UTC))
    pool = SharedPool.opened(POOL, limits, zone, first)
    shift = [timedelta(0)] * len(goals)
    next_call = [0] * len(goals)
    stopped: list[str] = []
    parked_s = 0.0
    heap = [(goals[i].calls[0].start, rank, i) for rank, i in enumerate(order) if goals[i].calls]
    rank_of = {i: rank for rank, i in enumerate(order)}
    heapq.heapify(heap)
    while heap:
        now, rank, i = heapq.heappop(heap)
        goal, call = goals[i], goals[i].calls[next_call[i]]
        got = pool.reserve(goal.goal_id, call.ask, now)
        if isinstance(got, Refusal):
            if _never_fits(got):
                stopped.append(goal.goal_id)
                continue
            assert got.renews_at is not None
            wait = got.renews_at - now
            shift[i] += wait
            parked_s += wait.total_seconds()
            heapq.heappush(heap, (got.renews_at, rank, i))
            continue
        pool.ends(got, goal.goal_id, call.figure, call.end + shift[i])
        next_call[i] += 1
        if next_call[i] < len(goal.calls):
            heapq.heappush(heap, (goal.calls[next_call[i]].start + shift[i], rank_of[i], i))
    periods = pool.close()
    return _row(
        goals, limits=limits, zone=zone, pool=pool, shift=shift, stopped=stopped,
        parked_s=parked_s, periods=tuple(periods),
    )  # fmt: skip


def _row(
    goals: Sequence[Goal],
    *,
    limits: PoolLimits,
    zone: tzinfo,
    pool: SharedPool,
    shift: Sequence[timedelta],
    stopped: list[str],
    parked_s: float,
    periods: tuple[Period, ...],
) -> PoolRow:
    first: dict[str, Parked] = {}
    for park in pool.parks:
        first.setdefault(park.goal, park)
    gone = set(stopped)
    in_period = succeeded = succeeded_in = 0
    for goal, moved in zip(goals, shift, strict=True):
        if goal.goal_id in gone:
            continue
        start = goal.calls[0].start if goal.calls else goal.created
        renews = period_end(limits, zone, start)
        within = renews is None or goal.end + moved < renews
        in_period += within
        succeeded += goal.succeeded
        succeeded_in += goal.succeeded and within
    return PoolRow(
        limits,
        len(goals),
        tuple(first.values()),
        len(pool.parks),
        tuple(stopped),
        parked_s,
        in_period,
        succeeded,
        succeeded_in,
        math.fsum(p.spent["usd"] for p in periods),
        periods,
    )


def pool_axis(
    histories: Iterable[Sequence[Event]], limits: Sequence[PoolLimits], zone: tzinfo
) -> PoolAxis:
    """The corpus replayed under each of ``limits`` (tune's ``--pool-usd``/``--pool-attempts``)."""
    goals = [goal_of(events) for events in histories]
    cost = math.fsum(c.figure.usd for g in goals for c in g.calls)
    rows = tuple(replay(goals, one, zone) for one in limits)
    return PoolAxis(len(goals), sum(g.succeeded for g in goals), cost, rows)
