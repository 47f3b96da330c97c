"""A pool shared by goals that are simulated or replayed: its reservations in time order,
settled when their calls end, by the core's own pool rules (SPEC §13.6).

Rules:
    * Whether a call fits, when a period renews and what a grant adds are the core's
      (``governor.core.pools``: ``refusal``, ``needs_renewal``, ``evolve_pool``); this
      module only orders the pool's events in model time, as the store orders them live.
    * A call reserves its expected figure when it starts and is settled with its real
      figure when it ends: every call whose end is not after ``now`` is settled before a
      reservation at ``now`` is judged, so a pool's spend passes its limit only by what
      calls in flight cost beyond their reservations.
    * The pool's events are kept (``events``): a test folds them on its own.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any

from governor.core.pools import (
    UNITS,
    Figure,
    PoolEvent,
    PoolGranted,
    PoolLimits,
    PoolReleased,
    PoolRenewed,
    PoolReserved,
    PoolSet,
    PoolSettled,
    PoolState,
    Refusal,
    evolve_pool,
    needs_renewal,
    pool_request,
    refusal,
)
from governor.core.record_budget import auto_grant_rule


@dataclass(frozen=True, slots=True)
class Period:
    """What the pool spent in one period (``start`` None: a ``total`` pool's only one)."""

    start: datetime | None
    spent: dict[str, float]


@dataclass(frozen=True, slots=True)
class Parked:
    """A goal's call that did not fit: who, when, and the pool's numbers then."""

    goal: str
    at: datetime
    refusal: Refusal


@dataclass(frozen=True, slots=True)
class Grant:
    """A grant the pool's rule made: the amount, how long it lasts, the rule."""

    usd: float | None
    attempts: int | None
    expires_s: float | None
    rule: str


@dataclass(slots=True)
class SharedPool:
    """One pool, its events in model time, and its calls in flight."""

    name: str
    limits: PoolLimits
    zone: tzinfo
    state: PoolState = field(default_factory=PoolState)
    events: list[PoolEvent] = field(default_factory=list)
    periods: list[Period] = field(default_factory=list)
    parks: list[Parked] = field(default_factory=list)
    _pending: list[tuple[datetime, int, str, str, Figure]] = field(default_factory=list)
    _calls: int = 0

    @classmethod
    def opened(cls, name: str, limits: PoolLimits, zone: tzinfo, at: datetime) -> SharedPool:
        pool = cls(name, limits, zone)
        pool._record(PoolSet, at, limits=limits)
        return pool

    def _record(self, kind: type[Any], at: datetime, **fields: Any) -> None:
        event = kind(pool=self.name, seq=self.state.seq + 1, at=at, **fields)
        self.events.append(event)
        evolve_pool(self.state, event)

    def settle_until(self, now: datetime) -> None:
        """Settle every call that ended by ``now``, in the order they ended."""
        while self._pending and self._pending[0][0] <= now:
            end, _, call, goal, figure = heapq.heappop(self._pending)
            self._record(PoolSettled, end, call=call, goal_id=goal, figure=figure)

    def reserve(self, goal: str, ask: Figure, now: datetime) -> str | Refusal:
        """Reserve ``ask`` for a call of ``goal`` starting ``now``: the call's id, or why it
        does not fit (then nothing is recorded but the park)."""
        self.settle_until(now)
        refused = refusal(self.state, ask, self.zone, now)
        if refused is not None:
            self.parks.append(Parked(goal, now, refused))
            return refused
        start = needs_renewal(self.state, self.zone, now)
        if start is not None:
            self._close_period(final=False)
            self._record(PoolRenewed, now, period_start=start)
        self._calls += 1
        call = f"c{self._calls}"
        self._record(PoolReserved, now, call=call, goal_id=goal, figure=ask)
        return call

    def release(self, call: str, goal: str, at: datetime) -> None:
        """The call never ran: its reservation is given back."""
        self._record(PoolReleased, at, call=call, goal_id=goal)

    def ends(self, call: str, goal: str, figure: Figure, at: datetime) -> None:
        """The call ends at ``at`` having spent ``figure`` (settled when time gets there)."""
        heapq.heappush(self._pending, (at, self._calls, call, goal, figure))

    def auto_grant(self, goal: str, refused: Refusal, ask: Figure, at: datetime) -> Grant | None:
        """Grant what the goal asks (``pool_request``) when the pool's ``grants`` rule
        allows it by itself (``auto_grant_rule``): recorded as ``pool.granted``, actor
        ``policy``; None when a person would have to."""
        grants = self.limits.grants
        usd, attempts = pool_request(refused, ask)
        rule = auto_grant_rule(grants, usd, attempts)
        if rule is None or grants is None:
            return None
        expires = at + timedelta(seconds=grants.expires_s) if grants.expires_s else None
        figure = Figure(usd=usd or 0.0, attempts=attempts or 0)
        self._record(
            PoolGranted, at, actor="policy", figure=figure, expires_at=expires, goal_id=goal,
            rule=rule,
        )  # fmt: skip
        return Grant(usd, attempts, grants.expires_s, rule)

    def close(self) -> list[Period]:
        """Settle every call left and return the spend of each period."""
        if self._pending:
            self.settle_until(max(p[0] for p in self._pending))
        self._close_period(final=True)
        return self.periods

    def _close_period(self, *, final: bool) -> None:
        spent: dict[str, float] = {unit: self.state.spent[unit] for unit in UNITS}
        if final or self.state.period_start is not None or any(spent.values()):
            self.periods.append(Period(self.state.period_start, spent))
