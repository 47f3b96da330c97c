"""The agent calls a runner has in flight: what each serves, since when, its last output line.

Rules:
    * The runner opens a call (``Calls.running``) around every planner or worker run and
      closes it when the run returns; a live view (``governor run`` on a terminal) reads
      ``snapshot`` whenever it redraws. Nothing here is recorded: the events are the
      truth, this is only what a person watching sees. At each lease heartbeat the
      runner copies each call's telling line into its agent's row (``Agents.beat``), for
      the pages that read the store: one write per heartbeat, never one per line.
    * The last line an agent wrote comes from its processes' output as it arrives
      (``governor.exec.process.listening``), stdout and stderr alike. Only a short tail
      of bytes is kept per call; a line is what follows the last newline (or carriage
      return: a progress bar's latest frame), decoded leniently, never interpreted.
    * Thread-safe: workers run in threads of their own; the view reads from another.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Final

from governor.core.text import telling_line
from governor.exec.process import listening

TAIL_BYTES: Final = 2048
"""Bytes of output kept per call, enough for its last line or two."""


@dataclass(slots=True)
class _Call:
    key: str
    item: str
    """The plan (``plan p2``) or the work item (``p2-api``)."""
    attempt: int | None
    started: float
    tail: bytearray = field(default_factory=bytearray)


@dataclass(frozen=True, slots=True)
class RunningCall:
    """One call in flight, as a live view shows it."""

    item: str
    attempt: int | None
    elapsed_s: float
    last_line: str
    """The last non-empty line the agent wrote (raw text: escape it before printing)."""


class Calls:
    """The calls of one runner that are in flight."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._calls: dict[str, _Call] = {}

    @contextmanager
    def running(self, key: str, item: str, attempt: int | None = None) -> Iterator[None]:
        """A call under ``key`` (a plan id or a run id) for as long as the block runs; the
        output of the processes spawned in it (this thread) is its output."""
        call = _Call(key, item, attempt, self._clock())
        with self._lock:
            self._calls[key] = call

        def heard(data: bytes) -> None:
            with self._lock:
                call.tail += data
                if len(call.tail) > 2 * TAIL_BYTES:
                    del call.tail[:-TAIL_BYTES]

        try:
            with listening(heard):
                yield
        finally:
            with self._lock:
                self._calls.pop(key, None)

    def snapshot(self) -> list[RunningCall]:
        """The calls in flight, oldest first."""
        now = self._clock()
        with self._lock:
            calls = [(c.item, c.attempt, c.started, bytes(c.tail)) for c in self._calls.values()]
        return [
            RunningCall(item, attempt, max(now - started, 0.0), last_line(tail))
            for item, attempt, started, tail in sorted(calls, key=lambda c: c[2])
        ]

    def telling_lines(self) -> dict[str, str]:
        """Each call's latest telling line (``governor.core.text.telling_line`` of its
        tail: a status or failing test if one shows, else its last line), by key; calls
        that wrote nothing yet are left out. Raw agent text: redact and quote it."""
        with self._lock:
            tails = [(c.key, bytes(c.tail)) for c in self._calls.values()]
        lines = {key: telling_line(_text(tail), "") for key, tail in tails}
        return {key: line for key, line in lines.items() if line}


def _text(tail: bytes) -> str:
    return tail[-TAIL_BYTES:].decode("utf-8", "replace").replace("\r", "\n")


def last_line(tail: bytes) -> str:
    """The last non-empty line of some output (a carriage return ends a line too)."""
    for line in reversed(_text(tail).split("\n")):
        if line.strip():
            return line.strip()
    return ""
