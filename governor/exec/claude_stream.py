"""Claude Code's ``stream-json`` output: the fold of its lines and the absence rule over it.

Rules (SPEC §11.8, §11.9; observed with ``CLAUDE_VERIFIED_VERSION``, see
``docs/harnesses.md``):
    * The stream is folded line by line in bounded space (``ClaudeEvents``): counters,
      flags, the first few kinds of each list, and the final ``result`` line.
    * **Absence** is claimed only when the whole stream is, besides one final ``result``
      line — an error with status 429/5xx/529 or 401/403 (or claude's own
      not-logged-in error), ``num_turns`` 1, zero output tokens, zero cost, no permission
      denials —, nothing but ``CLAIM_LINES`` (``system/init`` listing no MCP server,
      ``system/status``, ``system/api_retry``, ``rate_limit_event``) and claude's own
      synthetic error message.
      Any other line — a streamed event, a tool call or result, a hook, a line type this
      rule does not know — and any malformed line refuses it: a changed format charges.
      ``claim_blockers`` names every reason, and the evidence's ref carries them.
    * Otherwise the stream says what it saw: a tool block, a tool's input or a tool
      result -> effects observed; streamed text or thinking, or output tokens -> output
      observed; a ``refusal`` stop reason -> refusal declared; the rest unknown (charged).
      ``num_turns > 1`` means a turn completed and another began (how tool results go
      back in print mode): effects and output observed.
    * ``rate_limit_event`` (claude's report of its account's rate-limit state, from the
      vendor's response headers) says nothing of effects or output: it is recognised,
      its last ``status`` and ``rateLimitType`` kept for the ref, and it never refuses
      the claim nor counts as an unknown line.
    * Credentials: status 401/403, or claude's own "not logged in" (a synthetic message
      with ``error: authentication_failed`` and no status) -> the remedy a person needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from governor.core.classify import CREDENTIAL_STATUSES, is_upstream_status
from governor.core.evidence import Evidence, Observation, RefusalObservation, nothing_happened
from governor.exec.harness import json_event

CLAIM_LINES: Final = frozenset(
    {"system/init", "system/status", "system/api_retry", "rate_limit_event"}
)
"""Line kinds the absence rule allows besides the result and claude's synthetic error."""
SYNTHETIC_MODEL: Final = "<synthetic>"
"""The ``model`` of a message claude writes itself (an error, not model output)."""
NOT_LOGGED_IN: Final = "authentication_failed"
"""The ``error`` of claude's synthetic message when it has no valid credential."""
TOOL_BLOCKS: Final = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
TEXT_BLOCKS: Final = frozenset({"text", "thinking", "redacted_thinking"})
_KEPT: Final = 5
"""How many line kinds and synthetic errors a summary keeps."""
_RETRIES_KEPT: Final = 20


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
        elif kind == "result":
            self.results += 1
            self.after_result = 0
            self.result_line = _result(event)
        else:
            self._fold(kind, event)

    def _fold(self, kind: str, event: dict[str, Any]) -> None:
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
        elif kind == "stream_event" and isinstance(event.get("event"), dict):
            self._stream_event(event["event"])

    def _block(self, kind: object) -> None:
        if kind in TOOL_BLOCKS or kind == "tool_result":
            self.effects = True
        if kind in TOOL_BLOCKS or kind in TEXT_BLOCKS:
            self.output = True

    def _stream_event(self, event: dict[str, Any]) -> None:
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
        )


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
    )


def parse_claude_stream(lines: Iterable[bytes | str]) -> ClaudeStream:
    """Summarise a whole ``claude -p --output-format stream-json`` stream."""
    events = ClaudeEvents()
    for line in lines:
        events.feed(line)
    return events.result()


def not_logged_in(stream: ClaudeStream) -> bool:
    """Claude's own "not logged in" envelope: its synthetic error, and no vendor status."""
    result = stream.result
    return (
        result is not None
        and result.api_error_status is None
        and NOT_LOGGED_IN in stream.synthetic_errors
    )


def claim_blockers(stream: ClaudeStream) -> list[str]:
    """Why the absence rule refuses the claim (see the module rules); empty: it holds."""
    r = stream.result or ClaudeResult()
    status = r.api_error_status
    checks = (
        (stream.results != 1, f"{stream.results} result lines"),
        (stream.after_result > 0, "lines after the result"),
        (stream.malformed > 0, f"{stream.malformed} malformed lines"),
        (bool(stream.others), "other lines: " + ", ".join(stream.others)),
        (stream.inits > 1, f"{stream.inits} init lines"),
        (stream.mcp_servers > 0, f"{stream.mcp_servers} MCP servers configured"),
        (not r.is_error, "not an error result"),
        (
            not (is_upstream_status(status) or status in CREDENTIAL_STATUSES)
            and not not_logged_in(stream),
            f"status {status}",
        ),
        (r.num_turns != 1, f"num_turns {r.num_turns}"),
        (r.output_tokens != 0, f"output tokens {r.output_tokens}"),
        (r.total_cost_usd != 0, f"cost {r.total_cost_usd}"),
        (r.permission_denials != 0, f"permission denials {r.permission_denials}"),
    )
    return [why for failed, why in checks if failed]


def claude_evidence(stream: ClaudeStream, *, overrides: Iterable[str] = ()) -> Evidence:
    """The failure evidence of a claude run (see the module rules)."""
    if stream.lines == 0:
        return Evidence()
    blockers = [f"the profile overrides {name}" for name in overrides]
    blockers += claim_blockers(stream)
    ref = _ref(stream, blockers)
    if not blockers:
        return nothing_happened("claude:stream", ref)
    r = stream.result or ClaudeResult()
    turns = (r.num_turns or 0) > 1
    effects: Observation = "observed" if stream.effects or turns else "unknown"
    output: Observation = (
        "observed" if stream.output or turns or (r.output_tokens or 0) > 0 else "unknown"
    )
    refusal: RefusalObservation = (
        "declared" if stream.refusal or r.stop_reason == "refusal" else "unknown"
    )
    return Evidence(
        effects=effects, output=output, refusal=refusal, source="claude:stream", ref=ref
    )


def _ref(stream: ClaudeStream, blockers: list[str]) -> str:
    r = stream.result or ClaudeResult()
    parts = [f"claude-stream:lines 0-{stream.lines - 1}", f"claude {stream.version or '?'}"]
    if r.api_error_status is not None:
        parts.append(f"HTTP {r.api_error_status}")
    if stream.retry_count:
        statuses = ",".join(str(s) for s in stream.retries)
        parts.append(f"{stream.retry_count} api_retry ({statuses})")
    if stream.rate_limit is not None:
        parts.append(f"rate limit {stream.rate_limit}")
    if blockers:
        parts.append("no claim: " + "; ".join(blockers))
    return "; ".join(parts)[:500]


def claude_credential(stream: ClaudeStream) -> str | None:
    """The remedy when the stream shows the credential was refused, else None."""
    r = stream.result
    if r is None or not r.is_error:
        return None
    if not_logged_in(stream):
        return (
            "claude found no credential: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in "
            "governor's environment, or log in with `claude /login` as the user governor "
            "runs as"
        )
    if r.api_error_status in CREDENTIAL_STATUSES:
        source = stream.api_key_source or "its credential"
        return (
            f"the vendor answered HTTP {r.api_error_status} to the key from {source}: set a "
            "valid ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or log in again with "
            "`claude /login`"
        )
    return None
