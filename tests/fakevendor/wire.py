"""Bytes on the wire for the fake vendor: server-sent events and JSON answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

Answer = tuple[int, dict[str, str], Iterator[bytes]]
"""An HTTP status, response headers and the body chunks (each flushed as it is written)."""

HANGUP: Answer = (0, {}, iter(()))
STALL: Answer = (0, {}, iter(()))
"""No answer until the client gives up: not a byte, then the connection closes."""
"""No answer at all: the server closes the connection before a response byte."""

MALFORMED_STREAM = (
    b"event: response.created\ndata: {not json at all\n\n"
    b"this line is not SSE\n\x00\x01\x02 garbage\n\n"
)
"""What a ``malformed`` step answers with status 200: broken JSON, then noise, then EOF."""


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event with a JSON payload."""
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def sse_answer(chunks: Iterator[bytes]) -> Answer:
    """A 200 event stream."""
    return 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}, chunks


def json_answer(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Answer:
    """A JSON answer with ``status``."""
    data = json.dumps(body).encode()
    return status, {"Content-Type": "application/json", **(headers or {})}, iter([data])
