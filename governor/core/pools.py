"""Pools: budgets shared by many goals — their events, their fold, whether a call fits
(SPEC §13.6; limits, periods and a call's figure are ``governor.core.pool_limits``').

Rules:
    * A pool is a named budget in the store (``governor.core.pool_limits.PoolLimits``).
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
from datetime import datetime, tzinfo
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from governor.core.event_fields import Id, Name, PoolName, Reason, UtcTime
from governor.core.numbers import Position
from governor.core.pool_limits import (
    DEFAULT_RESERVE_USD,
    UNITS,
    Figure,
    Period,
    PoolLimits,
    Unit,
    call_figure,
    fold_goal_spend,
    period_end,
    period_start,
)
from governor.core.text import stamp

__all__ = [
    "DEFAULT_RESERVE_USD",
    "UNITS",
    "Figure",
    "Period",
    "PoolDeleted",
    "PoolEvent",
    "PoolGranted",
    "PoolLimits",
    "PoolReleased",
    "PoolRenewed",
    "PoolReserved",
    "PoolSet",
    "PoolSettled",
    "PoolState",
    "Refusal",
    "Unit",
    "asked_attempts",
    "asked_usd",
    "call_figure",
    "evolve_pool",
    "fold_goal_spend",
    "needs_renewal",
    "own_request",
    "period_end",
    "period_start",
    "pool_request",
    "project_pool",
    "refusal",
    "spent_now",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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


def pool_request(
    refused: Refusal, ask: Figure, need: Figure | None = None
) -> tuple[float | None, int | None]:
    """What a goal asks of a pool that refused its call (SPEC §13.7), as (usd, attempts):
    in the pool's spent unit, what the goal needs to finish (``need``: the forecast's,
    when there is data), else one more of it — the call's expected cost, or one attempt."""
    if refused.unit == "usd":
        return asked_usd(ask.usd, need), None
    return None, asked_attempts(need)


def own_request(
    ledger: str, one_call_usd: float, need: Figure | None = None
) -> tuple[float | None, int | None]:
    """What a goal asks when its own ``ledger`` (``GRANTABLE``) stopped it (SPEC §13.7), as
    (usd, attempts): for ``cost`` what it needs to finish, else one more call's expected
    cost; for ``total_attempts`` the attempts it needs, else one; for ``replans`` one."""
    if ledger == "cost":
        return asked_usd(one_call_usd, need), None
    return None, asked_attempts(need) if ledger == "total_attempts" else 1


def asked_usd(one_more: float, need: Figure | None) -> float:
    """The cost a request asks: the need to finish when there is one, else ``one_more``."""
    return need.usd if need is not None and need.usd > 0 else one_more


def asked_attempts(need: Figure | None) -> int:
    """The attempts a request asks: the need to finish when there is one, else one."""
    return need.attempts if need is not None and need.attempts >= 1 else 1
