"""Durations as people write them: ``90``, ``90s``, ``5m``, ``2h``, ``1d``, ``1h30m``.

Rules:
    * A bare number is seconds (what every ``*_s`` field and option always took); a number
      with a unit is ``s``, ``m``, ``h`` or ``d``; parts may follow each other, largest
      unit first (``1h30m``, ``2m30s``); a part may have decimals (``1.5h``).
    * Parsing is the only thing here: the ranges are the caller's (a wait, a timeout, a
      budget), and a history always records the number of seconds, never the text.
    * Only the input doors read durations — goal files and their policies, ``--policy``
      and ``--grid`` values, command options — never the event models, so a history
      that holds ``"2h"`` is still refused (and the compiled decoder agrees).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final

UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}
"""Seconds per unit."""

_PART: Final = re.compile(r"(\d+(?:\.\d+)?|\.\d+)([smhd])")
_WHOLE: Final = re.compile(r"(?:(?:\d+(?:\.\d+)?|\.\d+)[smhd])+")

POLICY_DURATIONS: Final = ("max_runtime_s", "max_outage_wait_s", "max_quota_wait_s")
"""Policy fields that are durations (besides ``upstream_backoff``'s ``initial_s`` and ``max_s``)."""
BACKOFF_DURATIONS: Final = ("initial_s", "max_s")


def parse_duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``5m``, ``2h``, ``1d`` or ``1h30m``.

    Raises:
        ValueError: naming the text, for anything else (and for ``inf``, ``nan``).
    """
    cleaned = text.strip().lower().replace(" ", "")
    try:
        value = float(cleaned)
    except ValueError:
        value = None
    if value is None:
        if not _WHOLE.fullmatch(cleaned):
            raise ValueError(f"'{text}' is not a duration (e.g. 90, 90s, 5m, 2h, 1h30m)")
        parts = _PART.findall(cleaned)
        units = [UNITS[unit] for _, unit in parts]
        if units != sorted(units, reverse=True) or len(set(units)) != len(units):
            raise ValueError(f"'{text}' is not a duration: give each unit once, largest first")
        value = sum(float(number) * UNITS[unit] for number, unit in parts)
    if not math.isfinite(value):
        raise ValueError(f"'{text}' is not a finite duration")
    return value


def duration_or_same(value: Any) -> Any:
    """A duration string as seconds; any other value (or a string that is no duration,
    which the caller's check then names) as it is."""
    if not isinstance(value, str):
        return value
    try:
        return parse_duration(value)
    except ValueError:
        return value


def policy_durations(values: Mapping[str, Any]) -> dict[str, Any]:
    """Policy fields given as duration strings (``max_runtime_s = "2h"``, an
    ``upstream_backoff`` of ``{initial_s = "30s"}``) read as seconds; the rest unchanged."""
    out = dict(values)
    for key in POLICY_DURATIONS:
        if key in out:
            out[key] = duration_or_same(out[key])
    backoff = out.get("upstream_backoff")
    if isinstance(backoff, Mapping):
        out["upstream_backoff"] = {
            k: duration_or_same(v) if k in BACKOFF_DURATIONS else v for k, v in backoff.items()
        }
    for key in [k for k in out if k.startswith("upstream_backoff.")]:
        if key.partition(".")[2] in BACKOFF_DURATIONS:
            out[key] = duration_or_same(out[key])
    return out


def format_duration(seconds: float) -> str:
    """A short elapsed time: ``42s``, ``3m05s``, ``2h01m``."""
    whole = max(int(seconds), 0)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
