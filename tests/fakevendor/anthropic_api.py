"""The Anthropic Messages API dialect of the fake vendor: what ``claude -p`` is answered.

Claude Code sends ``POST /v1/messages`` (``stream: true``) and reads server-sent events:
``message_start``, then per content block ``content_block_start`` /
``content_block_delta`` / ``content_block_stop``, then ``message_delta`` (stop reason and
usage) and ``message_stop``, with ``ping`` events between. A failure inside a stream is an
``error`` event: Anthropic often reports an overload that way, after HTTP 200 and
``message_start`` (``stream_error("overloaded_error")``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakevendor.scenario import PARTIAL_TEXT, Step
from tests.fakevendor.wire import MALFORMED_STREAM, Answer, json_answer, sse, sse_answer

MESSAGE_ID = "msg_fake_1"
TOOL_USE_ID = "toolu_fake_1"
TOOL_NAME = "Bash"

_MESSAGES = {
    "overloaded_error": "Overloaded",
    "billing_error": "There's an issue with your billing or payment information.",
    "api_error": "Internal server error",
}
"""The usual message of an error type given without its status (``stream_error``)."""
CREDIT_TOO_LOW = (
    "Your credit balance is too low to access the Anthropic API. "
    "Please go to Plans & Billing to upgrade or purchase credits."
)
"""What Anthropic answers (HTTP 400, ``invalid_request_error``) to an account out of credit."""

_ERRORS = {
    401: ("authentication_error", "invalid x-api-key"),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    400: ("invalid_request_error", "Invalid request."),
    402: ("billing_error", "There's an issue with your billing or payment information."),
    404: ("not_found_error", "Not found."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your rate limit."),
    500: ("api_error", "Internal server error"),
    503: ("api_error", "Service unavailable"),
    529: ("overloaded_error", "Overloaded"),
}


def answer(step: Step, model: str, streaming: bool) -> Answer:
    """The HTTP answer for one step; ``model`` is echoed back as the vendor would."""
    if step.kind == "status":
        return _error(step)
    if step.kind == "malformed":
        return sse_answer(iter([MALFORMED_STREAM]))
    if step.kind == "tool_call":
        return sse_answer(_tool_call(model, step.command))
    if step.kind == "fail_after_text":
        return sse_answer(_fail_after_text(model, step.status))
    if step.kind == "stream_error":
        return sse_answer(_stream_error(model, step.code or "overloaded_error", step.message))
    if not streaming:
        return json_answer(200, _message(model, [_text_block(step.text)], "end_turn"))
    return sse_answer(_reply(model, step.text))


def neutral(model: str) -> Answer:
    """A small complete non-streamed reply for requests that consume no step."""
    return json_answer(200, _message(model, [_text_block("ok")], "end_turn"))


def _error_body(code: int, kind: str | None = None, message: str | None = None) -> dict[str, Any]:
    usual_kind, usual_message = _ERRORS.get(code, ("api_error", "Internal server error"))
    if kind is not None and message is None:
        message = _MESSAGES.get(kind, usual_message) if kind != usual_kind else usual_message
    body = {"type": kind or usual_kind, "message": message or usual_message}
    return {"type": "error", "error": body, "request_id": "req_fake_1"}


def _error(step: Step) -> Answer:
    headers = {} if step.retry_after_s is None else {"retry-after": str(step.retry_after_s)}
    headers["request-id"] = "req_fake_1"
    headers.update(step.headers)
    body = _error_body(step.status, step.code, step.message)
    body["error"].update(step.fields)
    return json_answer(step.status, body, headers)


def _usage(output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": 120,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _message(model: str, content: list[dict[str, Any]], stop: str | None) -> dict[str, Any]:
    return {
        "id": MESSAGE_ID,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _usage(30 if stop else 1),
    }


def _start(model: str) -> bytes:
    return sse("message_start", {"type": "message_start", "message": _message(model, [], None)})


def _block(index: int, block: dict[str, Any], deltas: list[dict[str, Any]]) -> Iterator[bytes]:
    yield sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": block},
    )
    for delta in deltas:
        payload = {"type": "content_block_delta", "index": index, "delta": delta}
        yield sse("content_block_delta", payload)
    yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


def _stop(reason: str) -> Iterator[bytes]:
    delta = {"stop_reason": reason, "stop_sequence": None}
    yield sse("message_delta", {"type": "message_delta", "delta": delta, "usage": _usage(30)})
    yield sse("message_stop", {"type": "message_stop"})


def _reply(model: str, text: str) -> Iterator[bytes]:
    yield _start(model)
    chunks = [text[i : i + 40] for i in range(0, len(text), 40)] or [""]
    yield from _block(0, _text_block(""), [{"type": "text_delta", "text": c} for c in chunks])
    yield from _stop("end_turn")


def _tool_call(model: str, command: str) -> Iterator[bytes]:
    block = {"type": "tool_use", "id": TOOL_USE_ID, "name": TOOL_NAME, "input": {}}
    arguments = json.dumps({"command": command, "description": "Run a command"})
    yield _start(model)
    yield from _block(0, block, [{"type": "input_json_delta", "partial_json": arguments}])
    yield from _stop("tool_use")


def _stream_error(model: str, kind: str, message: str | None) -> Iterator[bytes]:
    """Anthropic's usual overload: a response begun (``message_start``, ``ping``), then
    an ``error`` event before any content block."""
    yield _start(model)
    yield sse("ping", {"type": "ping"})
    yield sse("error", _error_body(529, kind, message))


def _fail_after_text(model: str, code: int) -> Iterator[bytes]:
    yield _start(model)
    yield sse(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": _text_block("")},
    )
    delta = {"type": "text_delta", "text": PARTIAL_TEXT}
    yield sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield sse("error", _error_body(code))
