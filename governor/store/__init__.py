"""The event store (SPEC §8) and the history interchange format (SPEC §3).

``open_store(url)`` opens a backend; every backend keeps the ``EventStore`` contract.
See ``docs/store.md``.
"""

from __future__ import annotations

from governor.core.summary import GoalSummary, summarize
from governor.errors import CorruptEventError
from governor.store.base import EventStore, Lease
from governor.store.transfer import ImportResult, export_history, import_history
from governor.store.url import open_store

__all__ = [
    "CorruptEventError",
    "EventStore",
    "GoalSummary",
    "ImportResult",
    "Lease",
    "export_history",
    "import_history",
    "open_store",
    "summarize",
]
