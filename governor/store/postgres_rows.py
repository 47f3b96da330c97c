"""How PostgreSQL's rows hold times, for ``governor.store.postgres``: ``TIMESTAMPTZ``, read
back as UTC; a value a ``datetime`` cannot hold is read as ``Unreadable`` for the column
decoders (``governor.store.columns``) to name the row that holds it.
"""

from __future__ import annotations

from typing import Final

import psycopg
from psycopg.abc import AdaptContext
from psycopg.adapt import Loader

from governor.store.columns import Times, Unreadable, aware_time

TIMES: Final = Times("", aware_time, (("due", "due_at"),))
"""PostgreSQL's times: ``TIMESTAMPTZ`` columns, read back as UTC."""
TIMESTAMPTZ: Final = psycopg.adapters.types["timestamptz"].oid
"""The type ``TolerantTimes`` reads."""


class TolerantTimes(Loader):
    """``TIMESTAMPTZ`` as psycopg reads it, but a value a ``datetime`` cannot hold
    (``infinity``, a year past 9999) is ``Unreadable`` instead of failing the whole query,
    so the column decoders name the row that holds it."""

    def __init__(self, oid: int, context: AdaptContext | None = None) -> None:
        super().__init__(oid, context)
        loader = psycopg.adapters.get_loader(oid, psycopg.pq.Format.TEXT)
        assert loader is not None, "psycopg reads TIMESTAMPTZ"
        self._inner = loader(oid, context)

    def load(self, data: bytes | bytearray | memoryview) -> object:
        try:
            return self._inner.load(data)
        except psycopg.DataError:
            return Unreadable(bytes(data).decode("utf-8", "replace"))
