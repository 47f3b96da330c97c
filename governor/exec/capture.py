"""What is kept of a child's output (``governor.exec.process``): memory bounded whatever it
writes — the head and tail of a stream, its byte count and a running sha256 — with its
lines handed to a callback and every chunk to a listener as it arrives."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

Listener = Callable[[bytes], None]
"""Told of every chunk a child writes on stdout or stderr."""


class Lines:
    """Splits a byte stream into lines, each cut to ``limit`` bytes, for a callback."""

    def __init__(self, emit: Callable[[bytes], None], limit: int) -> None:
        self._emit = emit
        self._limit = limit
        self._pending = bytearray()
        self._open = False

    def feed(self, data: bytes) -> None:
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self._keep(data[start:end])
            self._flush()
            start = end + 1
        if start < len(data):
            self._keep(data[start:])
            self._open = True

    def finish(self) -> None:
        """Deliver an unterminated last line, if there is one."""
        if self._open:
            self._flush()

    def _keep(self, piece: bytes) -> None:
        room = self._limit - len(self._pending)
        if room > 0:
            self._pending += piece[:room]

    def _flush(self) -> None:
        line = bytes(self._pending)
        self._pending.clear()
        self._open = False
        self._emit(line)


class Capture:
    """Bounded capture of one stream: head, tail, byte count and sha256."""

    def __init__(
        self,
        head_limit: int,
        tail_limit: int,
        lines: Lines | None = None,
        listener: Listener | None = None,
    ) -> None:
        self.listener = listener
        self.head = bytearray()
        self.total = 0
        self.sha = hashlib.sha256()
        self._head_limit = head_limit
        self._tail_limit = tail_limit
        self._tail = bytearray()
        self._lines = lines

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self.sha.update(data)
        room = self._head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
        if self._tail_limit > 0:
            self._tail += data
            if len(self._tail) > 2 * self._tail_limit:
                del self._tail[: -self._tail_limit]
        if self._lines is not None:
            self._lines.feed(data)
        if self.listener is not None:
            self.listener(data)

    def finish(self) -> None:
        if self._lines is not None:
            self._lines.finish()

    def tail(self) -> bytes:
        return bytes(self._tail[-self._tail_limit :]) if self._tail_limit > 0 else b""
