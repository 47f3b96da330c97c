"""The process clock: the one place governor reads the time of day.

The core never reads it (time is an argument there); the shell takes a ``Clock`` as a
parameter, defaulting to ``utc_now``, so tests inject their own.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]
"""Returns the current time, timezone-aware UTC."""


def utc_now() -> datetime:
    """The default clock: the current time in UTC."""
    return datetime.now(UTC)
