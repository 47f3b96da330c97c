"""What an agent call was seen to do: the raw observations classification reads, and usage.

Rules (SPEC §4, §12.5-§12.8; issue 25 §4; decision record 0014):
    * An ``RawObservation`` holds every fact the classification rules and the absence rules
      read about one failed try — its timeout or errno, the vendor's status and error
      code, what the adapter read as a refused credential or an account that cannot
      pay, whether any HTTP response came back, whether its upstream had answered
      before, and the summary of the stream the absence rule judged (``ClaudeFacts``,
      ``CodexFacts``) — so ``governor.core.reclassify`` can run today's rules over what
      was recorded. The failure text itself is the event's own ``error``.
    * It is recorded beside the evidence of a failed run (``Evidence.observation``,
      optional: histories written before it say nothing, read as "not recorded").
    * Every field is bounded: counts, a few kinds, short texts. Nothing of the prompt or
      the reply is kept, only kinds, counts and statuses.
    * ``Usage`` is what a vendor reported a call used (tokens), summed over the tries of
      a run and recorded with its cost (SPEC §12.5).
    * ``WireFacts`` is what governor's relay saw pass between the CLI and its vendor
      (SPEC §13.1): per request only metadata — method and path (no query), time to first
      byte, status, the error body's type and code, retry-after and the rate-limit /
      usage-window headers, the kinds of streamed events, whether any content streamed,
      token usage, bytes, and how the exchange ended. Never a body, a prompt, a key or a
      header value that holds one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from governor.core.numbers import MAX_COUNT, MAX_USD, Count, Int64, Usd, WaitS, reported

Kind = Annotated[str, Field(min_length=1, max_length=100)]
"""A short name: a line kind, an error code, an errno, a version."""
KINDS_KEPT: Final = 5
"""The most kinds one list keeps."""
STATUSES_KEPT: Final = 20
"""The most statuses one list keeps."""

Connection = Literal["unreachable", "reset"]
"""How a call failed without any HTTP response (SPEC §12.7): the vendor could not be
reached at all (connection refused, DNS, TLS, codex's "waiting for network"), or a
connection was made and then reset or closed before a response byte."""

BILLING_CODES: Final = frozenset({"insufficient_quota", "billing_error"})
"""Vendor error codes that say the account cannot pay (SPEC §12.6): OpenAI's
``insufficient_quota``, Anthropic's ``billing_error`` (claude's own envelope calls a
"credit balance is too low" refusal so too)."""
BILLING_STATUS: Final = 402
"""HTTP 402 Payment Required: the account cannot pay, whatever the body says."""


def counted(value: int) -> int:
    """A count as the facts keep it: at most ``MAX_COUNT`` (a hostile stream cannot make a
    fact the models refuse)."""
    return min(value, MAX_COUNT)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Usage(_Frozen):
    """Tokens a vendor reported a call (or the tries of a run) used."""

    input_tokens: Int64 | None = None
    output_tokens: Int64 | None = None
    cached_input_tokens: Int64 | None = None
    """Input tokens served from the vendor's cache (part of ``input_tokens``)."""


def add_usage(first: Usage | None, second: Usage | None) -> Usage | None:
    """Two reports summed, field by field (a field neither reported stays None)."""
    if first is None or second is None:
        return first or second

    def plus(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    return Usage(
        input_tokens=plus(first.input_tokens, second.input_tokens),
        output_tokens=plus(first.output_tokens, second.output_tokens),
        cached_input_tokens=plus(first.cached_input_tokens, second.cached_input_tokens),
    )


@dataclass(frozen=True, slots=True)
class Cost:
    """What the calls of one run reported they cost (SPEC §12.5), as an event records it."""

    usd: float | None = None
    usage: Usage | None = None

    def fields(self) -> dict[str, Any]:
        """The event's ``cost_usd`` and ``usage`` (a hostile number made storable)."""
        return {"cost_usd": reported(self.usd, MAX_USD), "usage": self.usage}


NO_COST: Final = Cost()


@dataclass(frozen=True, slots=True)
class Window:
    """An account's spent usage window, as a refused run records it (SPEC §13.2)."""

    account: str | None = None
    resets_at: datetime | None = None

    def fields(self) -> dict[str, Any]:
        """The event's ``account`` and ``resets_at`` (both or neither)."""
        if self.account is None or self.resets_at is None:
            return {"account": None, "resets_at": None}
        return {"account": self.account, "resets_at": self.resets_at}


NO_WINDOW: Final = Window()


class ClaudeFacts(_Frozen):
    """What Claude Code's ``stream-json`` stream showed, as the absence rule reads it
    (``governor.core.absence.claude_blockers``)."""

    lines: Int64 = 0
    malformed: Count = 0
    others: tuple[Kind, ...] = Field(default=(), max_length=KINDS_KEPT)
    """Kinds of lines the rule does not allow (``stream_event/<type>`` for a streamed
    event other than a request's start, ping, zero-output end or error)."""
    inits: Count = 0
    mcp_servers: Count = 0
    results: Count = 0
    after_result: Count = 0
    """Lines after the last ``result`` line."""
    is_error: bool = False
    status: Count | None = None
    """The result's ``api_error_status``."""
    synthetic_errors: tuple[Kind, ...] = Field(default=(), max_length=KINDS_KEPT)
    """The ``error`` of each message claude wrote itself (``authentication_failed``,
    ``billing_error``, ``server_error`` …)."""
    connection: Kind | None = None
    """The code of claude's "Unable to connect to API (CODE)" (``ConnectionRefused``,
    ``ECONNRESET``, a certificate error …): no HTTP response came back."""
    num_turns: Count | None = None
    output_tokens: Int64 | None = None
    """The result's output tokens."""
    cost_usd: Usd | None = None
    """The result's ``total_cost_usd``."""
    permission_denials: Count | None = None
    requests_begun: Count = 0
    """``message_start`` events: requests whose response the vendor began."""
    start_output_tokens: Int64 = 0
    """Output tokens the ``message_start`` events reported (Anthropic's placeholder)."""
    delta_output_tokens: Int64 = 0
    """Output tokens the ``message_delta`` events reported."""
    effects: bool = False
    """A tool block, a tool's input or a tool result was seen."""
    output: bool = False
    """Model text or thinking was seen."""
    refusal: bool = False
    """A ``refusal`` stop reason was seen."""
    overrides: tuple[Kind, ...] = Field(default=(), max_length=KINDS_KEPT)
    """What the profile overrode of the flags and variables the rule needs."""
    version: Kind | None = None
    retries: tuple[Count | None, ...] = Field(default=(), max_length=STATUSES_KEPT)
    """``error_status`` of each ``system/api_retry`` line."""
    retry_count: Count = 0
    rate_limit: Kind | None = None
    """The last ``rate_limit_event``'s status and type, as ``rejected five_hour``."""


class CodexFacts(_Frozen):
    """What ``codex exec --json`` and its content-free trace showed, as the absence rule
    reads it (``governor.core.absence.codex_proves_absence``)."""

    events: Int64 = 0
    malformed: Count = 0
    completed: bool = False
    failed: bool = False
    tool_items: Count = 0
    text_items: Count = 0
    unknown_items: Count = 0
    reconnecting: Count = 0
    """Codex's "Reconnecting… waiting for network" lines: no connection was made."""
    missing_key: Kind | None = None
    """The variable codex's own ``Missing environment variable`` names (its provider's
    key was not set: no request was sent)."""
    code: Kind | None = None
    """The vendor's error code of an in-stream refusal, read from the traced
    ``response.failed`` (or codex's own message for it): ``insufficient_quota``,
    ``rate_limit_exceeded`` …"""
    trace_complete: bool = False
    requests: Count = 0
    """Traced ``codex.api_request`` lines (one per HTTP attempt)."""
    statuses: tuple[Count | None, ...] = Field(default=(), max_length=STATUSES_KEPT)
    """Their HTTP statuses, in order (None: no response); the first ``STATUSES_KEPT``."""
    sse_events: Count = 0
    sse_kinds: tuple[Kind, ...] = Field(default=(), max_length=KINDS_KEPT)
    """The kinds of the traced server-sent events."""
    tool_calls: Count = 0
    sampling_requests: Count | None = None
    sampling_retries: Count | None = None


WireEnd = Literal[
    "answered", "refused", "dns", "tls", "connect", "reset", "timeout", "broken", "abandoned"
]
"""How one exchange through the relay ended (SPEC §13.1): a whole response with a status
below 400 and no in-stream error (``answered``); a status of 400 or more, or an in-stream
error event (``refused``); never connected — the name did not resolve (``dns``), the TLS
handshake failed (``tls``), the connection was refused (``connect``); connected, then
closed or reset before any response byte (``reset``) or no byte before the client gave up
(``timeout``); reset or closed mid-response (``broken``); the client went away
mid-response (``abandoned``)."""
NO_RESPONSE_ENDS: Final = frozenset({"dns", "tls", "connect", "reset", "timeout"})
"""Ends of an exchange that received no response byte."""
UNREACHED_ENDS: Final = frozenset({"dns", "tls", "connect"})
"""Ends of an exchange that never connected to the vendor."""
REQUESTS_KEPT: Final = 20
"""The most requests one ``WireFacts`` lists (the last ones; ``total`` counts them all)."""
LIMITS_KEPT: Final = 12
"""The most rate-limit headers one request keeps."""
UrlPath = Annotated[str, Field(min_length=1, max_length=200)]
"""A request path without its query."""
Limit = Annotated[str, Field(min_length=1, max_length=200)]
"""One rate-limit or usage-window header as ``name=value`` (never a credential)."""


class WireRequest(_Frozen):
    """One request the relay forwarded, as metadata (see ``WireEnd``)."""

    method: Kind
    path: UrlPath
    model: bool = False
    """It asked a model for a turn (``POST`` to ``…/messages``, ``…/responses``,
    ``…:generateContent`` …)."""
    ended: WireEnd
    detail: Kind | None = None
    """What said how it ended: an errno, a TLS reason, an in-stream error event."""
    ttfb_ms: Int64 | None = None
    """Milliseconds from the request's first byte to the response's first byte."""
    status: Count | None = None
    error_type: Kind | None = None
    """The error body's (or in-stream error event's) ``type``."""
    error_code: Kind | None = None
    """The error body's (or in-stream error event's) ``code``."""
    retry_after_s: WaitS | None = None
    resets_at: Int64 | None = None
    """When the vendor said the account's usage window reopens (Unix seconds)."""
    phrase: Kind | None = None
    """A known phrase the error's message held (``governor.core.wire_evidence.PHRASES``),
    never the message itself."""
    window: Kind | None = None
    """The usage window the vendor said was spent (``usage_limit_reached``,
    ``rejected five_hour`` …)."""
    limits: tuple[Limit, ...] = Field(default=(), max_length=LIMITS_KEPT)
    """The vendor's rate-limit and usage-window headers, ``name=value``."""
    events: tuple[Kind, ...] = Field(default=(), max_length=KINDS_KEPT * 4)
    """The kinds of streamed events seen, each once, in order of first appearance."""
    content: bool = False
    """A content block or an output item streamed (the model produced something)."""
    usage: Usage | None = None
    bytes_up: Int64 = 0
    bytes_down: Int64 = 0


class WireFacts(_Frozen):
    """What the relay saw of one agent call (SPEC §13.1): its requests, as metadata."""

    requests: tuple[WireRequest, ...] = Field(default=(), max_length=REQUESTS_KEPT)
    """The last ``REQUESTS_KEPT`` requests, in order."""
    total: Count = 0
    """Every request the relay forwarded."""
    responded: bool = False
    """Any response byte came back from the vendor in this call (reached is reached)."""
    content: bool = False
    """Any request of the call streamed a content block or an output item."""
    usage: Usage | None = None
    """The token usage of every request, summed."""
    agent: Kind | None = None
    """The CLI as its requests named it (the ``User-Agent`` product, e.g.
    ``claude-cli/2.1.197``)."""
    gated: bool = False
    """The relay refused a request itself because the goal's budget was spent."""
    own_effects: bool = False
    """The agent may act without its model (a ``command``): the wire proves no absence of
    effects, only what the vendor sent."""
    failed: Kind | None = None
    """The relay itself failed mid-call (a short reason)."""


class RawObservation(_Frozen):
    """The raw facts one failed try's classification read (see the module rules)."""

    timed_out: bool = False
    stopped: bool = False
    """governor ended the agent at its first sign of an unreachable vendor (SPEC §12.7)."""
    spawn_errno: Kind | None = None
    vendor_status: Count | None = None
    vendor_code: Kind | None = None
    """The vendor's structured error code, when the adapter read one."""
    credential: bool = False
    """The adapter read a structured credential refusal (the CLI's own envelope)."""
    billing: bool = False
    """The adapter read that the account cannot pay (a code, or the CLI's own envelope)."""
    connection: Connection | None = None
    connection_detail: Kind | None = None
    """What said so: an errno or the CLI's code (``ECONNREFUSED``, ``waiting for network``)."""
    answered_before: bool | None = None
    """Whether the upstream's health record had seen it answer before this call (None:
    not asked)."""
    claude: ClaudeFacts | None = None
    codex: CodexFacts | None = None
    wire: WireFacts | None = None
    """What the relay saw (SPEC §13.1); absent without a relay and in older histories."""
