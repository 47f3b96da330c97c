"""Where one HTTP/1.1 response body ends, read while its bytes pass through the relay unchanged.

Rules (SPEC §13.1; decision record 0027, "The byte path"; RFC 9112 §6):
    * The relay parses only a response's head (h11); its body is forwarded as the vendor
      framed it, byte for byte, chunk sizes and trailers included. ``BodyEnd`` reads that
      framing as it passes to know where the message ends (keep-alive) and hands the
      payload — the bytes a client would decode — to the watcher, never re-framed.
    * No body: a response to ``HEAD``, a 204 or a 304. ``Transfer-Encoding`` ending in
      ``chunked``: chunks up to the empty one and its trailer. ``Content-Length``: that many
      bytes. Otherwise the body runs until the vendor closes (the client is then told
      ``Connection: close``).
    * Malformed framing (a chunk size that is not hex, a chunk not followed by its line
      end, a size line or trailer larger than the limits) raises ``BadFraming``: the
      exchange is broken, as a reset mid-response is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Final, Literal

SIZE_LINE_LIMIT: Final = 4096
"""The longest chunk-size line (with its extensions) accepted."""
TRAILER_LIMIT: Final = 64 * 1024
"""The most bytes of trailer fields accepted after the last chunk."""
_HEX: Final = re.compile(rb"[0-9A-Fa-f]{1,15}")

Framing = Literal["none", "length", "chunked", "close"]
Sink = Callable[[bytes, int, int], None]
"""Where the payload goes as it passes (the watcher's ``body``): ``data[start:end]``, given as
the buffer and its bounds (a 50 MB stream is not copied piece by piece to be looked at)."""


class BadFraming(Exception):
    """The response body's framing cannot be read."""


def framing_of(
    method: bytes, status: int, headers: Iterable[tuple[bytes, bytes]]
) -> tuple[Framing, int]:
    """How a response body is framed (see the module rules) and its length, if one."""
    if method == b"HEAD" or status in (204, 304) or status < 200:
        return "none", 0
    coding: bytes | None = None
    length: int | None = None
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"transfer-encoding":
            coding = value
        elif lowered == b"content-length" and value.strip().isdigit():
            length = int(value.strip())
    if coding is not None:
        last = coding.split(b",")[-1].strip().lower()
        return ("chunked", 0) if last == b"chunked" else ("close", 0)
    if length is not None:
        return ("length", length) if length else ("none", 0)
    return "close", 0


class BodyEnd:
    """Reads one body's framing as its bytes pass (see the module rules)."""

    def __init__(self, framing: Framing, length: int, sink: Sink) -> None:
        self.framing = framing
        self.sink = sink
        self.done = framing == "none"
        self._left = length
        self._state: Literal["size", "data", "line_end", "trailer"] = "size"
        self._line = b""
        self._trailer = 0

    def feed(self, data: bytes) -> int:
        """Take bytes as they came from the vendor: how many of them belong to the body (any
        after that follow the message and are not forwarded)."""
        if self.done or not data:
            return 0
        if self.framing == "close":
            self.sink(data, 0, len(data))
            return len(data)
        if self.framing == "length":
            take = min(self._left, len(data))
            self.sink(data, 0, take)
            self._left -= take
            self.done = self._left == 0
            return take
        return self._chunked(data)

    def closed(self) -> bool:
        """The vendor closed its side: whether the body was whole (close-delimited, or done)."""
        if self.framing == "close":
            self.done = True
        return self.done

    def _chunked(self, data: bytes) -> int:
        at, size = 0, len(data)
        while at < size and not self.done:
            if self._state == "data":
                take = min(self._left, size - at)
                self.sink(data, at, at + take)
                at += take
                self._left -= take
                if self._left == 0:
                    self._state = "line_end"
                continue
            end = data.find(b"\n", at)
            if end < 0:
                self._grow(data[at:])
                return size
            line = self._line + data[at:end] if self._line else data[at:end]
            self._line = b""
            at = end + 1
            self._line_done(line)
        return at

    def _grow(self, piece: bytes) -> None:
        self._line += piece
        limit = TRAILER_LIMIT if self._state == "trailer" else SIZE_LINE_LIMIT
        if len(self._line) > limit:
            raise BadFraming("a chunk line longer than the relay accepts")

    def _line_done(self, line: bytes) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if self._state == "line_end":
            if line:
                raise BadFraming("a chunk not followed by its line end")
            self._state = "size"
        elif self._state == "size":
            digits = line.split(b";", 1)[0].strip(b" \t")
            if _HEX.fullmatch(digits) is None:
                raise BadFraming("a chunk size that is not hexadecimal")
            self._left = int(digits, 16)
            self._state = "data" if self._left else "trailer"
        else:
            self._trailer += len(line) + 2
            if self._trailer > TRAILER_LIMIT:
                raise BadFraming("trailer fields larger than the relay accepts")
            self.done = not line
