"""Issue 24, item 10: the web view's Host check read the last of two ``Host`` headers, so a
request naming an allowed host and a foreign one was answered. A request names one Host:
two are refused with 400 (a raw socket request to the real ``governor ui``)."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest

from tests.ui.serve import Server


def raw_request(server: Server, *hosts: str) -> tuple[int, bytes]:
    """``GET /`` with exactly these Host headers, as bytes on a socket; the status and body."""
    where = urlsplit(server.url)
    head = "GET / HTTP/1.1\r\n" + "".join(f"Host: {h}\r\n" for h in hosts)
    with socket.create_connection((where.hostname, where.port), timeout=30) as conn:
        conn.sendall((head + "Connection: close\r\n\r\n").encode("latin-1"))
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.parametrize(
    "hosts",
    [
        ("evil.example", "127.0.0.1"),
        ("127.0.0.1", "evil.example"),
        ("127.0.0.1", "127.0.0.1"),
    ],
    ids=["foreign then allowed", "allowed then foreign", "allowed twice"],
)
def test_two_host_headers_are_refused(ui: Server, hosts: tuple[str, ...]) -> None:
    status, body = raw_request(ui, *hosts)
    assert status == 400, body
    assert b"one Host" in body


def test_one_allowed_host_header_is_answered(ui: Server) -> None:
    port = urlsplit(ui.url).port
    assert raw_request(ui, f"127.0.0.1:{port}")[0] == 200
    assert raw_request(ui, "evil.example")[0] == 421
