"""The ``claude`` harness: ``claude -p --output-format stream-json``, run once per agent call.

Rules (SPEC §4, §7, §11.8, §11.9; decision record 0213; observations in ``docs/harnesses.md``):
    * Invocation: ``claude -p --output-format stream-json --verbose
      --include-partial-messages --include-hook-events [--model M] *profile.args``, the
      prompt on stdin. In print mode Claude Code never prompts: a tool that needs
      permission is denied (listed in ``permission_denials``) unless ``profile.args``
      allows it (``--allowedTools``, ``--permission-mode``).
    * The child sees the scrubbed environment plus ``CLAUDE_PASS`` and ``profile.env``,
      over ``CLAUDE_ENV``: the non-streaming fallback off (a broken stream is never
      re-requested silently), one in-CLI retry (so claude reports the vendor's
      Retry-After as ``system/api_retry``), no auto-update, telemetry, error reporting
      or other non-essential traffic.
    * Success: exit 0 and a last ``result`` line with ``is_error: false``, ``subtype:
      success`` and a string ``result``, which is the reply. Cost: ``total_cost_usd``.
    * Vendor status: the result's ``api_error_status``. ``retry_after_s``: the last
      ``system/api_retry``'s ``retry_delay_ms`` (claude's wait, never shorter than the
      vendor's Retry-After).
    * The stream is folded by ``governor.exec.claude_stream``; ``facts`` gives the core
      its ``ClaudeFacts``, judged by ``governor.core.absence.claude_absence``. A profile
      that overrides the stream flags or the fallback variable (``claim_overrides``)
      never gets the absence claim (SPEC §11.9).
    * Claude's own error texts say what no status says (SPEC §12.6, §12.7): "Unable to
      connect to API (CODE)" and 2.1.332's "Connection refused — … (ECONNREFUSED)",
      "Can't reach the API server — … (ENOTFOUND)", "Connection dropped (ECONNRESET)"
      (``UNABLE_TO_CONNECT``) — no HTTP response: ``ECONNRESET`` and its kin a connection
      reset, anything else (refused, DNS, TLS) a vendor never reached; a result that is
      only "Request timed out" (2.1.332 adds its advice on ``API_TIMEOUT_MS``) a request
      that got no response in time, like a reset (SPEC §13.4); its synthetic
      message's ``error``: ``authentication_failed`` (not logged in, a credential) or
      ``billing_error`` (the credit balance is too low); HTTP 402 is billing too.
    * Its own re-requests (``claude_retries``): each ``system/api_retry``, each request it
      began again without saying so (more ``message_start`` lines than announced
      requests: an in-stream overload), and the non-streaming re-send it makes after a
      streamed request was answered 404 (observed on 2.1.197; the fake vendor sees both).
    * Verified with ``CLAUDE_VERIFIED_VERSION``; the ref names the version that ran.
    * Through governor's relay (SPEC §13.1, unless the profile sets ``relay = false``):
      ``ANTHROPIC_BASE_URL`` points the child at the relay, which forwards to the
      configured base URL (else Anthropic's); what the relay saw is the result's ``wire``,
      read first by the core's rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from governor.core.absence import (
    BILLING_ERROR,
    claude_absence,
    claude_billing,
    claude_blockers,
    claude_not_logged_in,
)
from governor.core.classify import CREDENTIAL_STATUSES, SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import Evidence
from governor.core.numbers import MAX_USD, reported
from governor.core.observation import (
    KINDS_KEPT,
    STATUSES_KEPT,
    ClaudeFacts,
    Connection,
    WireFacts,
    counted,
)
from governor.exec.claude_stream import ClaudeEvents, ClaudeResult, ClaudeStream
from governor.exec.endpoints import ANTHROPIC_URL, public_url
from governor.exec.environment import Redactor, scrubbed_env
from governor.exec.harness import partial_of, spawn_result
from governor.exec.process import ProcessResult, run_process
from governor.exec.relay import Gate, Relay
from governor.exec.relayed import through_relay

UNABLE_TO_CONNECT: Final = re.compile(
    r"Unable to connect to API(?: \((?P<code>[A-Za-z0-9_]{1,80})\)|: SSL)"
    r"|(?:Connection refused — a firewall or proxy may be blocking it"
    r"|Can't reach the API server — check your internet or DNS"
    r"|Connection dropped) \((?P<errno>E[A-Z0-9_]{1,80})\)"
)
"""Claude's words when no HTTP response came back, with its code (or a TLS failure).
2.1.197 says "Unable to connect to API (CODE)" for every such failure; 2.1.332 says
"Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)", "Can't
reach the API server — check your internet or DNS (ENOTFOUND)" and "Connection dropped
(ECONNRESET). …", and still "Unable to connect to API (EPROTO)" for TLS."""
TIMED_OUT: Final = re.compile(
    r"Request timed out(?:\. If the API is slow to answer\b.*)?", re.DOTALL
)
"""Claude's whole result text when no response came within ``API_TIMEOUT_MS``: "Request
timed out" (2.1.197), "Request timed out. If the API is slow to answer, or a proxy or
gateway holds responses, set API_TIMEOUT_MS above N." (2.1.332)."""
TIMED_OUT_DETAIL: Final = "request timed out"
"""The connection detail of a request that timed out before any response (SPEC §13.4)."""
RESET_CODES: Final = frozenset(
    {"ECONNRESET", "ConnectionClosed", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", TIMED_OUT_DETAIL}
)
"""Connection codes of a connection made and then reset or closed, or a request that timed
out before any response (SPEC §13.4: a reset before any byte); the rest: never made."""
NOT_FOUND: Final = 404
"""The status after which claude re-sends a streamed request without streaming."""
CLAUDE_BINARY: Final = "claude"
CLAUDE_VERIFIED_VERSION: Final = "2.1.197"
"""The Claude Code version the absence rule was verified on (``.ci/install-node-clis`` pins it)."""
STREAM_FLAGS: Final = (
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--include-hook-events",
)
"""What makes claude print the whole stream the absence rule reads."""
FALLBACK_VAR: Final = "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK"
CLAUDE_PASS: Final = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "CLAUDE_CONFIG_DIR",
)
"""Claude Code's own configuration variables, passed through when the parent has them."""
CLAUDE_ENV: Final = {
    "CLAUDE_CODE_MAX_RETRIES": "1",
    FALLBACK_VAR: "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
"""Set for the child (a profile may override them through ``env``; see ``claim_overrides``)."""


def claim_overrides(profile: Profile, child_env: Mapping[str, str]) -> list[str]:
    """What in the profile overrides the stream the absence rule needs (SPEC §11.9)."""
    flags = {flag for flag in STREAM_FLAGS if flag.startswith("--")}
    found = [
        arg.split("=", 1)[0]
        for arg in profile.args
        if arg.split("=", 1)[0] in flags or arg == "stream-json"
    ]
    if child_env.get(FALLBACK_VAR) != CLAUDE_ENV[FALLBACK_VAR]:
        found.append(FALLBACK_VAR)
    return list(dict.fromkeys(found))


def is_claude_success(result: ProcessResult, stream: ClaudeStream) -> bool:
    """Exit 0 within the time limit, and a final result line reporting a reply."""
    r = stream.result
    return (
        result.started
        and not result.timed_out
        and result.exit_code == 0
        and r is not None
        and not r.is_error
        and r.subtype == "success"
        and r.result is not None
    )


class ClaudeHarness:
    """Runs ``claude -p --output-format stream-json`` once per agent call."""

    name: Final = "claude"

    def __init__(self, base_dir: Path, *, gate: Gate | None = None) -> None:
        """Args:
        base_dir: the goal file's folder (claude resolves nothing against it).
        gate: asked by the relay before each model request after the first.
        """
        self.base_dir = base_dir
        self.gate = gate

    def binary(self, profile: Profile) -> str | None:
        """The executable looked up on the child's ``PATH``."""
        return CLAUDE_BINARY

    def argv(self, profile: Profile) -> tuple[str, ...]:
        """The argument list; the prompt goes on stdin."""
        model = ("--model", profile.model) if profile.model else ()
        return (CLAUDE_BINARY, "-p", *STREAM_FLAGS, *model, *profile.args)

    def environment(self, profile: Profile, env: Mapping[str, str]) -> dict[str, str]:
        """The child's environment: ``CLAUDE_ENV``, then the scrubbed pass-through."""
        return {**CLAUDE_ENV, **scrubbed_env(env, (*CLAUDE_PASS, *profile.env))}

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        """Run claude once (through the relay unless the profile turns it off); see the
        module rules for what it reports."""
        base = env.get("ANTHROPIC_BASE_URL") or None
        return through_relay(
            lambda relay: self._run(prompt, profile, cwd=cwd, env=env, endpoint=base, relay=relay),
            profile=profile,
            base_url=base or ANTHROPIC_URL,
            env=env,
            gate=self.gate,
        )

    def _run(
        self,
        prompt: str,
        profile: Profile,
        *,
        cwd: Path,
        env: Mapping[str, str],
        endpoint: str | None,
        relay: Relay | None = None,
    ) -> SpawnResult:
        events = ClaudeEvents()
        child_env = self.environment(profile, env)
        if relay is not None:
            child_env["ANTHROPIC_BASE_URL"] = relay.url
        result = run_process(
            self.argv(profile),
            stdin=prompt.encode("utf-8"),
            env=child_env,
            cwd=cwd,
            timeout_s=profile.timeout_s,
            on_stdout_line=events.feed,
        )
        overrides = claim_overrides(profile, child_env)
        return claude_result(
            result,
            events.result(),
            Redactor(env),
            overrides=overrides,
            endpoint=endpoint,
            wire=relay.facts() if relay else None,
            account=relay.account if relay else None,
        )


def claude_result(
    result: ProcessResult,
    stream: ClaudeStream,
    redact: Redactor,
    *,
    overrides: Iterable[str] = (),
    endpoint: str | None = None,
    wire: WireFacts | None = None,
    account: str | None = None,
) -> SpawnResult:
    """Turn a finished claude process and its folded stream (and what the relay saw)
    into a classified result."""
    ok = is_claude_success(result, stream)
    r = stream.result
    seen = facts(stream, overrides)
    delay_ms = stream.retry_delay_ms
    billing = None if ok else claude_billing_remedy(stream)
    return spawn_result(
        result,
        redact,
        ok=ok,
        reply=r.result if ok and r else None,
        evidence=claude_absence(seen).model_copy(update={"partial": partial_of(result)}),
        stdout=r.result if r is not None and r.result else None,
        vendor_status=r.api_error_status if r and r.is_error else None,
        vendor_retries=claude_retries(stream),
        credential=None if ok else claude_credential(stream),
        retry_after_s=round(delay_ms / 1000, 3) if delay_ms is not None and not ok else None,
        cost_usd=r.total_cost_usd if r else None,
        usage=r.usage if r else None,
        vendor_code=BILLING_ERROR if billing and BILLING_ERROR in seen.synthetic_errors else None,
        billing=billing,
        connection=connection_of(seen.connection),
        connection_detail=seen.connection,
        endpoint=public_url(endpoint) if endpoint else ANTHROPIC_URL,
        stream=seen,
        wire=wire,
        account=account,
    )


def unable_to_connect(stream: ClaudeStream) -> str | None:
    """The code of claude's "Unable to connect to API (CODE)" (``SSL`` for a TLS failure),
    or ``TIMED_OUT_DETAIL`` for its whole "Request timed out" text, when that is how the
    run ended with no vendor status."""
    r = stream.result
    if r is None or not r.is_error or r.api_error_status is not None or not r.result:
        return None
    if TIMED_OUT.fullmatch(r.result):
        return TIMED_OUT_DETAIL
    found = UNABLE_TO_CONNECT.search(r.result)
    return (found["code"] or found["errno"] or "SSL") if found else None


def connection_of(code: str | None) -> Connection | None:
    """How a claude run got no HTTP response: a reset connection, or a vendor never reached."""
    if code is None:
        return None
    return "reset" if code in RESET_CODES else "unreachable"


def facts(stream: ClaudeStream, overrides: Iterable[str] = ()) -> ClaudeFacts:
    """The stream as the core's rules read it (and the evidence records it)."""
    r = stream.result or ClaudeResult()
    return ClaudeFacts(
        lines=stream.lines,
        malformed=counted(stream.malformed),
        others=tuple(k[:100] for k in stream.others if k),
        inits=counted(stream.inits),
        mcp_servers=counted(stream.mcp_servers),
        results=counted(stream.results),
        after_result=counted(stream.after_result),
        is_error=r.is_error,
        status=_bounded(r.api_error_status, 999),
        synthetic_errors=tuple(e for e in stream.synthetic_errors if e),
        connection=unable_to_connect(stream),
        num_turns=_bounded(r.num_turns, 10**9),
        output_tokens=_bounded(r.output_tokens, 2**62),
        cost_usd=reported(r.total_cost_usd, MAX_USD),
        permission_denials=_bounded(r.permission_denials, 10**9),
        requests_begun=counted(stream.requests_begun),
        start_output_tokens=min(stream.start_output_tokens, 2**62),
        delta_output_tokens=min(stream.delta_output_tokens, 2**62),
        effects=stream.effects,
        output=stream.output,
        refusal=stream.refusal or r.stop_reason == "refusal",
        overrides=tuple(o[:100] for o in overrides)[:KINDS_KEPT],
        version=stream.version,
        retries=tuple(_bounded(s, 999) for s in stream.retries),
        retry_count=counted(stream.retry_count),
        rate_limit=stream.rate_limit,
    )


def _bounded(value: int | None, ceiling: int) -> int | None:
    return value if value is None or 0 <= value <= ceiling else None


def claim_blockers(stream: ClaudeStream) -> list[str]:
    """Why the absence rule refuses the claim (``governor.core.absence.claude_blockers``)."""
    return claude_blockers(facts(stream))


def claude_evidence(stream: ClaudeStream, *, overrides: Iterable[str] = ()) -> Evidence:
    """The failure evidence of a claude run (``governor.core.absence.claude_absence``)."""
    return claude_absence(facts(stream, overrides))


def claude_retries(stream: ClaudeStream) -> tuple[int | None, ...]:
    """Every request claude made again within the run: the status of each one it re-sent
    (None: it had none, e.g. an in-stream error). See the module rules."""
    announced = stream.retry_count + 1
    unannounced = max(stream.requests_begun - announced, 0)
    r = stream.result
    resent = (
        (NOT_FOUND,) if r is not None and r.is_error and r.api_error_status == NOT_FOUND else ()
    )
    return (*stream.retries, *(None,) * unannounced, *resent)[:STATUSES_KEPT]


def not_logged_in(stream: ClaudeStream) -> bool:
    """Claude's own "not logged in" envelope: its synthetic error, and no vendor status."""
    return claude_not_logged_in(facts(stream))


def claude_billing_remedy(stream: ClaudeStream) -> str | None:
    """The remedy when claude's stream shows the account cannot pay (SPEC §12.6), else None."""
    r = stream.result
    if r is None or not r.is_error or not claude_billing(facts(stream)):
        return None
    return (
        "add credit to the Anthropic account whose key claude uses (Plans & Billing in the "
        "Anthropic console), or give the profile another key"
    )


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
        proxy = (
            "; a proxy between governor and the vendor (HTTPS_PROXY) may be refusing it too"
            if r.api_error_status == 403
            else ""
        )
        return (
            f"the vendor answered HTTP {r.api_error_status} to the key from {source}: set a "
            "valid ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or log in again with "
            f"`claude /login`{proxy}"
        )
    return None
