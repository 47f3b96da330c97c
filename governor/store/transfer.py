"""Moving goals between stores and files: export to JSON Lines, import from them (SPEC §3).

Rules:
    * Export writes exactly what the codec encodes, one event per line, in seq order.
    * Import validates the whole file (every line decodes, legacy shapes are upcast, the
      history rules hold, a torn final line is an error) while it appends it, a page at
      a time, in one transaction that only a new goal may start (``append_new``): any
      problem rolls it back, a goal already in the store is refused, and nothing is
      written then. Memory stays bounded whatever the file's length.
    * The imported goal's summary is the decision taken at its last event's ``at``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from governor.core.events import Event
from governor.core.history import check_history
from governor.core.summary import GoalSummary, summarize
from governor.core.wire.codec import LineDecoder
from governor.errors import CommandRefusedError, ConcurrencyConflictError
from governor.store.base import EventStore
from governor.store.jsonl import read_history, write_history


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import stored."""

    goal_id: str
    events: int
    """How many events were appended (the goal's last seq)."""
    summary: GoalSummary
    notes: tuple[str, ...] = ()
    """What the importer upcast, line by line (legacy shapes)."""


def export_history(store: EventStore, goal_id: str, out: BinaryIO) -> int:
    """Write a goal's events to ``out`` as JSON Lines; returns how many were written.

    Raises:
        NotFoundError: when the goal is not in the store.
        CorruptEventError: at a stored row that cannot be read back.
    """
    return write_history(store.load(goal_id), out)


def import_history(store: EventStore, path: str | Path) -> ImportResult:
    """Validate a history file and store it as a new goal, in one transaction.

    The file is streamed: each line is decoded, checked against the history rules and
    appended a page at a time inside the transaction, so a history of any length is
    imported in bounded memory; the first problem rolls everything back.

    Raises:
        NotFoundError: when the file does not exist.
        HistoryError: naming the line of the first problem (nothing is written).
        CommandRefusedError: when the goal already exists in the store (nothing is written).
    """
    decoder = LineDecoder(str(path))
    checked = check_history(read_history(path, decoder=decoder), source=str(path))
    first = next(checked, None)
    assert first is not None  # check_history refuses an empty history
    _line, created, view = first
    goal_id = created.goal_id
    if (stored := store.last_seq(goal_id)) > 0:
        raise _exists(goal_id, path, stored)

    def events() -> Iterator[Event]:
        nonlocal view
        yield created
        for _, event, after in checked:
            view = after
            yield event

    def summary() -> GoalSummary:
        assert view.last_at is not None
        return summarize(view, view.last_at)

    try:
        last = store.append_new(goal_id, events(), summary)
    except ConcurrencyConflictError as exc:
        raise _exists(goal_id, path, exc.actual_seq) from exc
    return ImportResult(goal_id, last, summary(), tuple(decoder.notes))


def _exists(goal_id: str, path: str | Path, stored: int) -> CommandRefusedError:
    return CommandRefusedError(
        f"the goal is already in the store ({stored} events); nothing was imported from {path}",
        goal_id=goal_id,
    )
