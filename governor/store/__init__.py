"""The event store (SPEC §8) and the history interchange format (SPEC §3).

``open_store(url)`` opens a backend; every backend keeps the ``EventStore`` contract.
See ``docs/store.md``.

Every name is imported on first use: opening a store to list its goals does not import
the event models (start-up, issue 12), and reading a history file (``governor.store.jsonl``,
a module of this package) imports no backend (issue 36).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
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

_LAZY: Final[dict[str, str]] = {
    "CorruptEventError": "governor.errors",
    "EventStore": "governor.store.base",
    "GoalSummary": "governor.core.summary",
    "ImportResult": "governor.store.transfer",
    "Lease": "governor.store.base",
    "export_history": "governor.store.transfer",
    "import_history": "governor.store.transfer",
    "open_store": "governor.store.url",
    "summarize": "governor.core.summary",
}
"""Each public name and the module it lives in (imported when the name is first used)."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'governor.store' has no attribute {name!r}")
