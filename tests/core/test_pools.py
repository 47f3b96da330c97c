"""Pools' pure rules (SPEC §13.6): periods in a time zone, DST included; whether a
reservation fits; a call's figure by the one definition of charged."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from governor.core.evidence import Evidence
from governor.core.pools import (
    Figure,
    PoolLimits,
    PoolState,
    call_figure,
    period_end,
    period_start,
    refusal,
)
from governor.core.work_events import AttemptFinished

BERLIN = ZoneInfo("Europe/Berlin")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@pytest.mark.parametrize(
    ("period", "now", "start", "end"),
    [
        (
            "day",
            "2026-03-29T12:00:00+02:00",
            "2026-03-29T00:00:00+01:00",
            "2026-03-30T00:00:00+02:00",
        ),
        (
            "day",
            "2026-10-25T12:00:00+01:00",
            "2026-10-25T00:00:00+02:00",
            "2026-10-26T00:00:00+01:00",
        ),
        (
            "day",
            "2026-06-01T00:30:00+02:00",
            "2026-06-01T00:00:00+02:00",
            "2026-06-02T00:00:00+02:00",
        ),
        (
            "week",
            "2026-12-06T23:00:00+01:00",
            "2026-11-30T00:00:00+01:00",
            "2026-12-07T00:00:00+01:00",
        ),
        (
            "month",
            "2026-03-31T23:30:00+02:00",
            "2026-03-01T00:00:00+01:00",
            "2026-04-01T00:00:00+02:00",
        ),
        (
            "month",
            "2026-12-15T10:00:00+01:00",
            "2026-12-01T00:00:00+01:00",
            "2027-01-01T00:00:00+01:00",
        ),
    ],
    ids=[
        "the day clocks go forward lasts 23 hours",
        "the day clocks go back lasts 25 hours",
        "just after local midnight is the new day though UTC is still on the old one",
        "a week starts on Monday, local time",
        "a month turns at local midnight, across a DST change",
        "December renews into next year",
    ],
)
def test_calendar_periods_start_and_end_at_local_midnight(period, now, start, end):
    limits = PoolLimits(usd=1, period=period, tz="Europe/Berlin")
    assert period_start(limits, BERLIN, at(now)) == at(start)
    assert period_end(limits, BERLIN, at(now)) == at(end)


def test_a_total_pool_never_renews_and_a_duration_period_counts_from_the_epoch():
    assert period_start(PoolLimits(usd=1), UTC, at("2026-01-01T00:00:00+00:00")) is None
    every = PoolLimits(usd=1, period="every", every_s=60)
    assert period_start(every, UTC, at("2026-01-01T00:00:59+00:00")) == at(
        "2026-01-01T00:00:00+00:00"
    )
    assert period_end(every, UTC, at("2026-01-01T00:00:59+00:00")) == at(
        "2026-01-01T00:01:00+00:00"
    )


def test_a_reservation_fits_while_spent_and_reserved_leave_room_for_it():
    now = at("2026-06-01T12:00:00+00:00")
    state = PoolState(name="a", limits=PoolLimits(usd=1.0, attempts=3, period="day"))
    state.period_start = period_start(state.limits, UTC, now)  # type: ignore[arg-type]
    assert refusal(state, Figure(usd=1.0, attempts=1), UTC, now) is None
    state.spent["usd"] = 0.5
    state.in_flight["c"] = Figure(usd=0.4, attempts=1)
    refused = refusal(state, Figure(usd=0.2, attempts=1), UTC, now)
    assert refused is not None
    assert (refused.unit, refused.spent, refused.reserved) == (
        "usd",
        0.5,
        0.4,
    )
    assert "renews at 2026-06-02T00:00:00Z" in refused.sentence()
    assert refusal(state, Figure(usd=0.2, attempts=1), UTC, now + timedelta(days=1)) is None


def test_a_calls_figure_counts_its_cost_always_and_its_attempt_unless_it_was_free():
    start = at("2026-06-01T12:00:00+00:00")
    free = AttemptFinished(
        goal_id="g", seq=5, at=start + timedelta(seconds=3), work_id="w", attempt=1, run_id="r",
        outcome="failed", failure_class="upstream", cost_usd=0.02,
        evidence=Evidence(effects="absent", output="absent", refusal="absent", source="stderr", ref="503"),
    )  # fmt: skip
    assert call_figure(free, start) == Figure(usd=0.02, attempts=0, run_time_s=3.0)
    charged = free.model_copy(update={"outcome": "succeeded", "failure_class": None})
    assert call_figure(charged, start).attempts == 1
