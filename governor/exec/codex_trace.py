"""Codex's content-free telemetry on stderr (``codex_otel.trace_safe``): what the trace says.

Rules (observations in ``docs/harnesses.md``, "The trace"):
    * governor asks for it (``RUST_LOG=codex_otel.trace_safe=info``); its lines carry
      names, sizes and statuses, never prompt or tool content, and are kept out of the
      recorded failure text (``without_trace``).
    * A trace read from a cut stderr is marked incomplete: it proves nothing.
    * ``codex.api_request``: one per HTTP attempt, with its status and ``attempt``
      (> 0: codex retried the request before it); ``codex.sse_event``: an event received;
      ``codex.tool_call_received`` / ``codex.tool_result``: a tool call;
      ``codex.turn_profile``: the turn's model requests and stream retries.
    * A traced ``response.failed`` carries the vendor's error object: its ``code``
      (``insufficient_quota``, ``rate_limit_exceeded`` …) is the structured code of an
      in-stream refusal (SPEC §12.6). Text deltas are not traced: the kinds of the
      traced events cannot tell text streamed before a failure from none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

TRACE_MARKER: Final = b"codex_otel.trace_safe:"
"""What marks a telemetry line on codex's stderr."""
_TRACE_LINE: Final = re.compile(
    r'codex_otel\.trace_safe: event\.name="(?P<name>[^"]+)"(?P<rest>.*)'
)
_TRACE_FIELD: Final = re.compile(r"(?<![\w.])(?P<key>[\w.]+)=(?P<value>[^\s\"]+)")
_ERROR_CODE: Final = re.compile(r'"error":\{[^{}]*?"code":"(?P<code>[A-Za-z0-9_.-]{1,64})"')
"""The ``code`` of the error object a traced ``response.failed`` carries."""


@dataclass(frozen=True, slots=True)
class CodexTrace:
    """What codex's content-free telemetry on stderr (``codex_otel.trace_safe``) said."""

    complete: bool = False
    """The whole of stderr was read (nothing was cut from its start)."""
    request_statuses: tuple[int | None, ...] = ()
    """``http.response.status_code`` of every traced ``codex.api_request``, in order."""
    retried: tuple[int | None, ...] = ()
    """Statuses of the requests codex retried itself: each one before an ``attempt`` > 0."""
    sse_events: int = 0
    """``codex.sse_event`` lines: server-sent events codex received."""
    tool_calls: int = 0
    """``codex.tool_call_received`` and ``codex.tool_result`` lines."""
    sampling_requests: int | None = None
    """``sampling_request_count`` of the last ``codex.turn_profile``."""
    sampling_retries: int | None = None
    """``sampling_retry_count`` of the last ``codex.turn_profile``."""
    sse_kinds: tuple[str, ...] = ()
    """The distinct ``event.kind`` of the traced server-sent events (the first five)."""
    code: str | None = None
    """The error ``code`` of the last traced ``response.failed``."""


def parse_codex_trace(stderr: str, *, complete: bool) -> CodexTrace:
    """Read the ``codex_otel.trace_safe`` lines of codex's stderr.

    Args:
        stderr: codex's stderr (all of it, or its tail).
        complete: whether ``stderr`` is all of it; a cut trace proves nothing.
    """
    statuses: list[int | None] = []
    retried: list[int | None] = []
    kinds: list[str] = []
    sse = tools = 0
    code: str | None = None
    profile: dict[str, str] = {}
    for match in _TRACE_LINE.finditer(stderr):
        name, fields = match["name"], dict(_fields_of(match["rest"]))
        if name == "codex.api_request":
            if (_int(fields.get("attempt")) or 0) > 0 and statuses:
                retried.append(statuses[-1])
            statuses.append(_int(fields.get("http.response.status_code")))
        elif name == "codex.sse_event":
            sse += 1
            kind = fields.get("event.kind", "?")[:100]
            if kind not in kinds and len(kinds) < 5:
                kinds.append(kind)
            found = _ERROR_CODE.search(match["rest"]) if kind == "response.failed" else None
            code = found["code"] if found else code
        elif name in ("codex.tool_call_received", "codex.tool_result"):
            tools += 1
        elif name == "codex.turn_profile":
            profile = fields
    return CodexTrace(
        complete=complete,
        request_statuses=tuple(statuses),
        retried=tuple(retried),
        sse_events=sse,
        tool_calls=tools,
        sampling_requests=_int(profile.get("sampling_request_count")),
        sampling_retries=_int(profile.get("sampling_retry_count")),
        sse_kinds=tuple(kinds),
        code=code,
    )


def _fields_of(rest: str) -> Iterable[tuple[str, str]]:
    return ((m["key"], m["value"]) for m in _TRACE_FIELD.finditer(rest))


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def without_trace(stderr: bytes) -> bytes:
    """Codex's stderr without the telemetry lines governor asked for (kept out of errors)."""
    lines = stderr.splitlines(keepends=True)
    return b"".join(line for line in lines if TRACE_MARKER not in line)
