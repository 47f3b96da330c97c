"""The absence rules of the codex and claude adapters: when a failed call provably did nothing.

Rules (SPEC §4, §11.9, §12.6-§12.8; observations in ``docs/harnesses.md``):
    * The adapters fold what a CLI printed into facts (``governor.core.observation``);
      these pure functions judge the facts, so a recorded summary can be judged again
      (``governor.core.reclassify``). A positive claim names its source and reference.
    * **claude** (source ``claude:stream``): the claim holds only when the stream is,
      besides one final error ``result`` — a status of 429/5xx/529, 401/403 or 402, or
      claude's own not-logged-in, billing or "unable to connect" message, or a request
      the vendor began and broke with an ``error`` event before any content —
      ``num_turns`` 1, no permission denials, nothing but the allowed lines: ``system/init``
      listing no MCP server, ``system/status``, ``system/api_retry``, ``rate_limit_event``,
      claude's synthetic error, and per request the streamed ``message_start``, ``ping``,
      ``message_delta``/``message_stop`` with zero output tokens and ``error`` (SPEC §12.8).
      The output tokens reported must be no more than the ``message_start`` placeholders;
      a cost is allowed only for requests the vendor began (their input tokens, SPEC
      §12.5). A profile that overrides the stream flags or the fallback variable loses
      the claim. Any other line, any malformed line refuses it.
    * **codex** (source ``codex:jsonl``): the claim holds only when the JSONL holds no
      item but ``error`` diagnostics and did not complete, the trace is complete and shows
      one model request, no stream retry and no tool call, and that request was refused
      with an HTTP error, got no HTTP response at all (connection refused, reset, or
      codex's "waiting for network"), or was refused in-stream with a refusal code before
      any output (``insufficient_quota``, ``rate_limit_exceeded``: the vendor says it did
      not serve it). A missing key (no request sent) holds too.
    * **gemini** (source ``gemini:stream-json``): the claim holds only when the JSONL is
      one ``init``, the echo of the prompt (a ``message`` of role ``user``) and one final
      ``result`` of status ``error`` — no assistant message, no ``tool_use`` or
      ``tool_result``, no ``error`` line, nothing malformed, nothing after the result —
      whose stats report zero output tokens and zero tool calls, and the call was refused
      with a 429/5xx, a refused credential, or got no HTTP response at all.
    * Otherwise each says what it saw (effects, output, a declared refusal) or unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from governor.core.classify import CREDENTIAL_STATUSES
from governor.core.evidence import Evidence, Observation, nothing_happened
from governor.core.observation import BILLING_STATUS, ClaudeFacts, CodexFacts, RawObservation
from governor.core.upstream_text import is_upstream_status

NOT_LOGGED_IN: Final = "authentication_failed"
"""The ``error`` of claude's synthetic message when it has no valid credential."""
BILLING_ERROR: Final = "billing_error"
"""The ``error`` of claude's synthetic message when the account's credit is too low."""
ALLOWED_STREAM_EVENTS: Final = frozenset(
    {"message_start", "ping", "message_delta", "message_stop", "error"}
)
"""Streamed events of a request the vendor began and broke before any content (§12.8)."""
IN_STREAM_REFUSALS: Final = frozenset({"insufficient_quota", "rate_limit_exceeded"})
"""Codes of an in-stream ``response.failed`` that refuse a request before serving it."""
REFUSAL_SSE_KINDS: Final = frozenset(
    {"response.created", "response.in_progress", "response.failed", "response.completed"}
)
"""Traced server-sent event kinds of a response refused before any output."""


def claude_not_logged_in(facts: ClaudeFacts) -> bool:
    """Claude's own "not logged in" envelope: its synthetic error, and no vendor status."""
    return facts.results > 0 and facts.status is None and NOT_LOGGED_IN in facts.synthetic_errors


def claude_billing(facts: ClaudeFacts) -> bool:
    """Claude's own envelope says the account cannot pay (HTTP 402, or its ``billing_error``)."""
    return facts.status == BILLING_STATUS or BILLING_ERROR in facts.synthetic_errors


def _claude_status_fits(facts: ClaudeFacts) -> bool:
    status = facts.status
    return (
        is_upstream_status(status)
        or status in CREDENTIAL_STATUSES
        or claude_billing(facts)
        or claude_not_logged_in(facts)
        or (status is None and (facts.connection is not None or facts.requests_begun > 0))
    )


def claude_blockers(facts: ClaudeFacts) -> list[str]:
    """Why the claude absence rule refuses the claim (see the module rules); empty: it holds."""
    f = facts
    output_tokens = f.output_tokens
    checks = (
        (f.results != 1, f"{f.results} result lines"),
        (f.after_result > 0, "lines after the result"),
        (f.malformed > 0, f"{f.malformed} malformed lines"),
        (bool(f.others), "other lines: " + ", ".join(f.others)),
        (f.inits > 1, f"{f.inits} init lines"),
        (f.mcp_servers > 0, f"{f.mcp_servers} MCP servers configured"),
        (not f.is_error, "not an error result"),
        (not _claude_status_fits(f), f"status {f.status}"),
        (f.num_turns != 1, f"num_turns {f.num_turns}"),
        (
            output_tokens is None
            or output_tokens > f.start_output_tokens
            or f.delta_output_tokens > 0,
            f"output tokens {output_tokens}",
        ),
        (
            f.cost_usd is None or (f.cost_usd > 0 and f.requests_begun == 0),
            f"cost {f.cost_usd}",
        ),
        (f.permission_denials != 0, f"permission denials {f.permission_denials}"),
        (f.refusal, "a refusal stop reason"),
        (f.effects or f.output, "model output or a tool in the stream"),
    )
    return [f"the profile overrides {name}" for name in f.overrides] + [
        why for failed, why in checks if failed
    ]


def claude_absence(facts: ClaudeFacts) -> Evidence:
    """The failure evidence of a claude run (see the module rules)."""
    f = facts
    if f.lines == 0:
        return Evidence()
    blockers = claude_blockers(f)
    ref = _claude_ref(f, blockers)
    if not blockers:
        return nothing_happened("claude:stream", ref)
    turns = (f.num_turns or 0) > 1
    produced = (f.output_tokens or 0) > f.start_output_tokens or f.delta_output_tokens > 0
    return Evidence(
        effects="observed" if f.effects or turns else "unknown",
        output="observed" if f.output or turns or produced else "unknown",
        refusal="declared" if f.refusal else "unknown",
        source="claude:stream",
        ref=ref,
    )


def _claude_ref(f: ClaudeFacts, blockers: list[str]) -> str:
    parts = [f"claude-stream:lines 0-{f.lines - 1}", f"claude {f.version or '?'}"]
    if f.status is not None:
        parts.append(f"HTTP {f.status}")
    if f.connection is not None:
        parts.append(f"no HTTP response ({f.connection})")
    if f.requests_begun:
        parts.append(f"{f.requests_begun} responses begun, broken before any content")
    if f.retry_count:
        statuses = ",".join(str(s) for s in f.retries)
        parts.append(f"{f.retry_count} api_retry ({statuses})")
    if f.rate_limit is not None:
        parts.append(f"rate limit {f.rate_limit}")
    if blockers:
        parts.append("no claim: " + "; ".join(blockers))
    return "; ".join(parts)[:500]


def _codex_said(f: CodexFacts) -> str | None:
    """How the one model request was refused, when the facts prove it served nothing."""
    statuses = f.statuses
    if f.missing_key is not None and not statuses:
        return f"not sent (no {f.missing_key})"
    if f.sse_events == 0 and statuses and all(s is not None and s >= 400 for s in statuses):
        shown = ",".join(str(s) for s in statuses[:10]) + (",…" if len(statuses) > 10 else "")
        return f"HTTP {shown}"
    if f.sse_events == 0 and all(s is None for s in statuses) and (statuses or f.reconnecting):
        return "waiting for network" if f.reconnecting else "no HTTP response"
    if (
        f.code in IN_STREAM_REFUSALS
        and statuses == (200,)
        and set(f.sse_kinds) <= REFUSAL_SSE_KINDS
    ):
        return f"HTTP 200, refused in-stream ({f.code})"
    return None


def codex_proves_absence(facts: CodexFacts) -> str | None:
    """How the trace shows the call served nothing (the ref's words), or None."""
    f = facts
    says_nothing = (
        f.malformed == 0
        and not f.completed
        and (f.failed or f.reconnecting > 0)
        and f.tool_items == f.text_items == f.unknown_items == 0
    )
    stopped_early = f.reconnecting > 0 and f.sampling_requests is None
    one_request = stopped_early or (f.sampling_requests == 1 and f.sampling_retries == 0)
    if not (says_nothing and f.trace_complete and f.tool_calls == 0 and one_request):
        return None
    return _codex_said(f)


def codex_absence(facts: CodexFacts) -> Evidence:
    """The failure evidence of a codex run (see the module rules)."""
    f = facts
    ref = f"codex-jsonl:events 0-{max(f.events - 1, 0)}"
    said = codex_proves_absence(f)
    if said is not None:
        return Evidence(
            effects="absent",
            output="absent",
            refusal="absent",
            source="codex:jsonl",
            ref=f"{ref}; codex-trace:1 model request, {said}, {f.sse_events} stream events",
        )
    effects: Observation = "observed" if f.tool_items or f.tool_calls else "unknown"
    output: Observation = "observed" if f.text_items else "unknown"
    if f.events == 0 or effects == output == "unknown":
        return Evidence()
    return Evidence(effects=effects, output=output, source="codex:jsonl", ref=ref)


@dataclass(frozen=True, slots=True)
class GeminiFacts:
    """What a ``gemini --output-format stream-json`` run printed, as the rule reads it."""

    lines: int = 0
    malformed: int = 0
    inits: int = 0
    prompts: int = 0
    """``message`` lines of role ``user`` (gemini's echo of the prompt)."""
    others: tuple[str, ...] = ()
    """Kinds of any other line (``message/assistant``, ``tool_use``, ``error`` …)."""
    results: int = 0
    after_result: int = 0
    status: str | None = None
    """The last result's ``status`` (``success``, ``error``)."""
    output_tokens: int | None = None
    tool_calls: int | None = None
    effects: bool = False
    output: bool = False
    refused: str | None = None
    """How the adapter read the call was refused (``HTTP 503``, ``credential``, ``no HTTP
    response``), or None."""


def gemini_blockers(facts: GeminiFacts) -> list[str]:
    """Why the gemini absence rule refuses the claim (see the module rules); empty: it holds."""
    f = facts
    checks = (
        (f.results != 1, f"{f.results} result lines"),
        (f.after_result > 0, "lines after the result"),
        (f.malformed > 0, f"{f.malformed} malformed lines"),
        (f.inits != 1, f"{f.inits} init lines"),
        (f.prompts > 1, f"{f.prompts} user messages"),
        (bool(f.others), "other lines: " + ", ".join(f.others)),
        (f.status != "error", f"result status {f.status}"),
        (f.output_tokens != 0, f"output tokens {f.output_tokens}"),
        (f.tool_calls != 0, f"tool calls {f.tool_calls}"),
        (f.refused is None, "no refusal read"),
    )
    return [why for failed, why in checks if failed]


def gemini_absence(facts: GeminiFacts) -> Evidence:
    """The failure evidence of a gemini run (see the module rules)."""
    f = facts
    if f.lines == 0:
        return Evidence()
    blockers = gemini_blockers(f)
    parts = [f"gemini-stream-json:lines 0-{f.lines - 1}"]
    parts += [f.refused] if f.refused else []
    parts += ["no claim: " + "; ".join(blockers)] if blockers else []
    ref = "; ".join(parts)[:500]
    if not blockers:
        return nothing_happened("gemini:stream-json", ref)
    return Evidence(
        effects="observed" if f.effects else "unknown",
        output="observed" if f.output else "unknown",
        source="gemini:stream-json",
        ref=ref,
    )


def stream_absence(observation: RawObservation) -> Evidence | None:
    """The absence rule's verdict over a recorded observation's stream facts, if it has any."""
    if observation.claude is not None:
        return claude_absence(observation.claude)
    if observation.codex is not None:
        return codex_absence(observation.codex)
    return None
