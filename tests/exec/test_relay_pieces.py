"""The relay's upstream reader on real loopback sockets: the bytes, the ends and the flow control
of asyncio's ``StreamReader``, with each socket read handed on whole."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import threading

import pytest

from governor.exec.relay_pieces import Pieces, open_pieces

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"
BODY = os.urandom(3_000_000)
DEADLINE_S = 60


def _serve(send) -> tuple[socket.socket, threading.Thread]:  # type: ignore[no-untyped-def]
    server = socket.create_server(("127.0.0.1", 0))

    def run() -> None:
        conn, _ = server.accept()
        send(conn)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return server, thread


def _whole(conn: socket.socket) -> None:
    with conn:
        conn.recv(1)  # the client is connected and has asked
        conn.sendall(HEAD + BODY)


def _reset(conn: socket.socket) -> None:
    conn.recv(1)  # the client is connected and has asked
    conn.sendall(HEAD + BODY[:1000])
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


async def _read_all(reader: asyncio.StreamReader) -> tuple[bytes, bytes, type | None]:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), DEADLINE_S)
    got, error = [], None
    try:
        while piece := await asyncio.wait_for(reader.read(256 * 1024), DEADLINE_S):
            assert len(piece) <= 256 * 1024
            got.append(piece)
    except ConnectionError as exc:
        error = type(exc)
    return head, b"".join(got), error


async def _both(send) -> list[tuple[bytes, bytes, type | None]]:  # type: ignore[no-untyped-def]
    results = []
    for opener in ("pieces", "streams"):
        server, thread = _serve(send)
        port = server.getsockname()[1]
        if opener == "pieces":
            reader, writer = await open_pieces(
                "127.0.0.1", port, limit=1 << 16, context=None, server_hostname=None
            )
            assert isinstance(reader, Pieces)
        else:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 16)
        writer.write(b"?")
        results.append(await _read_all(reader))
        assert reader.at_eof() or results[-1][2] is not None
        writer.close()
        thread.join(DEADLINE_S)
        server.close()
    return results


def test_a_whole_response_reads_the_same_as_through_a_stream_reader() -> None:
    pieces, streams = asyncio.run(_both(_whole))
    assert pieces == streams == (HEAD, BODY, None)


def test_a_reset_mid_body_is_raised_from_a_read_as_a_stream_reader_raises_it() -> None:
    for head, body, error in asyncio.run(_both(_reset)):
        assert head == HEAD
        assert BODY[:1000].startswith(body)
        assert error is ConnectionResetError


def test_reading_pauses_while_twice_the_limit_is_held_and_resumes_once_read() -> None:
    async def run() -> None:
        server, thread = _serve(_whole)
        reader, writer = await open_pieces(
            "127.0.0.1", server.getsockname()[1], limit=1 << 16, context=None, server_hostname=None
        )
        writer.write(b"?")
        transport = writer.transport
        assert isinstance(transport, asyncio.ReadTransport)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DEADLINE_S
        while transport.is_reading():
            assert loop.time() < deadline, "never paused"
            await asyncio.sleep(0.01)
        head, body, error = await _read_all(reader)
        assert (head, body, error) == (HEAD, BODY, None)
        writer.close()
        thread.join(DEADLINE_S)
        server.close()

    asyncio.run(run())


def test_a_separator_never_found_within_the_limit_is_an_overrun() -> None:
    async def run() -> None:
        server, thread = _serve(_whole)
        reader, writer = await open_pieces(
            "127.0.0.1", server.getsockname()[1], limit=16, context=None, server_hostname=None
        )
        writer.write(b"?")
        with pytest.raises(asyncio.LimitOverrunError):
            await asyncio.wait_for(reader.readuntil(b"never in the head"), DEADLINE_S)
        writer.close()
        thread.join(DEADLINE_S)
        server.close()

    asyncio.run(run())
