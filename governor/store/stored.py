"""Rows as a backend stores them, apart from the codecs that make and read them.

``governor.store.rows`` encodes and decodes event rows (it imports the event models); the
backends and the engine name the row types from here, so opening a store to read its
summaries (``governor list``) imports no model (start-up, issue 12).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from governor.store.base import Lease


class StoredEvent(NamedTuple):
    """One event as a backend stores it."""

    seq: int
    type: str
    at: datetime
    body: bytes
    crc: int
    """``zlib.crc32(body)``."""


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """A goal's row of the lease table: the last token ever granted, and the live lease."""

    token: int
    lease: Lease | None


@dataclass(frozen=True, slots=True)
class StreamHead:
    """Where a goal's stream ends: as its rows say, and as the store recorded it."""

    last: int
    """The highest stored seq (0 when there is no row)."""
    recorded: int | None
    """The last seq the goal's summary row recorded; None when there is no summary row."""
    chain: int | None
    """The checksum chain head recorded with it; None when recorded before chains."""


def chain(previous: int, crcs: Iterable[int]) -> int:
    """The checksum chain head after rows with ``crcs``, continuing from ``previous`` (0
    before the first row): a CRC-32 over the rows' CRC-32s, in seq order."""
    head = previous
    for crc in crcs:
        head = zlib.crc32(crc.to_bytes(4, "big"), head)
    return head
