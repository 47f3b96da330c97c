"""Argument types the commands share: numbers that every part of governor can hold.

A bad value is a usage error (exit 2, one line naming the option), never a traceback
from deep inside: a whole number past 64 bits would fail in SQLite, PostgreSQL or
``orjson``; an infinite or NaN number of seconds would make a lease never expire or a
worker never wake (SPEC §11.1: non-finite numbers are invalid everywhere).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from governor.core.durations import parse_duration
from governor.core.limits import MAX_INT64, MAX_WAIT_S


def whole(text: str) -> int:
    """A whole number that fits in 64 bits."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if abs(value) > MAX_INT64:
        raise argparse.ArgumentTypeError(f"{text} is too large (at most {MAX_INT64})")
    return value


def whole_in(low: int, high: int = MAX_INT64) -> Callable[[str], int]:
    """The type of a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        value = whole(text)
        if value < low:
            floor = "above 0" if low == 1 else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {floor}, not {text}")
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, not {text}")
        return value

    parse.__name__ = f"whole from {low}"  # argparse names the type in some errors
    return parse


positive_whole = whole_in(1)
"""A whole number from 1 to 2^63 - 1."""
natural = whole_in(0)
"""A whole number from 0 to 2^63 - 1 (a seq to start after, a count of lines)."""
_port_number = whole_in(0, 65535)


def port(text: str) -> int:
    """A TCP port from 0 (any free one) to 65535."""
    try:
        return _port_number(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a port number (0 for any free one, up to 65535)"
        ) from None


def _finite(text: str, what: str = "number") -> float:
    """``text`` as a finite float; ``what`` names it in the errors."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a {what}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite {what}, not {text}")
    return value


def duration(text: str) -> float:
    """A finite number of seconds, or a duration with units: ``90s``, ``5m``, ``2h``, ``1h30m``."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def wait_seconds(text: str) -> float:
    """A duration (``duration``) from 0 to ``MAX_WAIT_S`` (30 days)."""
    value = duration(text)
    if not 0 <= value <= MAX_WAIT_S:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_WAIT_S} seconds, not {text}")
    return value


def seconds(text: str) -> float:
    """A duration (``duration``) above 0, at most ``MAX_WAIT_S`` (30 days)."""
    value = wait_seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
    return value


def number_in(
    low: float, high: float, *, above: bool = False, seconds: bool = False
) -> Callable[[str], float]:
    """The type of a finite number from ``low`` (excluded when ``above``) to ``high``; with
    ``seconds``, a duration (``90s``, ``5m``, ``2h``)."""

    def parse(text: str) -> float:
        value = duration(text) if seconds else _finite(text)
        if value < low or value > high or (above and value == low):
            side = "above" if above else "from"
            raise argparse.ArgumentTypeError(f"must be {side} {low:g} to {high:g}, not {text}")
        return value

    parse.__name__ = f"number from {low:g}"
    return parse
