"""Histories to analyse: files, folders of files, goals of a store — read lazily, by index.

Rules: a history is streamed a bounded chunk of lines at a time (a long history or a
10,000-goal corpus never sits in memory whole, unless a caller collects it), it is checked
against the history format as it is read (``events``), every problem names the file and line it is
on, and a corpus is a plain value that worker processes can receive — but one that reads
an ``opened`` store, which stays in the process that opened it (one worker).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from governor.core.events import Event
from governor.core.history import check_history
from governor.core.wire.codec import LineDecoder
from governor.errors import NotFoundError
from governor.store.jsonl import history_files, read_history

if TYPE_CHECKING:
    from governor.store.base import EventStore


@dataclass(frozen=True, slots=True)
class Corpus:
    """Where the histories are: files first, then goal ids in a store."""

    files: tuple[Path, ...] = ()
    store_url: str | None = None
    goal_ids: tuple[str, ...] = ()
    allow_torn: bool = False
    """Skip a torn final line (a crashed writer) instead of refusing the file."""
    opened: EventStore | None = field(default=None, compare=False)
    """A store already open in this process to read the goal ids from, instead of opening
    ``store_url`` for each (a driver's own store; never sent to worker processes)."""

    def __len__(self) -> int:
        return len(self.files) + len(self.goal_ids)

    def name(self, index: int) -> str:
        """History number ``index``, as messages name it."""
        if index < len(self.files):
            return str(self.files[index])
        return f"goal {self.goal_ids[index - len(self.files)]}"

    def lines(self, index: int, decoder: LineDecoder | None = None) -> Iterator[tuple[int, Event]]:
        """``(line, event)`` pairs of history ``index``, streamed (a fresh pass each call)."""
        if index < len(self.files):  # the file's own stream (no generator in between)
            return read_history(self.files[index], allow_torn=self.allow_torn, decoder=decoder)
        return self._stored_lines(index)

    def _stored_lines(self, index: int) -> Iterator[tuple[int, Event]]:
        goal_id = self.goal_ids[index - len(self.files)]
        if self.opened is not None:
            yield from enumerate(self.opened.load(goal_id), start=1)
            return
        from governor.store.url import open_store  # noqa: PLC0415 - start-up: files need no store

        store = open_store(self.store_url, read_only=True)
        try:
            yield from enumerate(store.load(goal_id), start=1)
        finally:
            store.close()

    def events(self, index: int, *, checked: bool = True) -> Iterator[Event]:
        """The events of history ``index`` (a fresh pass each call), checked against the
        history format as they are read unless the caller checks them itself (``Trace.of``).

        Raises:
            HistoryError: while iterating, at the first line that breaks the history
                format, naming the history and the line.
        """
        if not checked:
            return (event for _, event in self.lines(index))
        return (event for _, event, _ in check_history(self.lines(index), source=self.name(index)))

    def read(self, index: int, *, checked: bool = True) -> list[Event]:
        """History number ``index``, whole."""
        return list(self.events(index, checked=checked))

    def __iter__(self) -> Iterator[list[Event]]:
        return (self.read(i) for i in range(len(self)))


def corpus_of(
    specs: Sequence[str], *, store_url: str | None = None, allow_torn: bool = False
) -> Corpus:
    """The histories ``specs`` name: files, folders of ``*.jsonl``, or goal ids in the store.

    No spec, or the word ``store``, means every goal of the store.

    Raises:
        NotFoundError: for a spec that is neither an existing path nor a goal of the store.
    """
    files = [
        f for spec in specs if spec != "store" and Path(spec).exists() for f in history_files(spec)
    ]
    named = [spec for spec in specs if spec != "store" and not Path(spec).exists()]
    everything = not specs or "store" in specs
    goal_ids: list[str] = []
    if named or everything:
        from governor.store.url import open_store  # noqa: PLC0415 - start-up: files need no store

        try:
            store = open_store(store_url, read_only=True)
        except NotFoundError as exc:
            if not named:
                raise
            raise NotFoundError(
                f"{named[0]}: no such file or folder, and no store to find such a goal in ({exc})"
            ) from None
        try:
            for spec in named:
                if store.last_seq(spec) == 0:
                    raise NotFoundError(
                        f"{spec}: no such file or folder, and no goal '{spec}' in the store"
                    )
            goal_ids = named + ([s.goal_id for s in store.goals()] if everything else [])
        finally:
            store.close()
    return Corpus(tuple(files), store_url, tuple(goal_ids), allow_torn)
