"""Stored columns back to values, checked: the one place a damaged row of a table is found.

Rules (docs/store.md "Damaged rows", decision record 0018):
    * Every row a backend reads from a table other than ``events`` — goal summaries and
      stream heads, leases, upstream health, the service registry, agent processes — goes
      through ``Table.decode`` before any other code sees it (the tables are
      ``governor.store.tables``; event rows are ``governor.store.rows``'s).
    * A column holds a value of its kind inside its bounds, or the row is damaged:
      ``DamagedRowError`` names the table, the row's key, the column and what it holds, and
      says what mends it. So nothing downstream — a format, a decision, an agent's process
      group being killed — ever meets a value it cannot use, on any backend.
    * A backend brings its own time codec (``Times``): SQLite stores microseconds since the
      epoch, PostgreSQL ``TIMESTAMPTZ`` (a value a ``datetime`` cannot hold, such as
      ``infinity``, reaches the codec as ``Unreadable``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from governor.errors import DamagedRowError

SHOWN: Final = 60
"""Characters of a bad value a message shows at most."""
KEY_SHOWN: Final = 200
"""Characters of a row's key a message shows at most (an upstream's name may be long)."""


class Bad(Exception):
    """A column's value is not of its kind (``detail`` says what it holds)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Unreadable(str):
    """A stored value the driver could not turn into a Python value (its text)."""

    __slots__ = ()


def shown(value: object) -> str:
    """A stored value as a message shows it: short, and never a whole blob."""
    if isinstance(value, bytes):
        return f"a blob of {len(value):,} bytes"
    if isinstance(value, Unreadable):
        return f"{str(value)[:SHOWN]!r}"
    text = repr(value)
    return text if len(text) <= SHOWN else f"{text[: SHOWN - 3]}...{text[-1]}"


Kind = Callable[[object], object]
"""A column's decoder: its value checked (and converted), or ``Bad``."""


# Each kind takes NULL itself when ``null`` (not through a wrapper): a list of 100,000
# goals decodes 1.7 million columns, and a call per column is most of their cost.


def text(value: object) -> str:
    """Text: a ``str`` that is valid Unicode (SQLite may hand back undecodable bytes)."""
    if type(value) is not str:
        raise Bad(f"holds {shown(value)}, not text")
    if not value.isascii():  # (the common case costs no encoding)
        _unicode(value)
    return value


def maybe_text(value: object) -> str | None:
    """``text``, or NULL."""
    if value is None:
        return None
    if type(value) is not str:
        raise Bad(f"holds {shown(value)}, not text")
    if not value.isascii():
        _unicode(value)
    return value


def _unicode(value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise Bad(f"holds {shown(value)}, which is not valid UTF-8 text") from None


def whole(low: int, high: int, *, null: bool = False) -> Kind:
    """A whole number from ``low`` to ``high`` (never a bool, a float or text); or NULL
    when ``null``."""

    def decode(value: object) -> int | None:
        if value is None and null:
            return None
        if type(value) is not int:
            raise Bad(f"holds {shown(value)}, not a whole number")
        if not low <= value <= high:
            raise Bad(f"holds {value}, outside {low:,}..{high:,}")
        return value

    return decode


def number(low: float, high: float, *, null: bool = False) -> Kind:
    """A finite number from ``low`` to ``high``, as a float; or NULL when ``null``."""

    def decode(value: object) -> float | None:
        if value is None and null:
            return None
        if type(value) is not int and type(value) is not float:
            raise Bad(f"holds {shown(value)}, not a number")
        number = float(value)
        if not math.isfinite(number) or not low <= number <= high:
            raise Bad(f"holds {shown(value)}, outside {low:,}..{high:,}")
        return number

    return decode


def flag(value: object) -> bool:
    """A yes or no: SQLite's 0 or 1, PostgreSQL's BOOLEAN."""
    if type(value) not in (int, bool) or value not in (0, 1):
        raise Bad(f"holds {shown(value)}, not 0 or 1")
    return bool(value)


def one_of(choices: Sequence[str], *, null: bool = False) -> Kind:
    """One of the ``choices`` (a status, an action); or NULL when ``null``."""
    known = frozenset(choices)

    def decode(value: object) -> str | None:
        if value is None and null:
            return None
        if value not in known or type(value) is not str:
            raise Bad(f"holds {shown(value)}, not one of {', '.join(choices)}")
        return value

    return decode


def optional(kind: Kind) -> Kind:
    """``kind``, or NULL."""

    def decode(value: object) -> object:
        return None if value is None else kind(value)

    return decode


@dataclass(frozen=True, slots=True)
class TimeKind:
    """The kind of a time column: decoded by the backend's ``Times``."""

    optional: bool


TIME: Final = TimeKind(optional=False)
MAYBE_TIME: Final = TimeKind(optional=True)


def aware_time(value: object) -> datetime:
    """A time stored as a ``datetime`` (PostgreSQL's ``TIMESTAMPTZ``, the memory store)."""
    if isinstance(value, Unreadable):
        raise Bad(f"holds {shown(value)}, which is not a time governor can read")
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise Bad(f"holds {shown(value)}, not a time")
    return value


@dataclass(frozen=True, slots=True)
class Times:
    """How a backend stores times: the suffix of its time columns' names (and the names
    that differ otherwise), and the decoder of a stored time (raising ``Bad``)."""

    suffix: str
    decode: Callable[[object], datetime]
    renamed: tuple[tuple[str, str], ...] = ()
    """(name, the backend's name) of time columns not named ``name + suffix``."""

    def column(self, name: str, kind: Kind | TimeKind) -> str:
        """The backend's name of a column."""
        if not isinstance(kind, TimeKind):
            return name
        return dict(self.renamed).get(name, name + self.suffix)

    def kind(self, kind: Kind | TimeKind) -> Kind:
        """The decoder of a column of ``kind`` in this backend."""
        if not isinstance(kind, TimeKind):
            return kind
        return optional(self.decode) if kind.optional else self.decode


@dataclass(frozen=True, slots=True)
class Table:
    """How to read one table's rows: its columns (name and kind, in the order a backend
    selects them), which of them make the key that names a row, and what mends a row."""

    name: str
    columns: tuple[tuple[str, Kind | TimeKind], ...]
    key: tuple[int, ...]
    remedy: str

    def names(self, times: Times) -> list[str]:
        """The backend's names of the columns (time columns carry its suffix)."""
        return [times.column(n, k) for n, k in self.columns]

    def decode(self, row: Sequence[object], times: Times) -> tuple[Any, ...]:
        """The row's values, each checked; ``DamagedRowError`` at the first bad one.

        (``Any``: each value is of its column's kind, checked here at run time.)
        """
        decoders = _decoders(self, times)
        if len(row) != len(decoders):
            raise ValueError(f"a {self.name} row of {len(row)} columns, not {len(decoders)}")
        try:  # the common case at the cost of one call per column (``list`` of 10^5 goals)
            return tuple([decode(value) for decode, value in zip(decoders, row, strict=False)])
        except Bad:
            pass
        for (name, kind), decode, value in zip(self.columns, decoders, row, strict=False):
            try:
                decode(value)
            except Bad as bad:
                raise self.damaged(row, times.column(name, kind), bad.detail) from None
        raise AssertionError("a decoder refused a value once, then took it")

    def damaged(self, row: Sequence[object], column: str, detail: str) -> DamagedRowError:
        """The error of a row whose ``column`` holds what ``detail`` says."""
        return DamagedRowError(self.name, self.key_of(row), column, detail, self.remedy)

    def key_of(self, row: Sequence[object]) -> str:
        """The row's key as messages show it."""
        parts = [row[i] for i in self.key]
        shown_parts = [repr(p) if isinstance(p, str) else shown(p) for p in parts]
        key = shown_parts[0] if len(parts) == 1 else f"({', '.join(shown_parts)})"
        return key if len(key) <= KEY_SHOWN else f"{key[: KEY_SHOWN - 4]}...{key[-1]}"


_DECODERS: dict[tuple[int, int], tuple[Table, Times, tuple[Kind, ...]]] = {}


def _decoders(table: Table, times: Times) -> tuple[Kind, ...]:
    """The table's column decoders in this backend, made once per table and backend: found
    by identity (hashing a table's columns for every row would cost more than decoding)."""
    found = _DECODERS.get((id(table), id(times)))
    if found is None or found[0] is not table or found[1] is not times:
        made = tuple(times.kind(kind) for _, kind in table.columns)
        found = _DECODERS[(id(table), id(times))] = (table, times, made)
    return found[2]
