"""Pools' limits, periods and figures (SPEC §13.6): what a pool caps, when its period
starts and renews in its time zone, and what one call spends.

Rules:
    * Limits on cost (USD), charged attempts and agent run time, each over one period: a
      calendar ``day``, ``week`` (from Monday) or ``month`` in the pool's IANA time zone,
      ``total`` (never renews), or ``every`` N seconds (windows from the Unix epoch). The
      time zone is an argument (a ``tzinfo`` the shell builds): the core reads no
      time-zone database. A local midnight is turned into UTC with that date's offset, so
      the day the clocks go forward lasts 23 hours.
    * A call's figure is read off the goal's own recorded run by the one definition of
      charged (``call_figure``): its reported cost always, one attempt unless the run
      failed uncharged, its run time when its start is known.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from governor.core.event_fields import Name
from governor.core.events import PlanFailed, PlanProposed
from governor.core.evidence import is_uncharged
from governor.core.numbers import Count, RuntimeS, Usd
from governor.core.policy import Grants
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
