"""Codex's ``--json`` event stream (stdout): the fold of its lines, in bounded space.

Rules (observations in ``docs/harnesses.md``, "What ``--json`` prints"):
    * One JSON event per line: ``thread.started``, ``turn.started``, ``item.*`` (tool
      items, model-text items, ``error`` diagnostics), ``turn.completed`` (with
      ``usage``), ``turn.failed``, ``error``. A line that is not a JSON event object is
      counted as malformed.
    * ``error`` events that begin "Reconnecting... waiting for network" are counted apart:
      codex cannot connect at all and waits for the network (SPEC §12.7); the adapter
      ends it at the first one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from governor.core.observation import Usage
from governor.exec.harness import json_event

TOOL_ITEMS: Final = frozenset(
    {"command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search"}
)
"""Item types that record a tool the agent used: effects observed."""
TEXT_ITEMS: Final = frozenset({"agent_message", "reasoning", "plan", "todo_list"})
"""Item types that carry model text: output observed."""
DIAGNOSTIC_ITEMS: Final = frozenset({"error"})
"""Item types codex adds on its own (warnings): neither effect nor output."""
TEXT_EVENTS: Final = frozenset({"item.plan.delta", "request_user_input"})
"""Top-level events that carry model output."""


RECONNECTING: Final = "Reconnecting... waiting for network"
"""Codex's ``error`` event when it cannot connect at all: it then waits for the network."""


@dataclass(frozen=True, slots=True)
class CodexRun:
    """What a ``codex exec --json`` stream said, summarised in bounded space."""

    events: int = 0
    """Non-empty lines read."""
    malformed: int = 0
    """Lines that were not a JSON event object."""
    completed: bool = False
    """A ``turn.completed`` event was seen."""
    failed: bool = False
    """A ``turn.failed`` event was seen."""
    failure: str | None = None
    """The ``turn.failed`` message (else the last ``error`` event's)."""
    reply: str | None = None
    """The last ``agent_message`` text."""
    tool_items: int = 0
    """Item events of a tool type."""
    text_items: int = 0
    """Item (and top-level) events that carry model output."""
    unknown_items: int = 0
    """Item events of a type this adapter does not know."""
    reconnecting: int = 0
    """Codex's "Reconnecting... waiting for network" events (no connection was made)."""
    usage: Usage | None = None
    """The ``turn.completed`` usage."""


class CodexEvents:
    """An incremental fold of the JSONL stream, fed one line at a time as codex writes it."""

    def __init__(self) -> None:
        self.events = self.malformed = 0
        self.tool_items = self.text_items = self.unknown_items = self.reconnecting = 0
        self.completed = self.failed = False
        self.usage: Usage | None = None
        self.reply: str | None = None
        self._failure: str | None = None
        self._error: str | None = None

    def feed(self, line: bytes | str) -> None:
        """Fold one stdout line (blank lines are ignored)."""
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        if not text.strip():
            return
        self.events += 1
        event = json_event(text)
        if event is None:
            self.malformed += 1
        else:
            self._fold(event)

    def result(self) -> CodexRun:
        """The summary so far."""
        return CodexRun(
            events=self.events,
            malformed=self.malformed,
            completed=self.completed,
            failed=self.failed,
            failure=self._failure or self._error,
            reply=self.reply,
            tool_items=self.tool_items,
            text_items=self.text_items,
            unknown_items=self.unknown_items,
            reconnecting=self.reconnecting,
            usage=self.usage,
        )

    def _fold(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "turn.completed":
            self.completed = True
            self.usage = _usage(event.get("usage"))
        elif kind == "turn.failed":
            self.failed = True
            self._failure = _message(event.get("error")) or self._failure
        elif kind == "error":
            self._error = _message(event) or self._error
            if (self._error or "").startswith(RECONNECTING):
                self.reconnecting += 1
        elif kind in TEXT_EVENTS:
            self.text_items += 1
        elif kind in ("item.started", "item.updated", "item.completed"):
            self._item(kind, event.get("item"))

    def _item(self, kind: str, item: object) -> None:
        item_type = item.get("type") if isinstance(item, dict) else None
        if item_type in TOOL_ITEMS:
            self.tool_items += 1
        elif item_type in TEXT_ITEMS:
            self.text_items += 1
        elif item_type not in DIAGNOSTIC_ITEMS:
            self.unknown_items += 1
        if item_type == "agent_message" and kind == "item.completed" and isinstance(item, dict):
            text = item.get("text")
            self.reply = text if isinstance(text, str) else self.reply


def _message(container: object) -> str | None:
    message = container.get("message") if isinstance(container, dict) else None
    return message if isinstance(message, str) and message else None


def _usage(usage: object) -> Usage | None:
    if not isinstance(usage, dict):
        return None

    def count(key: str) -> int | None:
        value = usage.get(key)
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**62
        return value if ok and isinstance(value, int) else None

    return Usage(
        input_tokens=count("input_tokens"),
        output_tokens=count("output_tokens"),
        cached_input_tokens=count("cached_input_tokens"),
    )


def parse_codex_events(lines: Iterable[bytes | str]) -> CodexRun:
    """Summarise a whole ``codex exec --json`` stream (see :class:`CodexEvents`)."""
    events = CodexEvents()
    for line in lines:
        events.feed(line)
    return events.result()
