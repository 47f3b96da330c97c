"""The numbers every model shares: finite, whole where they count, and inside sane ranges.

Rules (SPEC §11.1, §5):
    * No number is ever infinite or NaN. ``inf``, ``nan``, ``1e400``, JSON ``Infinity``
      and ``NaN``, and strings such as ``"1e400"`` are refused wherever a number is read:
      goal files, policies, operator verbs, histories. (JSON cannot carry them back, so a
      stored one would make every later read of the goal fail.)
    * Every integer fits in 64 bits, so SQLite, orjson and any ``--json`` reader hold it.
    * Budgets and waits have ceilings far above any real goal and far below where float
      or date arithmetic overflows: a wait is added to an event's time, a back-off grows
      by powers of its factor.

Every float and int field of an event, a policy or a profile uses one of these types;
``tests/core/test_numbers.py`` walks the models and fails on a field that does not.
Numbers an agent or a vendor *reports* (a cost, a retry-after) are observations, not
input to refuse: :func:`reported` makes them storable before they are recorded.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Annotated, Final

from pydantic import Field

from governor.core.limits import (
    MAX_COUNT,
    MAX_FACTOR,
    MAX_INT64,
    MAX_PARALLEL,
    MAX_RUNTIME_S,
    MAX_USD,
    MAX_WAIT_S,
)

__all__ = [
    "MAX_COUNT",
    "MAX_FACTOR",
    "MAX_INT64",
    "MAX_PARALLEL",
    "MAX_RUNTIME_S",
    "MAX_TIME",
    "MAX_USD",
    "MAX_WAIT_S",
    "Count",
    "Factor",
    "Int64",
    "Parallel",
    "PosCount",
    "Position",
    "RuntimeS",
    "TimeoutS",
    "Usd",
    "WaitS",
    "later",
    "reported",
]

Int64 = Annotated[int, Field(ge=0, le=MAX_INT64)]
Position = Annotated[int, Field(ge=1, le=MAX_INT64)]
"""A 1-based position: ``seq``, a plan's sequence, an attempt number."""
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
PosCount = Annotated[int, Field(ge=1, le=MAX_COUNT)]
Parallel = Annotated[int, Field(ge=1, le=MAX_PARALLEL)]
WaitS = Annotated[float, Field(ge=0, le=MAX_WAIT_S, allow_inf_nan=False)]
"""Seconds to wait, never negative, at most ``MAX_WAIT_S``."""
TimeoutS = Annotated[float, Field(gt=0, le=MAX_WAIT_S, allow_inf_nan=False)]
RuntimeS = Annotated[float, Field(gt=0, le=MAX_RUNTIME_S, allow_inf_nan=False)]
Usd = Annotated[float, Field(ge=0, le=MAX_USD, allow_inf_nan=False)]
Factor = Annotated[float, Field(ge=1, le=MAX_FACTOR, allow_inf_nan=False)]


MAX_TIME: Final = datetime.max.replace(tzinfo=UTC)
"""The end of time, as far as a ``datetime`` goes: 9999-12-31T23:59:59.999999Z."""


def later(at: datetime, seconds: float) -> datetime:
    """``at`` plus ``seconds``, or ``MAX_TIME`` when that is past it.

    A history may be dated near year 9999 (nothing refuses it); a wait after its last
    event then ends at the end of time instead of overflowing every command that reads it.
    """
    try:
        span = _SPANS.get(seconds)
        if span is None:
            span = timedelta(0, seconds)  # (days, seconds): positional is cheaper
            if len(_SPANS) < _SPANS_KEPT:
                _SPANS[seconds] = span
        return at + span
    except OverflowError:
        return MAX_TIME


_SPANS: dict[float, timedelta] = {}
"""The spans ``later`` made, by their seconds: making a ``timedelta`` costs ten times
adding one, and waits repeat (the back-off's steps, a policy's cooldowns). Equal seconds
make equal spans (``30`` and ``30.0`` included), so a kept span is the one it would make."""
_SPANS_KEPT: Final = 4096


def reported(value: float | None, ceiling: float) -> float | None:
    """A number an agent or a vendor reported, made storable in an event.

    NaN and negative numbers say nothing (``None``); anything above ``ceiling``, infinity
    included, is the ceiling. So a hostile reply can neither crash the recording of its
    run nor store a number a later read would refuse.
    """
    if value is None or math.isnan(value) or value < 0:
        return None
    return min(float(value), ceiling)
