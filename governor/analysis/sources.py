"""Where analysed histories come from: a file, a folder of files, or a goal in a store.

Rules: every source streams its events (bounded memory), and every problem names the
source and line it is on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from governor.core.codec import LineDecoder
from governor.core.events import Event
from governor.errors import NotFoundError
from governor.store.jsonl import history_files, read_history
from governor.store.url import open_store


@dataclass(slots=True)
class Source:
    """One history, readable as many times as needed."""

    name: str
    _open: Callable[[LineDecoder], Iterator[tuple[int, Event]]]
    decoder: LineDecoder = field(default_factory=LineDecoder)

    def lines(self) -> Iterator[tuple[int, Event]]:
        """``(line, event)`` pairs; a fresh pass each call (its notes land in ``decoder``)."""
        self.decoder = LineDecoder(self.name)
        yield from self._open(self.decoder)

    def events(self) -> Iterator[Event]:
        return (event for _, event in self.lines())


def _file(path: Path, allow_torn: bool) -> Source:
    return Source(
        str(path), lambda decoder: read_history(path, allow_torn=allow_torn, decoder=decoder)
    )


def _stored(goal_id: str, store_url: str | None) -> Source:
    def read(_decoder: LineDecoder) -> Iterator[tuple[int, Event]]:
        store = open_store(store_url)
        try:
            yield from enumerate(store.load(goal_id), start=1)
        finally:
            store.close()

    return Source(f"goal {goal_id}", read)


def sources(spec: str, *, store_url: str | None = None, allow_torn: bool = False) -> list[Source]:
    """The histories ``spec`` names: a file, a folder of ``*.jsonl``, else a goal id in the store.

    Raises:
        NotFoundError: when it is neither an existing path nor a goal of the store.
    """
    path = Path(spec)
    if path.exists():
        return [_file(p, allow_torn) for p in history_files(path)]
    store = open_store(store_url)
    try:
        known = store.last_seq(spec) > 0
    finally:
        store.close()
    if not known:
        raise NotFoundError(f"{spec}: no such file or folder, and no goal '{spec}' in the store")
    return [_stored(spec, store_url)]
