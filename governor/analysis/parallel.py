"""Parallel passes over a corpus: one task per history, in worker processes, in order.

A task is a top-level function ``task(state, index, events) -> T``; ``state`` is sent to
each worker once (forked on POSIX). Results come back in the corpus's order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

from governor.analysis.corpus import Corpus
from governor.core.events import Event

T = TypeVar("T")
Task = Callable[[Any, int, list[Event]], T]

_STATE: tuple[Corpus, Callable[[Any, int, list[Event]], Any], Any, bool] | None = None


def _init(
    corpus: Corpus, task: Callable[[Any, int, list[Event]], Any], state: Any, checked: bool
) -> None:
    global _STATE  # noqa: PLW0603 - what a worker process receives once
    _STATE = (corpus, task, state, checked)


def _run(indices: Sequence[int]) -> list[Any]:
    assert _STATE is not None
    corpus, task, state, checked = _STATE
    return [task(state, i, corpus.read(i, checked=checked)) for i in indices]


def chunks(n: int, size: int) -> list[list[int]]:
    return [list(range(i, min(i + size, n))) for i in range(0, n, size)]


def map_histories(
    corpus: Corpus,
    task: Callable[[Any, int, list[Event]], T],
    state: Any,
    *,
    workers: int,
    checked: bool = False,
) -> list[T]:
    """``task(state, i, events of history i)`` for every history, in ``workers`` processes."""
    parts: dict[int, list[Any]] = {}
    pieces = chunks(len(corpus), max(1, min(200, len(corpus) // (workers * 4) or 1)))
    if workers <= 1 or len(pieces) <= 1 or corpus.opened is not None:  # an open store stays here
        _init(corpus, task, state, checked)
        parts = {i: _run(piece) for i, piece in enumerate(pieces)}
    else:
        context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=_init, initargs=(corpus, task, state, checked)
        ) as pool:
            futures = {pool.submit(_run, piece): i for i, piece in enumerate(pieces)}
            for future in as_completed(futures):
                parts[futures[future]] = future.result()
    return [r for i in range(len(pieces)) for r in parts[i]]
