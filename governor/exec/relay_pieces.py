"""The relay's reader of an upstream connection: the bytes each socket read returned, handed on whole.

Rules (SPEC §13.1; decision record 0027, "The byte path"):
    * asyncio's ``StreamReader`` copies every byte twice on its way through (into one
      growing buffer as it arrives, out of it as ``read`` answers); a 50 MB stream crosses
      the relay's CPU budget that way. ``Pieces`` keeps the ``bytes`` objects the transport
      read, in order, and ``read`` hands the oldest one over as it is (split only when it
      is larger than asked for): no copy in the relay between the socket and the client.
    * It is a ``StreamReader`` for its protocol and writer (``open_pieces``), and answers
      the calls the relay makes — ``read``, ``readuntil`` (a proxy's tunnel answer),
      ``at_eof``, ``exception`` — with ``StreamReader``'s meaning: a connection lost with
      an error raises it from the next read, even with bytes still held; a clean end reads
      the bytes held, then ``b""``.
    * Flow control as ``StreamReader``'s: reading from the socket pauses while more than
      twice ``limit`` bytes are held, and resumes once ``limit`` or fewer are.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
from collections.abc import Iterable
from typing import SupportsIndex

Streams = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class Pieces(asyncio.StreamReader):
    """A stream reader that hands on whole the pieces its transport read (see the rules)."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit=limit)
        self._held: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._ended = False
        self._error: Exception | None = None
        self._waiting: asyncio.Future[None] | None = None
        self._link: asyncio.BaseTransport | None = None
        self._paused = False
        self._cap = limit

    # --- what the protocol calls ---------------------------------------------------------

    def set_transport(self, transport: asyncio.BaseTransport) -> None:
        self._link = transport

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        piece = data if isinstance(data, bytes) else bytes(data)  # a transport gives bytes
        if piece:
            self._held.append(piece)
            self._size += len(piece)
            if self._size > 2 * self._cap and not self._paused:
                self._pause(True)
        self._wake()

    def feed_eof(self) -> None:
        self._ended = True
        self._wake()

    def set_exception(self, exc: Exception) -> None:
        self._error = exc
        self._wake()

    # --- what the relay calls ------------------------------------------------------------

    def exception(self) -> Exception | None:
        return self._error

    def at_eof(self) -> bool:
        return self._ended and not self._held

    async def read(self, n: int = -1) -> bytes:
        """The oldest piece held (at most ``n`` bytes of it when ``n`` ≥ 0), waiting for
        one; ``b""`` once the connection ended cleanly and nothing is held."""
        if n == 0:
            return b""
        while True:
            if self._error is not None:
                raise self._error
            if self._held:
                break
            if self._ended:
                return b""
            await self._wait()
        piece = self._held.popleft()
        if 0 <= n < len(piece):
            self._held.appendleft(piece[n:])
            piece = piece[:n]
        self._size -= len(piece)
        if self._paused and self._size <= self._cap:
            self._pause(False)
        return piece

    async def readuntil(self, separator: bytes = b"\n") -> bytes:  # type: ignore[override]
        """The bytes up to and including ``separator`` (the rest stays held)."""
        data = b""
        while (at := data.find(separator)) < 0:
            if len(data) > self._cap:
                self._give_back(data)
                raise asyncio.LimitOverrunError("the separator was not found", len(data))
            piece = await self.read()
            if not piece:
                raise asyncio.IncompleteReadError(data, None)
            data += piece
        end = at + len(separator)
        self._give_back(data[end:])
        return data[:end]

    # --- inside ----------------------------------------------------------------------------

    def _give_back(self, data: bytes) -> None:
        if data:
            self._held.appendleft(data)
            self._size += len(data)

    def _pause(self, pause: bool) -> None:
        link = self._link
        if isinstance(link, asyncio.ReadTransport):
            self._paused = pause
            if pause:
                link.pause_reading()
            else:
                link.resume_reading()

    def _wake(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None and not waiting.done():
            waiting.set_result(None)

    async def _wait(self) -> None:
        if self._paused:
            self._pause(False)
        self._waiting = asyncio.get_running_loop().create_future()
        try:
            await self._waiting
        finally:
            self._waiting = None


async def open_pieces(
    host: str,
    port: int,
    *,
    limit: int,
    context: ssl.SSLContext | None,
    server_hostname: str | None,
) -> Streams:
    """``asyncio.open_connection`` with ``Pieces`` as its reader."""
    loop = asyncio.get_running_loop()
    reader = Pieces(limit)
    protocol = asyncio.StreamReaderProtocol(reader)
    transport, _ = await loop.create_connection(
        lambda: protocol, host, port, ssl=context, server_hostname=server_hostname
    )
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)
