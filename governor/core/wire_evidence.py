"""What the relay's wire evidence says about a failed call: the facts §4's rules read first.

Rules (SPEC §13.1-§13.4; docs/classification.md "Evidence from the wire"):
    * Only model requests count (``WireRequest.model``); a call with none (the CLI failed
      before asking a model) has no wire reading and is judged by its text alone.
    * The **last** model request says how the call ended with its vendor: its status when
      400 or more; an in-stream refusal after a 200 (Anthropic's ``error`` event, a
      Responses ``response.failed``) as the status its code stands for
      (``IN_STREAM_STATUS``); the error body's code (``type`` when it names a known code,
      else ``code``, else ``type``); no response at all — never connected (DNS, TLS,
      refused: ``unreachable``), or connected and reset, closed or timed out before any
      byte, or broken mid-response (``reset``).
    * A known phrase of the error's message (``PHRASES``) stands for its code: Anthropic's
      "credit balance is too low" comes as ``invalid_request_error``.
    * A usage window (codex ``usage_limit_reached``; Anthropic's
      ``anthropic-ratelimit-unified-status: rejected``) carries the reset the vendor named.
    * **Absence from the wire**: no model request of the call streamed a content block or
      an output item, no model request was answered in full, and the CLI's own stream
      observed no tool, text, hook or MCP server → effects, output and refusal absent,
      source ``relay:wire``. The model produced nothing, so nothing acted on it — which
      holds for an agent whose every act comes from its model (codex, claude), never for
      one that may act alone (``WireFacts.own_effects``: a command keeps its own evidence).
    * Reached is reached: any response byte in the call means the vendor was reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from governor.core.evidence import Evidence, nothing_happened
from governor.core.observation import (
    BILLING_CODES,
    NO_RESPONSE_ENDS,
    UNREACHED_ENDS,
    ClaudeFacts,
    CodexFacts,
    Connection,
    WireFacts,
    WireRequest,
)

IN_STREAM_STATUS: Final = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "api_error": 500,
    "rate_limit_exceeded": 429,
    "server_is_overloaded": 503,
    "slow_down": 429,
    "server_error": 500,
}
"""The HTTP status an in-stream refusal code stands for (SPEC §12.8, §13.3)."""
WINDOW_CODE: Final = "usage_limit_reached"
"""Codex's code for a ChatGPT plan's spent usage window (SPEC §13.2)."""
NOT_INCLUDED_CODE: Final = "usage_not_included"
"""Codex's code for a plan that does not include the product at all (SPEC §13.2)."""
PHRASES: Final = {"credit balance is too low": "billing_error"}
"""Known phrases of an error's message, lower-case, and the code each stands for: Anthropic
refuses an account out of credit with HTTP 400 ``invalid_request_error`` and only its
message says why (SPEC §12.6)."""
CREDENTIAL_CODES: Final = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED"})
"""Codes that refuse the credential under another status: Google answers a bad key with
HTTP 400 and this ``reason`` (a refused credential, like a 401)."""
KNOWN_CODES: Final = frozenset({*IN_STREAM_STATUS, *BILLING_CODES, WINDOW_CODE, NOT_INCLUDED_CODE})
SOURCE: Final = "relay:wire"


@dataclass(frozen=True, slots=True)
class WireReading:
    """How the call ended with its vendor, as the wire showed it (see the module rules)."""

    status: int | None = None
    code: str | None = None
    connection: Connection | None = None
    detail: str | None = None
    resets_at: int | None = None
    """When the vendor said the account's usage window reopens (Unix seconds)."""
    retry_after_s: float | None = None
    window: bool = False
    """The vendor said the account's usage window is spent."""


def model_requests(facts: WireFacts) -> tuple[WireRequest, ...]:
    """The requests that asked a model for a turn."""
    return tuple(r for r in facts.requests if r.model)


def code_of(request: WireRequest) -> str | None:
    """The error code a request was refused with (see the module rules; a known phrase of
    its message first)."""
    if request.phrase in PHRASES:
        return PHRASES[request.phrase]
    kinds = (request.error_type, request.error_code)
    known = next((k for k in kinds if k in KNOWN_CODES), None)
    return known or request.error_code or request.error_type


def status_of(request: WireRequest, code: str | None) -> int | None:
    """The refusal status of a request: its HTTP error, or its in-stream refusal's."""
    if request.status is not None and request.status >= 400:
        return request.status
    if request.ended == "refused" and code is not None:
        return IN_STREAM_STATUS.get(code)
    return None


def connection_of(request: WireRequest) -> Connection | None:
    """How a request got no (whole) response: never connected, or reset before it ended."""
    if request.ended in UNREACHED_ENDS:
        return "unreachable"
    if request.ended in NO_RESPONSE_ENDS or (request.ended == "broken" and not request.content):
        return "reset"
    return None


def read_wire(facts: WireFacts | None) -> WireReading | None:
    """The wire's reading of the call, or None when it carried no model request."""
    requests = model_requests(facts) if facts is not None else ()
    if not requests:
        return None
    last = requests[-1]
    code = code_of(last)
    window = code == WINDOW_CODE or last.window is not None
    return WireReading(
        status=status_of(last, code),
        code=code,
        connection=connection_of(last),
        detail=last.detail or (last.ended if last.ended != "refused" else None),
        resets_at=last.resets_at if window else None,
        retry_after_s=last.retry_after_s,
        window=window,
    )


def _stream_acted(stream: ClaudeFacts | CodexFacts | None) -> bool:
    """The CLI's own stream shows something happened that no model request explains."""
    if isinstance(stream, ClaudeFacts):
        hooks = any("hook" in kind for kind in stream.others)
        denied = bool(stream.permission_denials)
        return stream.effects or stream.output or stream.mcp_servers > 0 or hooks or denied
    if isinstance(stream, CodexFacts):
        return stream.tool_items > 0 or stream.text_items > 0 or stream.tool_calls > 0
    return False


def wire_absence(
    facts: WireFacts, text: Evidence, stream: ClaudeFacts | CodexFacts | None
) -> Evidence:
    """The failure evidence with the wire first (see the module rules)."""
    requests = model_requests(facts)
    if not requests or facts.failed is not None or facts.total > len(facts.requests):
        return text
    if facts.content:
        return Evidence(
            effects=text.effects if text.effects == "observed" else "unknown",
            output="observed",
            refusal=text.refusal if text.refusal == "declared" else "unknown",
            source=SOURCE,
            ref=_ref(facts, requests),
            partial=text.partial,
        )
    observed = "observed" in (text.effects, text.output) or text.refusal == "declared"
    answered = any(r.ended == "answered" for r in requests)
    if observed or answered or facts.own_effects or _stream_acted(stream):
        return text
    return nothing_happened(SOURCE, _ref(facts, requests)).model_copy(
        update={"partial": text.partial}
    )


def _ref(facts: WireFacts, requests: tuple[WireRequest, ...]) -> str:
    last = requests[-1]
    status = f" {last.status}" if last.status is not None else ""
    code = code_of(last)
    what = f"{last.ended}{status}" + (f" {code}" if code else "")
    produced = "content streamed" if facts.content else "no content streamed"
    return f"{len(requests)} model requests, {produced}; last {what}"[:500]
