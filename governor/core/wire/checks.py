"""The compiled decoder's checks: doubts, UTC times and id patterns (SPEC §11.1).

Rules:
    * A check returns the value it let through or raises ``Doubt``: the compiled path is
      not sure, and pydantic decides (``governor.core.wire.decoder``).
    * A time is a short RFC 3339 string in UTC; longer ones go to pydantic.
    * A pattern check remembers the strings it let through (ids repeat on every line).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

Convert = Callable[[Any], Any]
"""Turns a decoded value into the model's value, or raises ``Doubt``."""


class Doubt(Exception):
    """The compiled path is not sure; pydantic decides."""


MAX_TIME_LENGTH: Final = 27
"""``YYYY-MM-DDTHH:MM:SS.ffffffZ``: longer time strings (more than six fractional digits,
which msgspec rounds and pydantic truncates) go to pydantic."""
SEEN_LIMIT: Final = 100_000

to_datetime = msgspec.convert


def doubt() -> Any:
    raise Doubt


def utc_time(value: str) -> datetime:
    """A short RFC 3339 time in UTC, else a doubt (generated code inlines the same test)."""
    if len(value) > MAX_TIME_LENGTH:
        raise Doubt
    try:
        parsed = to_datetime(value, datetime)
    except msgspec.ValidationError:
        raise Doubt from None
    if parsed.tzinfo is not UTC:  # msgspec gives the UTC singleton for every zero offset
        raise Doubt
    return parsed


class PatternCheck:
    """A check of a ``pattern`` that remembers what it let through (ids repeat a lot).

    Generated code tests ``value in check.seen`` inline and calls the check only for a
    string it has not seen.
    """

    __slots__ = ("fullmatch", "seen")

    def __init__(self, pattern: str) -> None:
        # pydantic matches patterns with Rust's regex, where ``$`` is the end of the text;
        # ``fullmatch`` without the anchors is the same (Python's ``$`` also takes a "\n").
        self.fullmatch = re.compile(pattern.removeprefix("^").removesuffix("$")).fullmatch
        self.seen: set[str] = set()

    def __call__(self, value: str) -> str:
        if value not in self.seen:
            if self.fullmatch(value) is None:
                raise Doubt
            if len(self.seen) >= SEEN_LIMIT:
                self.seen.clear()
            self.seen.add(value)
        return value


_PATTERN_CHECKS: dict[str, PatternCheck] = {}


def pattern_check(pattern: str) -> PatternCheck:
    """One check per pattern, shared by every field that has it: a run id seen on
    ``attempt.started`` is not checked again on its ``attempt.finished``."""
    if pattern not in _PATTERN_CHECKS:
        _PATTERN_CHECKS[pattern] = PatternCheck(pattern)
    return _PATTERN_CHECKS[pattern]
