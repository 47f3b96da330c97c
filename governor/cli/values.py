"""Argument types the commands share: numbers that every part of governor can hold.

A bad value is a usage error (exit 2, one line naming the option), never a traceback
from deep inside: a whole number past 64 bits would fail in SQLite, PostgreSQL or
``orjson``; an infinite or NaN number of seconds would make a lease never expire or a
worker never wake (SPEC §11.1: non-finite numbers are invalid everywhere).
"""

from __future__ import annotations

import argparse
import math

from governor.core.numbers import MAX_INT64, MAX_WAIT_S


def whole(text: str) -> int:
    """A whole number that fits in 64 bits."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if abs(value) > MAX_INT64:
        raise argparse.ArgumentTypeError(f"{text} is too large (at most {MAX_INT64})")
    return value


def positive_whole(text: str) -> int:
    """A whole number from 1 to 2^63 - 1."""
    value = whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
    return value


def wait_seconds(text: str) -> float:
    """A finite number of seconds from 0 to ``MAX_WAIT_S`` (30 days)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds, not {text}")
    if not 0 <= value <= MAX_WAIT_S:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_WAIT_S} seconds, not {text}")
    return value


def seconds(text: str) -> float:
    """A finite number of seconds above 0, at most ``MAX_WAIT_S`` (30 days)."""
    value = wait_seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be above 0, not {text}")
    return value
