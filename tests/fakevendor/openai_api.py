"""The OpenAI Responses API dialect of the fake vendor: what ``codex exec`` is answered.

Codex sends ``POST /v1/responses`` with ``stream: true`` and reads server-sent events
whose JSON payload carries a ``type``: ``response.created``, ``response.output_item.added``,
``response.output_text.delta``, ``response.output_item.done`` (a finished ``message`` or
``function_call`` item), and finally ``response.completed`` (or ``response.failed``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fakevendor.scenario import PARTIAL_TEXT, Step
from tests.fakevendor.wire import MALFORMED_STREAM, Answer, json_answer, sse, sse_answer

RESPONSE_ID = "resp_fake_1"
MESSAGE_ID = "msg_fake_1"
CALL_ID = "call_fake_1"
TOOL_NAME = "exec_command"
"""Codex 0.171's shell tool (``unified exec``); its argument is ``cmd``."""

_ERRORS = {
    401: ("invalid_api_key", "Incorrect API key provided."),
    403: ("permission_denied", "You are not allowed to use this model."),
    429: ("rate_limit_exceeded", "Rate limit reached for requests"),
    500: ("server_error", "The server had an error while processing your request."),
    503: ("server_error", "The service is temporarily unavailable."),
}
_MESSAGES = {
    "insufficient_quota": (
        "You exceeded your current quota, please check your plan and billing details. For "
        "more information on this error, read the docs: "
        "https://platform.openai.com/docs/guides/error-codes/api-errors."
    ),
    "rate_limit_exceeded": (
        "Rate limit reached for gpt-5-codex in organization org-fake on tokens per min (TPM): "
        "Limit 30000, Used 30000, Requested 120. Please try again in 1.5s."
    ),
    "server_error": "The server had an error while processing your request.",
}
"""The usual message of an error code given without one (``status``, ``stream_error``)."""


def answer(step: Step) -> Answer:
    """The HTTP answer for one step."""
    if step.kind == "status":
        return _error(step)
    if step.kind == "malformed":
        return sse_answer(iter([MALFORMED_STREAM]))
    if step.kind == "tool_call":
        return sse_answer(_tool_call(step.tool, step.command))
    if step.kind == "fail_after_text":
        return sse_answer(_fail_after_text(step.status))
    if step.kind == "stream_error":
        return sse_answer(_stream_error(step.code or "server_error", step.message))
    return sse_answer(_reply(step.text))


def _error(step: Step) -> Answer:
    code, message = _ERRORS.get(step.status, ("server_error", "The server had an error."))
    if step.code is not None:
        code, message = step.code, step.message or _MESSAGES.get(step.code, message)
    body = {
        "error": {
            "message": message,
            "type": code,
            "code": code,
            "param": None,
            **dict(step.fields),
        }
    }
    headers = {} if step.retry_after_s is None else {"Retry-After": str(step.retry_after_s)}
    return json_answer(step.status, body, {**headers, **dict(step.headers)})


def _created() -> bytes:
    return sse(
        "response.created", {"type": "response.created", "response": _response("in_progress")}
    )


def _response(status: str, **extra: Any) -> dict[str, Any]:
    return {"id": RESPONSE_ID, "object": "response", "status": status, "output": [], **extra}


def _usage() -> dict[str, Any]:
    return {
        "input_tokens": 120,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 30,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 150,
    }


def _completed() -> bytes:
    payload = {"type": "response.completed", "response": _response("completed", usage=_usage())}
    return sse("response.completed", payload)


def _message(text: str, status: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}] if text else []
    return {
        "type": "message",
        "id": MESSAGE_ID,
        "role": "assistant",
        "status": status,
        "content": content,
    }


def _item_event(kind: str, item: dict[str, Any]) -> bytes:
    return sse(kind, {"type": kind, "output_index": 0, "item": item})


def _delta(text: str) -> bytes:
    payload = {
        "type": "response.output_text.delta",
        "item_id": MESSAGE_ID,
        "output_index": 0,
        "content_index": 0,
        "delta": text,
    }
    return sse("response.output_text.delta", payload)


def _reply(text: str) -> Iterator[bytes]:
    yield _created()
    yield _item_event("response.output_item.added", _message("", "in_progress"))
    for start in range(0, len(text), 40):
        yield _delta(text[start : start + 40])
    yield _item_event("response.output_item.done", _message(text, "completed"))
    yield _completed()


def _tool_call(tool: str | None, command: str) -> Iterator[bytes]:
    arguments = json.dumps({"cmd": command} if tool is None else {})
    item = {
        "type": "function_call",
        "id": "fc_fake_1",
        "call_id": CALL_ID,
        "name": tool or TOOL_NAME,
        "arguments": arguments,
        "status": "completed",
    }
    yield _created()
    yield _item_event("response.output_item.added", {**item, "arguments": ""})
    yield _item_event("response.output_item.done", item)
    yield _completed()


def _stream_error(code: str, message: str | None) -> Iterator[bytes]:
    """A response created, then ``response.failed`` with ``code`` before any output."""
    yield _created()
    error = {"code": code, "message": message or _MESSAGES.get(code, "The server had an error.")}
    failed = _response("failed", error=error)
    yield sse("response.failed", {"type": "response.failed", "response": failed})


def _fail_after_text(code: int) -> Iterator[bytes]:
    yield _created()
    yield _item_event("response.output_item.added", _message("", "in_progress"))
    yield _delta(PARTIAL_TEXT)
    error_code, message = _ERRORS.get(code, ("server_error", "The server had an error."))
    failed = _response("failed", error={"code": error_code, "message": f"{message} ({code})"})
    yield sse("response.failed", {"type": "response.failed", "response": failed})
