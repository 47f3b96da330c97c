"""One event as a backend stores it: its row, apart from the codec that makes and reads it.

``governor.store.rows`` encodes and decodes rows (it imports the event models); the
backends and the engine name the row type from here, so opening a store to read its
summaries (``governor list``) imports no model (start-up, issue 12).
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple


class StoredEvent(NamedTuple):
    """One event as a backend stores it."""

    seq: int
    type: str
    at: datetime
    body: bytes
    crc: int
    """``zlib.crc32(body)``."""
