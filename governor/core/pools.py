"""Pools: budgets shared by many goals — their limits, periods, events and fold (SPEC §13.6).

Rules:
    * A pool is a named budget in the store: limits on cost (USD), charged attempts
      (planner and worker calls alike) and agent run time, each over one period — a
      calendar ``day``, ``week`` (from Monday) or ``month`` in the pool's IANA time zone,
      ``total`` (never renews), or ``every`` N seconds (windows from the Unix epoch; for
      tests and short quotas). The time zone is an argument here (a ``tzinfo`` the shell
      builds): the core reads no time-zone database.
    * A pool's history is its own append-only stream of pool events (``pool.set``,
      ``pool.deleted``, ``pool.renewed``, ``pool.reserved``, ``pool.settled``,
      ``pool.released``, ``pool.granted``); its state is ``project_pool`` of them.
    * A call's figure is read off the goal's own recorded run by the one definition of
      charged (``call_figure``): its reported cost always, one attempt unless the run
      failed uncharged, its run time when its end is recorded.
    * Before a call, the expected figure is *reserved*; ``refusal`` says whether it fits:
      spent in the current period + reserved in flight + the ask must not pass the limit
      plus the grants still open. Spend moves to a new period at the first reservation
      after the boundary (``pool.renewed``); a call settled after a renewal counts in the
      new period. So with N drivers the spend can pass a limit only by what was reserved
      in flight and then cost more than its reservation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from governor.core.event_fields import Id, Name, PoolName, Reason, UtcTime
from governor.core.events import PlanFailed, PlanProposed
from governor.core.evidence import is_uncharged
from governor.core.numbers import Count, Position, RuntimeS, Usd
from governor.core.policy import Grants
from governor.core.text import stamp
from governor.core.work_events import AttemptFinished

Period = Literal["day", "week", "month", "total", "every"]
Unit = Literal["usd", "attempts", "run_time_s"]
UNITS: Final[tuple[Unit, ...]] = ("usd", "attempts", "run_time_s")


DEFAULT_RESERVE_USD: Final = 0.05
"""What a call reserves when its profile names no ``reserve_usd`` and has no recorded call
with a cost: five cents, a small coding-agent call (documented in docs/pools.md)."""

_MIN_EVERY_S: Final = 1.0


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PoolLimits(_Frozen):
    """A pool's limits, its period and its grant rule."""

    usd: Usd | None = None
    attempts: Count | None = None
    run_time_s: RuntimeS | None = None
    period: Period = "total"
    every_s: RuntimeS | None = None
    """The length of an ``every`` period, in seconds (at least 1)."""
    tz: Name = "UTC"
    """The IANA time zone of calendar periods."""
    grants: Grants | None = None

    @model_validator(mode="after")
    def _shape(self) -> PoolLimits:
        if self.usd is None and self.attempts is None and self.run_time_s is None:
            raise ValueError("a pool needs at least one limit: --usd, --attempts or --run-time")
        if (self.period == "every") != (self.every_s is not None):
            raise ValueError("every_s is set exactly when the period is a duration")
        if self.every_s is not None and self.every_s < _MIN_EVERY_S:
            raise ValueError(f"a period lasts at least {_MIN_EVERY_S:g}s")
        return self

    def limit(self, unit: Unit) -> float | None:
        return {"usd": self.usd, "attempts": self.attempts, "run_time_s": self.run_time_s}[unit]


class Figure(_Frozen):
    """What one call spends (or is expected to) of each unit."""

    usd: Usd = 0.0
    attempts: Count = 0
    run_time_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0

    def of(self, unit: Unit) -> float:
        return float(getattr(self, unit))


class PoolEventBase(_Frozen):
    pool: PoolName
    seq: Position
    at: UtcTime
    actor: Name = "governor"
    reason: Reason | None = None


class PoolSet(PoolEventBase):
    type: Literal["pool.set"] = "pool.set"
    limits: PoolLimits


class PoolDeleted(PoolEventBase):
    type: Literal["pool.deleted"] = "pool.deleted"


class PoolRenewed(PoolEventBase):
    type: Literal["pool.renewed"] = "pool.renewed"
    period_start: UtcTime


class PoolReserved(PoolEventBase):
    type: Literal["pool.reserved"] = "pool.reserved"
    call: Id
    goal_id: Id
    figure: Figure


class PoolSettled(PoolEventBase):
    type: Literal["pool.settled"] = "pool.settled"
    call: Id
    goal_id: Id
    figure: Figure


class PoolReleased(PoolEventBase):
    type: Literal["pool.released"] = "pool.released"
    call: Id
    goal_id: Id


class PoolGranted(PoolEventBase):
    type: Literal["pool.granted"] = "pool.granted"
    figure: Figure
    expires_at: UtcTime | None = None
    goal_id: Id | None = None
    rule: Name | None = None
    """``grants.auto_usd``/``grants.auto_attempts`` for a grant of the pool's own rule."""


PoolEvent = Annotated[
    PoolSet | PoolDeleted | PoolRenewed | PoolReserved | PoolSettled | PoolReleased | PoolGranted,
    Field(discriminator="type"),
]


@dataclass(frozen=True, slots=True)
class Grant:
    figure: Figure
    at: datetime
    expires_at: datetime | None


@dataclass(slots=True)
class PoolState:
    """A pool folded from its events."""

    name: str = ""
    limits: PoolLimits | None = None
    deleted: bool = False
    seq: int = 0
    period_start: datetime | None = None
    spent: dict[str, float] = field(default_factory=lambda: dict.fromkeys(UNITS, 0.0))
    in_flight: dict[str, Figure] = field(default_factory=dict)
    """Call id -> its reservation, until it is settled or released."""
    goals_in_flight: dict[str, str] = field(default_factory=dict)
    """Call id -> the goal that reserved it."""
    grants: list[Grant] = field(default_factory=list)
    grants_by: dict[str, int] = field(default_factory=dict)
    """Grants made on the pool: ``policy`` (its rule) or ``person``, each a count."""
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def reserved(self, unit: Unit) -> float:
        return math.fsum(f.of(unit) for f in self.in_flight.values())

    def granted(self, unit: Unit, now: datetime) -> float:
        """What the grants still open at ``now`` add to the limit of ``unit``."""
        return math.fsum(
            g.figure.of(unit)
            for g in self.grants
            if (g.expires_at is None or now < g.expires_at)
            and (self.period_start is None or g.at >= self.period_start)
        )


def evolve_pool(state: PoolState, event: PoolEvent) -> PoolState:
    """Apply one pool event to the state, in place."""
    state.name, state.seq, state.updated_at = event.pool, event.seq, event.at
    match event:
        case PoolSet():
            state.created_at = state.created_at or event.at
            state.limits, state.deleted = event.limits, False
        case PoolDeleted():
            state.deleted = True
        case PoolRenewed():
            state.period_start = event.period_start
            state.spent = dict.fromkeys(UNITS, 0.0)
        case PoolReserved():
            state.in_flight[event.call] = event.figure
            state.goals_in_flight[event.call] = event.goal_id
        case PoolSettled():
            state.in_flight.pop(event.call, None)
            state.goals_in_flight.pop(event.call, None)
            for unit in UNITS:
                state.spent[unit] += event.figure.of(unit)
        case PoolReleased():
            state.in_flight.pop(event.call, None)
            state.goals_in_flight.pop(event.call, None)
        case PoolGranted():
            state.grants.append(Grant(event.figure, event.at, event.expires_at))
            by = "policy" if event.actor == "policy" else "person"
            state.grants_by[by] = state.grants_by.get(by, 0) + 1
    return state


def project_pool(events: list[PoolEvent] | tuple[PoolEvent, ...]) -> PoolState:
    state = PoolState()
    for event in events:
        evolve_pool(state, event)
    return state


# --- periods ------------------------------------------------------------------------------


def period_start(limits: PoolLimits, zone: tzinfo, now: datetime) -> datetime | None:
    """The start (UTC) of the period holding ``now``; None for ``total``.

    Calendar periods start at local midnight in ``zone`` (DST-correct: the local wall
    time is turned back into UTC with the zone's offset on that date).
    """
    if limits.period == "total":
        return None
    if limits.period == "every":
        assert limits.every_s is not None
        step = limits.every_s
        epoch = datetime(1970, 1, 1, tzinfo=UTC)
        n = math.floor((now - epoch).total_seconds() / step)
        return epoch + timedelta(seconds=n * step)
    local = now.astimezone(zone)
    day = local.date()
    if limits.period == "week":
        day -= timedelta(days=day.weekday())
    elif limits.period == "month":
        day = day.replace(day=1)
    return _midnight(day.year, day.month, day.day, zone)


def period_end(limits: PoolLimits, zone: tzinfo, now: datetime) -> datetime | None:
    """When the period holding ``now`` renews (UTC); None for ``total``."""
    start = period_start(limits, zone, now)
    if start is None:
        return None
    if limits.period == "every":
        assert limits.every_s is not None
        return start + timedelta(seconds=limits.every_s)
    local = start.astimezone(zone).date()
    if limits.period == "day":
        nxt = local + timedelta(days=1)
    elif limits.period == "week":
        nxt = local + timedelta(days=7)
    else:
        nxt = (local.replace(day=28) + timedelta(days=4)).replace(day=1)
    return _midnight(nxt.year, nxt.month, nxt.day, zone)


def _midnight(year: int, month: int, day: int, zone: tzinfo) -> datetime:
    return datetime(year, month, day, tzinfo=zone).astimezone(UTC)


def spent_now(state: PoolState, zone: tzinfo, now: datetime) -> dict[str, float]:
    """What the pool has spent in the period holding ``now`` (nothing yet when the
    recorded period has ended and no call has renewed it)."""
    renewed = needs_renewal(state, zone, now) is not None
    return {unit: 0.0 if renewed else state.spent[unit] for unit in UNITS}


def needs_renewal(state: PoolState, zone: tzinfo, now: datetime) -> datetime | None:
    """The new period's start when ``now`` lies past the pool's recorded period; else None."""
    if state.limits is None:
        return None
    start = period_start(state.limits, zone, now)
    if start is None or (state.period_start is not None and start <= state.period_start):
        return None
    return start


# --- fitting --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a reservation does not fit: the unit spent, and the numbers behind it."""

    pool: str
    unit: Unit
    spent: float
    reserved: float
    limit: float
    asked: float
    period: Period
    renews_at: datetime | None

    def sentence(self) -> str:
        renews = f"; it renews at {stamp(self.renews_at)}" if self.renews_at else ""
        span = {"total": "in total", "every": "this period"}.get(self.period, f"this {self.period}")
        what = {"usd": "$", "attempts": "", "run_time_s": ""}[self.unit]
        unit = {"usd": "", "attempts": " attempts", "run_time_s": "s of run time"}[self.unit]
        return (
            f"pool '{self.pool}' is spent {span}: "
            f"{what}{self.spent:g}{unit} spent and {what}{self.reserved:g}{unit} reserved "
            f"of {what}{self.limit:g}{unit}{renews}"
        )


def refusal(state: PoolState, ask: Figure, zone: tzinfo, now: datetime) -> Refusal | None:
    """None when ``ask`` fits the pool at ``now``, else why not (first unit that is spent).

    A state whose period has ended counts as renewed (nothing spent yet); the driver
    records that renewal in the same transaction as the reservation.
    """
    limits = state.limits
    assert limits is not None
    renewed = needs_renewal(state, zone, now) is not None
    for unit in UNITS:
        limit = limits.limit(unit)
        if limit is None:
            continue
        spent = 0.0 if renewed else state.spent[unit]
        room = limit + state.granted(unit, now) - spent - state.reserved(unit)
        asked = ask.of(unit)
        if room <= 1e-12 or asked > room + 1e-12:
            return Refusal(
                state.name, unit, spent, state.reserved(unit), limit + state.granted(unit, now),
                asked, limits.period, period_end(limits, zone, now),
            )  # fmt: skip
    return None


def call_figure(
    finish: PlanProposed | PlanFailed | AttemptFinished, started_at: datetime | None
) -> Figure:
    """What a finished call spent, read off the goal's own event by the one definition of
    charged (SPEC §6, §12.5): its reported cost always, one attempt unless it failed
    uncharged, its run time from ``started_at`` (its run's start) when known."""
    if isinstance(finish, PlanProposed):
        charged = True
    else:
        outcome = finish.outcome if isinstance(finish, AttemptFinished) else "failed"
        charged = not is_uncharged(outcome, finish.failure_class, finish.evidence)
    run_s = max((finish.at - started_at).total_seconds(), 0.0) if started_at else 0.0
    return Figure(usd=finish.cost_usd or 0.0, attempts=int(charged), run_time_s=run_s)


def fold_goal_spend(
    pool: str, goals: dict[str, tuple[tuple[str, ...], list[Figure]]]
) -> dict[str, float]:
    """The pool's spend as the fold of its goals' calls: only goals that name ``pool``
    (goal id -> (its pools, the figures of its settled calls)) count."""
    spent: dict[str, float] = dict.fromkeys(UNITS, 0.0)
    for pools, figures in goals.values():
        if pool in pools:
            for figure in figures:
                for unit in UNITS:
                    spent[unit] += figure.of(unit)
    return spent
