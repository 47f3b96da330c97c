"""Claude Code's ``stream-json`` output: the fold of its lines into the facts the rules judge.

Rules (SPEC §11.8, §11.9, §12.6-§12.8; observed with ``CLAUDE_VERIFIED_VERSION``, see
``docs/harnesses.md``):
    * The stream is folded line by line in bounded space (``ClaudeEvents``): counters,
      flags, the first few kinds of each list, and the final ``result`` line.
      ``governor.exec.claude`` turns the fold into the core's ``ClaudeFacts``, which the
      absence rule (``governor.core.absence.claude_absence``) judges and the evidence
      records.
    * Streamed events (``stream_event``) of a request the vendor began and broke before
      any content — ``message_start``, ``ping``, ``message_delta``, ``message_stop``,
      ``error`` — are allowed lines (SPEC §12.8: Anthropic's usual overload is HTTP 200,
      ``message_start``, then an ``error`` event); any other streamed event is a line the
      rule does not allow (``stream_event/content_block_start`` …). A ``message_start``'s
      output tokens (Anthropic's placeholder) are kept apart from a ``message_delta``'s.
    * Claude's own close of a broken request is not the vendor's: after its synthetic
      error message, 2.1.332 prints a ``message_delta`` and ``message_stop`` of its own
      for the request the vendor began and broke (the vendor's stream ended at its
      ``error`` event). Such a ``message_delta`` that only repeats that request's
      ``message_start`` placeholder (no more output tokens than it) adds no output
      tokens; any other ``message_delta`` counts as it says (SPEC §12.8).
    * ``rate_limit_event`` (claude's report of its account's rate-limit state, from the
      vendor's response headers) says nothing of effects or output: it is recognised,
      its last ``status`` and ``rateLimitType`` kept for the ref, and it never refuses
      the claim nor counts as an unknown line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from governor.core.absence import (
    ALLOWED_STREAM_EVENTS,
)
from governor.core.observation import (
    KINDS_KEPT,
    STATUSES_KEPT,
    Usage,
)
from governor.exec.harness import json_event

CLAIM_LINES: Final = frozenset(
    {"system/init", "system/status", "system/api_retry", "rate_limit_event", "stream_event"}
)
"""Line kinds the absence rule allows besides the result and claude's synthetic error
(``stream_event``: only the events of ``ALLOWED_STREAM_EVENTS``)."""
SYNTHETIC_MODEL: Final = "<synthetic>"
"""The ``model`` of a message claude writes itself (an error, not model output)."""
TOOL_BLOCKS: Final = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
TEXT_BLOCKS: Final = frozenset({"text", "thinking", "redacted_thinking"})
_KEPT: Final = KINDS_KEPT
"""How many line kinds and synthetic errors a summary keeps."""
_RETRIES_KEPT: Final = STATUSES_KEPT


@dataclass(frozen=True, slots=True)
class ClaudeResult:
    """The fields of the final ``result`` line that governor reads."""

    subtype: str | None = None
    is_error: bool = False
    api_error_status: int | None = None
    result: str | None = None
    """The reply on success; claude's error text on failure."""
    num_turns: int | None = None
    session_id: str | None = None
    total_cost_usd: float | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None
    permission_denials: int | None = None
    usage: Usage | None = None
    """The tokens the result reports (input, output, read from the cache)."""


@dataclass(frozen=True, slots=True)
class ClaudeStream:
    """What a ``claude --output-format stream-json`` stream said, in bounded space."""

    lines: int = 0
    malformed: int = 0
    others: tuple[str, ...] = ()
    """Kinds (``type``, or ``system/<subtype>``) of lines the absence rule does not allow."""
    inits: int = 0
    mcp_servers: int = 0
    """MCP servers ``system/init`` listed (a list it could not read counts as one)."""
    version: str | None = None
    api_key_source: str | None = None
    retries: tuple[int | None, ...] = ()
    """``error_status`` of each ``system/api_retry`` (the first ``_RETRIES_KEPT``)."""
    retry_count: int = 0
    retry_delay_ms: float | None = None
    """``retry_delay_ms`` of the last ``system/api_retry``."""
    synthetic_errors: tuple[str, ...] = ()
    """The ``error`` of each message claude wrote itself (the first ``_KEPT``)."""
    rate_limit: str | None = None
    """The last ``rate_limit_event``'s ``status`` (``allowed``, ``allowed_warning``,
    ``rejected``) and ``rateLimitType``, as ``rejected five_hour``."""
    effects: bool = False
    """A tool block, a tool's input or a tool result was seen."""
    output: bool = False
    """Model text or thinking was seen."""
    refusal: bool = False
    """A ``refusal`` stop reason was streamed."""
    results: int = 0
    after_result: int = 0
    """Lines after the last ``result`` line."""
    result: ClaudeResult | None = None
    requests_begun: int = 0
    """``message_start`` events: requests whose response the vendor began."""
    start_output_tokens: int = 0
    delta_output_tokens: int = 0


class ClaudeEvents:
    """An incremental fold of the stream, fed one stdout line at a time as claude writes it."""

    def __init__(self) -> None:
        self.lines = self.malformed = self.inits = self.mcp_servers = 0
        self.retry_count = self.results = self.after_result = 0
        self.version: str | None = None
        self.api_key_source: str | None = None
        self.retry_delay_ms: float | None = None
        self.rate_limit: str | None = None
        self.effects = self.output = self.refusal = False
        self.requests_begun = self.start_output_tokens = self.delta_output_tokens = 0
        self._placeholder = 0  # the output tokens of the current request's message_start
        self._closed_by_claude = False  # its synthetic error came since that message_start
        self.result_line: ClaudeResult | None = None
        self._others: list[str] = []
        self._retries: list[int | None] = []
        self._synthetic: list[str] = []

    def feed(self, line: bytes | str) -> None:
        """Fold one stdout line (blank lines are ignored)."""
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        if not text.strip():
            return
        self.lines += 1
        self.after_result += 1 if self.results else 0
        event = json_event(text)
        if event is None:
            self.malformed += 1
            return
        kind = event["type"]
        if kind == "system":
            kind = f"system/{event.get('subtype')}"
        if _is_synthetic(event):
            _keep(self._synthetic, str(event["error"])[:100])
            self._closed_by_claude = self.requests_begun > 0
        elif kind == "result":
            self.results += 1
            self.after_result = 0
            self.result_line = _result(event)
        else:
            self._fold(kind, event)

    def _fold(self, kind: str, event: dict[str, Any]) -> None:
        if kind == "stream_event":
            streamed = event.get("event")
            streamed = streamed if isinstance(streamed, dict) else {}
            kind = _streamed_kind(streamed)
            self._stream_event(streamed)
        if kind not in CLAIM_LINES and kind not in self._others:
            _keep(self._others, kind)
        if kind == "system/init":
            servers = event.get("mcp_servers")
            self.inits += 1
            self.mcp_servers = len(servers) if isinstance(servers, list) else 1
            self.version = _text(event.get("claude_code_version"))
            self.api_key_source = _text(event.get("apiKeySource"))
        elif kind == "system/api_retry":
            self.retry_count += 1
            if len(self._retries) < _RETRIES_KEPT:
                self._retries.append(_int(event.get("error_status")))
            self.retry_delay_ms = _float(event.get("retry_delay_ms"))
        elif kind == "rate_limit_event":
            self.rate_limit = _rate_limit(event.get("rate_limit_info"))
        elif kind in ("assistant", "user"):
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else ():
                self._block(block.get("type") if isinstance(block, dict) else None)

    def _block(self, kind: object) -> None:
        if kind in TOOL_BLOCKS or kind == "tool_result":
            self.effects = True
        if kind in TOOL_BLOCKS or kind in TEXT_BLOCKS:
            self.output = True

    def _stream_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.requests_begun += 1
            message = event.get("message")
            usage = message.get("usage") if isinstance(message, dict) else None
            self._placeholder = _tokens(usage)
            self._closed_by_claude = False
            self.start_output_tokens += self._placeholder
        elif kind == "message_delta":
            tokens = _tokens(event.get("usage"))
            if not (self._closed_by_claude and tokens <= self._placeholder):
                self.delta_output_tokens += tokens
        block, delta = event.get("content_block"), event.get("delta")
        if isinstance(block, dict):
            self._block(block.get("type"))
        if isinstance(delta, dict):
            kind = delta.get("type")
            if kind == "input_json_delta":
                self._block("tool_use")
            elif kind in ("text_delta", "thinking_delta"):
                self.output = True
            if delta.get("stop_reason") == "refusal":
                self.refusal = True

    def result(self) -> ClaudeStream:
        """The summary so far."""
        return ClaudeStream(
            lines=self.lines,
            malformed=self.malformed,
            others=tuple(self._others),
            inits=self.inits,
            mcp_servers=self.mcp_servers,
            version=self.version,
            api_key_source=self.api_key_source,
            retries=tuple(self._retries),
            retry_count=self.retry_count,
            retry_delay_ms=self.retry_delay_ms,
            synthetic_errors=tuple(self._synthetic),
            rate_limit=self.rate_limit,
            effects=self.effects,
            output=self.output,
            refusal=self.refusal,
            results=self.results,
            after_result=self.after_result,
            result=self.result_line,
            requests_begun=self.requests_begun,
            start_output_tokens=self.start_output_tokens,
            delta_output_tokens=self.delta_output_tokens,
        )


def _streamed_kind(event: dict[str, Any]) -> str:
    """The kind a streamed event counts as: allowed (``CLAIM_LINES``) for a request the
    vendor began and broke before any content, else ``stream_event/<type>``."""
    kind = event.get("type")
    if kind in ALLOWED_STREAM_EVENTS:
        return "stream_event"
    return f"stream_event/{str(kind)[:60]}"


def _tokens(usage: object) -> int:
    value = usage.get("output_tokens") if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _keep(kept: list[Any], value: object) -> None:
    if len(kept) < _KEPT:
        kept.append(value)


def _is_synthetic(event: dict[str, Any]) -> bool:
    message = event.get("message")
    return (
        event.get("type") == "assistant"
        and isinstance(event.get("error"), str)
        and isinstance(message, dict)
        and message.get("model") == SYNTHETIC_MODEL
    )


def _text(value: object) -> str | None:
    return value[:100] if isinstance(value, str) else None


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e15:
        return None
    return float(value)


def _rate_limit(info: object) -> str:
    """``rate_limit_info`` as ``<status> <rateLimitType>`` (``?`` for what is missing)."""
    fields = info if isinstance(info, dict) else {}
    status, kind = _text(fields.get("status")), _text(fields.get("rateLimitType"))
    return f"{(status or '?')[:20]} {(kind or '?')[:40]}"


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _result(event: dict[str, Any]) -> ClaudeResult:
    usage = event.get("usage")
    denials = event.get("permission_denials")
    text = event.get("result")
    return ClaudeResult(
        subtype=_text(event.get("subtype")),
        is_error=event.get("is_error") is True,
        api_error_status=_int(event.get("api_error_status")),
        result=text if isinstance(text, str) else None,
        num_turns=_int(event.get("num_turns")),
        session_id=_text(event.get("session_id")),
        total_cost_usd=_float(event.get("total_cost_usd")),
        output_tokens=_int(usage.get("output_tokens")) if isinstance(usage, dict) else None,
        stop_reason=_text(event.get("stop_reason")),
        permission_denials=len(denials) if isinstance(denials, list) else None,
        usage=_usage(usage),
    )


def _usage(usage: object) -> Usage | None:
    """The result's token counts (input includes what was read from or written to the cache)."""
    if not isinstance(usage, dict):
        return None
    fresh, read, made = (
        _count(usage.get(key))
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    total = (
        None
        if fresh is None and read is None and made is None
        else (fresh or 0) + (read or 0) + (made or 0)
    )
    return Usage(
        input_tokens=total,
        output_tokens=_count(usage.get("output_tokens")),
        cached_input_tokens=read,
    )


def _count(value: object) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**62
    return value if ok else None  # type: ignore[return-value]


def parse_claude_stream(lines: Iterable[bytes | str]) -> ClaudeStream:
    """Summarise a whole ``claude -p --output-format stream-json`` stream."""
    events = ClaudeEvents()
    for line in lines:
        events.feed(line)
    return events.result()
