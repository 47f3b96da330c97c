"""The event store (SPEC §8) and the history interchange format (SPEC §3).

``open_store(url)`` opens a backend; every backend keeps the ``EventStore`` contract.
See ``docs/store.md``.

The history transfer (``export_history``, ``import_history``, ``ImportResult``) is
imported on first use: opening a store to list its goals does not import the event
models (start-up, issue 12).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from governor.core.summary import GoalSummary, summarize
from governor.errors import CorruptEventError
from governor.store.base import EventStore, Lease
from governor.store.url import open_store

if TYPE_CHECKING:
    from governor.store.transfer import ImportResult, export_history, import_history

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

_LAZY = frozenset({"ImportResult", "export_history", "import_history"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module("governor.store.transfer"), name)
    raise AttributeError(f"module 'governor.store' has no attribute {name!r}")
