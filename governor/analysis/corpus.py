"""A corpus of histories for tuning: files, folders of files, or every goal of a store.

Rules: histories are read lazily, one at a time (a 10,000-goal corpus never sits in
memory whole), and are checked like any other history (a bad line names itself).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from governor.core.events import Event
from governor.store.jsonl import history_files, read_history
from governor.store.url import open_store


@dataclass(frozen=True, slots=True)
class Corpus:
    """Where the histories are: files, or goal ids in a store."""

    files: tuple[Path, ...] = ()
    store_url: str | None = None
    goal_ids: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.files) + len(self.goal_ids)

    def names(self) -> list[str]:
        return [str(f) for f in self.files] + [f"goal {g}" for g in self.goal_ids]

    def read(self, index: int) -> list[Event]:
        """History number ``index`` (files first, then stored goals)."""
        if index < len(self.files):
            return [event for _, event in read_history(self.files[index])]
        store = open_store(self.store_url)
        try:
            return list(store.load(self.goal_ids[index - len(self.files)]))
        finally:
            store.close()

    def __iter__(self) -> Iterator[list[Event]]:
        return (self.read(i) for i in range(len(self)))


def corpus_of(specs: Sequence[str], *, store_url: str | None = None) -> Corpus:
    """Files and folders named in ``specs``; with no spec (or ``store``), every stored goal."""
    files = [f for spec in specs if spec != "store" for f in history_files(spec)]
    if specs and "store" not in specs:
        return Corpus(files=tuple(files))
    store = open_store(store_url)
    try:
        ids = tuple(summary.goal_id for summary in store.goals())
    finally:
        store.close()
    return Corpus(files=tuple(files), store_url=store_url, goal_ids=ids)
