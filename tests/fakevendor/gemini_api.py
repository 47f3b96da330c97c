"""The Google Gemini API dialect of the fake vendor: what ``gemini -p`` is answered.

gemini-cli (``@google/gemini-cli``, API-key auth, ``GOOGLE_GEMINI_BASE_URL``) sends
``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` for each turn (and, with
``model: auto``, a ``:generateContent`` routing call first) with the key in
``x-goog-api-key``, and reads server-sent events whose ``data:`` is one
``GenerateContentResponse`` each: ``candidates[0].content.parts`` (``text`` or
``functionCall``), a ``finishReason`` on the last, ``usageMetadata``. An error is a JSON
body ``{"error": {"code", "message", "status", "details"}}`` with the HTTP status.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from tests.fakevendor.scenario import PARTIAL_TEXT, Step
from tests.fakevendor.wire import MALFORMED_STREAM, Answer, json_answer

MODELS_PREFIX: Final = "/v1beta/models/"
TOOL_NAME: Final = "list_directory"
"""The read-only tool a ``tool_call`` step asks gemini to run (headless gemini runs it
without asking)."""

_ERRORS: Final = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "Request had invalid authentication credentials."),
    403: ("PERMISSION_DENIED", "The caller does not have permission"),
    404: ("NOT_FOUND", "models/fake is not found for API version v1beta."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: ("INTERNAL", "An internal error has occurred."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}
API_KEY_INVALID: Final = "API key not valid. Please pass a valid API key."


def is_model_route(route: str) -> bool:
    """Whether ``route`` asks a model for content (and so consumes a step)."""
    return route.startswith(MODELS_PREFIX) and route.endswith(
        (":streamGenerateContent", ":generateContent")
    )


def model_of(route: str) -> str:
    """The model a ``/v1beta/models/<model>:<method>`` route names."""
    return route.removeprefix(MODELS_PREFIX).split(":", 1)[0]


def answer(step: Step, model: str, streaming: bool) -> Answer:
    """The HTTP answer for one step (streamed as SSE when the route streams)."""
    if step.kind == "status":
        return _error(step)
    if step.kind == "malformed":
        return _sse(iter([MALFORMED_STREAM]))
    if step.kind == "tool_call":
        return _sse(
            _chunks(model, [{"functionCall": {"name": TOOL_NAME, "args": {"dir_path": "."}}}])
        )
    if step.kind == "fail_after_text":
        return _sse(_fail_after_text(model, step.status))
    if step.kind == "stream_error":  # HTTP 200, then an error object before any content
        return _sse(iter([_event(error_body(503, step.code, step.message))]))
    parts = [{"text": step.text}]
    if not streaming:
        return json_answer(200, _response(model, parts, "STOP"))
    return _sse(_chunks(model, parts))


def neutral() -> Answer:
    """What a request that consumes no step gets (``countTokens`` and the like)."""
    return json_answer(200, {"totalTokens": 12})


def error_body(code: int, reason: str | None = None, message: str | None = None) -> dict[str, Any]:
    """Google's error envelope for HTTP ``code``; ``reason`` adds an ``ErrorInfo`` detail."""
    status, usual = _ERRORS.get(code, ("UNKNOWN", "Unknown error."))
    details = []
    if reason is not None:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        )
    body = {"code": code, "message": message or usual, "status": status, "details": details}
    return {"error": body}


def _error(step: Step) -> Answer:
    message = step.message
    if step.code == "API_KEY_INVALID" and message is None:
        message = API_KEY_INVALID
    headers = {} if step.retry_after_s is None else {"retry-after": str(step.retry_after_s)}
    return json_answer(step.status, error_body(step.status, step.code, message), headers)


def _usage(output_tokens: int) -> dict[str, int]:
    return {
        "promptTokenCount": 120,
        "candidatesTokenCount": output_tokens,
        "totalTokenCount": 120 + output_tokens,
    }


def _response(model: str, parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": _usage(30), "modelVersion": model}


def _event(data: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(data)}\r\n\r\n".encode()


def _sse(chunks: Iterator[bytes]) -> Answer:
    return 200, {"Content-Type": "text/event-stream"}, chunks


def _chunks(model: str, parts: list[dict[str, Any]]) -> Iterator[bytes]:
    """The reply in a few events: text cut in pieces of 40 characters, the last one
    carrying ``finishReason``."""
    pieces: list[dict[str, Any]] = []
    for part in parts:
        text = part.get("text")
        if isinstance(text, str):
            pieces += [{"text": text[i : i + 40]} for i in range(0, len(text), 40)] or [part]
        else:
            pieces.append(part)
    for index, piece in enumerate(pieces):
        last = index == len(pieces) - 1
        yield _event(_response(model, [piece], "STOP" if last else None))


def _fail_after_text(model: str, code: int) -> Iterator[bytes]:
    """Part of a reply, then an error object in the stream (the connection then closes)."""
    yield _event(_response(model, [{"text": PARTIAL_TEXT}], None))
    yield _event(error_body(code))
