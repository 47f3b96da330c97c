"""The ``codex`` harness: ``codex exec --json``, its JSONL event stream, and what it can prove.

Rules (SPEC §4, §7; decision record 0213; observations in ``docs/harnesses.md``):
    * Invocation: ``codex exec --json --skip-git-repo-check [--model M]
      [--sandbox workspace-write] *profile.args -``, the prompt on stdin. Codex exec
      never asks for approval (its policy is ``never``); the sandbox flag is added
      unless ``profile.args`` chooses one.
    * The child sees the scrubbed environment plus ``CODEX_PASS`` and ``profile.env``,
      and ``RUST_LOG=codex_otel.trace_safe=info``: codex's content-free telemetry on
      stderr, which says how many model requests the turn made and their HTTP statuses.
    * Success: exit 0, ``turn.completed`` and no ``turn.failed``; the reply is the
      last ``agent_message`` text.
    * Vendor status: ``turn.failed``'s message when codex spells a status in it
      (``unexpected status 503 …``, ``exceeded retry limit, last status: 429 …``),
      else the last traced ``codex.api_request``'s ``http.response.status_code``
      when it is an error (codex renders HTTP 500 as a fixed sentence with no number).
    * Evidence: a tool item (``command_execution``, ``file_change``, ``mcp_tool_call``,
      ``collab_tool_call``, ``web_search``) or a traced tool call -> effects observed;
      an ``agent_message``/``reasoning``/``plan``/``todo_list`` item -> output observed.
      **Positive absence** (effects, output, refusal all absent, source ``codex:jsonl``)
      needs all of: a fully parsed stream ending in ``turn.failed``; no item but
      ``error`` diagnostics; and a complete trace showing exactly one model request,
      no stream retry, no server-sent event received, and an HTTP error on every
      attempt. The trace is needed because the JSONL stream alone does *not* list
      everything: streamed text cut by an error, calls to tools without an item
      (``view_image``, ``get_goal``, unknown tool names) and, under ``--sandbox
      read-only``, a command the sandbox denied all leave no line in it.
      Anything else is ``unknown`` (charged).
    * Credentials (SPEC §11.8): a status 401 or 403 (read as above), or codex's own
      ``Missing environment variable: `NAME`.`` for its provider's key, set
      ``credential`` to the remedy (a 403 may come from a proxy: the remedy says so);
      the missing key also counts as a refusal for the absence rule (no request was
      sent: the trace shows none).
    * Out of credit (SPEC §12.6): the vendor's ``insufficient_quota`` — traced with an
      in-stream ``response.failed``, or codex's own "Quota exceeded. Check your plan and
      billing details." for it, in-stream or on HTTP 429 — sets ``billing`` to the remedy.
    * No HTTP response (SPEC §12.7): with nothing listening (or DNS or TLS failing) codex
      prints "Reconnecting... waiting for network" every few seconds and ignores
      ``request_max_retries``: the adapter ends it at the first such line
      (``connection`` ``unreachable``) instead of waiting out ``timeout_s``. A connection
      reset or closed before a response byte ends the turn with no traced status
      (``reset``).
    * Retry-After is not observable through codex's headers; an in-stream rate limit's
      "try again in 1.5s" fills ``retry_after_s``.
    * The facts the absence rule judged are the core's ``CodexFacts``
      (``governor.core.absence.codex_absence``).
    * Through governor's relay (SPEC §13.1, unless the profile sets ``relay = false``):
      the relay forwards to the base URL codex would have used (``codex_base_url``), and
      codex is pointed at it — its selected custom model provider's ``base_url`` through
      ``-c model_providers.<id>.base_url=…``, the built-in provider through
      ``OPENAI_BASE_URL``. What the relay saw is the result's ``wire``, read first by the
      core's rules. Reached is reached (SPEC §13.4): the early stop at "Reconnecting…"
      applies only while no response byte has come back in this run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Final

from governor.core.absence import codex_absence, codex_proves_absence
from governor.core.classify import CREDENTIAL_STATUSES, SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import Evidence
from governor.core.observation import (
    BILLING_CODES,
    STATUSES_KEPT,
    CodexFacts,
    Connection,
    WireFacts,
    counted,
)
from governor.exec.codex_events import CodexEvents, CodexRun
from governor.exec.codex_trace import CodexTrace, parse_codex_trace, without_trace
from governor.exec.endpoints import OPENAI_URL, codex_config, upstream_of
from governor.exec.environment import Redactor, scrubbed_env
from governor.exec.harness import decode, partial_of, spawn_result
from governor.exec.process import ProcessResult, run_process
from governor.exec.relay import Gate, Relay
from governor.exec.relayed import through_relay, uses_relay

CODEX_BINARY: Final = "codex"
CODEX_PASS: Final = ("CODEX_HOME", "OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL")
"""Codex's own configuration variables, passed through when the parent has them."""
CODEX_ENV: Final = {"RUST_LOG": "codex_otel.trace_safe=info"}
"""Set for the child (a profile may override it through ``env``, losing the trace)."""
DEFAULT_SANDBOX: Final = ("--sandbox", "workspace-write")
"""Added unless the profile's arguments choose a sandbox mode (``SANDBOX_FLAGS``)."""
SANDBOX_FLAGS: Final = frozenset(
    {"-s", "--sandbox", "--dangerously-bypass-approvals-and-sandbox", "--full-auto"}
)

_STATUS_IN_MESSAGE: Final = re.compile(
    r"^(?:unexpected status|exceeded retry limit, last status:) (?P<status>[1-5]\d\d)\b"
)
_MISSING_KEY: Final = re.compile(r"^Missing environment variable: `(?P<name>[A-Za-z_]\w{0,127})`")
"""Codex's own message when its model provider's key variable is not set."""
CONNECTION_DETAIL: Final = {"unreachable": "waiting for network", "reset": "no HTTP response"}
"""What codex showed of a call that got no HTTP response."""
MESSAGE_CODES: Final = (
    ("Quota exceeded. Check your plan and billing details", "insufficient_quota"),
    ("rate limit exceeded:", "rate_limit_exceeded"),
)
"""Codex's own message for a vendor's refusal code, at the start of its failure message."""
_TRY_AGAIN: Final = re.compile(
    r"try again in (?P<n>\d{1,6}(?:\.\d{1,3})?)\s?(?P<unit>ms|s)\b", re.I
)
"""An in-stream rate limit's hint ("Please try again in 1.5s")."""


def codex_status(run: CodexRun, trace: CodexTrace) -> int | None:
    """The vendor's HTTP status for a failed turn, or None (see the module rules)."""
    if not run.failed:
        return None
    match = _STATUS_IN_MESSAGE.match(run.failure or "")
    if match:
        return int(match["status"])
    last = trace.request_statuses[-1] if trace.request_statuses else None
    return last if last is not None and last >= 400 else None


def missing_key(run: CodexRun) -> str | None:
    """The variable codex's failed turn says is missing, if that is what it says."""
    match = _MISSING_KEY.match(run.failure or "") if run.failed else None
    return match["name"] if match else None


def codex_credential(run: CodexRun, trace: CodexTrace) -> str | None:
    """The remedy when codex's key was missing or refused, else None."""
    name = missing_key(run)
    if name is not None:
        return f"codex found no key: set {name} in governor's environment and list it in the profile's env"
    status = codex_status(run, trace)
    if status not in CREDENTIAL_STATUSES:
        return None
    proxy = (
        "; a proxy between governor and the vendor (HTTPS_PROXY) may be refusing it too"
        if status == 403
        else ""
    )
    return (
        f"the vendor answered HTTP {status} to codex's key: set a valid OPENAI_API_KEY or "
        "CODEX_API_KEY (or the env_key variable of codex's model provider) and list it in the "
        f"profile's env, or run `codex login`{proxy}"
    )


def refusal_code(run: CodexRun, trace: CodexTrace) -> str | None:
    """The vendor's refusal code: traced with a ``response.failed``, else codex's own
    message for it (see ``MESSAGE_CODES``)."""
    if not run.failed:
        return None
    if trace.code is not None:
        return trace.code
    message = run.failure or ""
    return next((code for words, code in MESSAGE_CODES if message.startswith(words)), None)


def codex_facts(run: CodexRun, trace: CodexTrace) -> CodexFacts:
    """The stream and the trace as the core's rules read them (and the evidence records)."""
    return CodexFacts(
        events=run.events,
        malformed=counted(run.malformed),
        completed=run.completed,
        failed=run.failed,
        tool_items=counted(run.tool_items),
        text_items=counted(run.text_items),
        unknown_items=counted(run.unknown_items),
        reconnecting=counted(run.reconnecting),
        missing_key=missing_key(run),
        code=refusal_code(run, trace),
        trace_complete=trace.complete,
        requests=counted(len(trace.request_statuses)),
        statuses=tuple(
            s if s is None or s <= 999 else None for s in trace.request_statuses[:STATUSES_KEPT]
        ),
        sse_events=counted(trace.sse_events),
        sse_kinds=trace.sse_kinds,
        tool_calls=counted(trace.tool_calls),
        sampling_requests=_count(trace.sampling_requests),
        sampling_retries=_count(trace.sampling_retries),
    )


def _count(value: int | None) -> int | None:
    return None if value is None else counted(value)


def proves_nothing_happened(run: CodexRun, trace: CodexTrace) -> bool:
    """Whether the stream and the trace together show the model never produced anything."""
    return codex_proves_absence(codex_facts(run, trace)) is not None


def codex_evidence(run: CodexRun, trace: CodexTrace) -> Evidence:
    """The failure evidence of a codex run (``governor.core.absence.codex_absence``)."""
    return codex_absence(codex_facts(run, trace))


def codex_connection(run: CodexRun, trace: CodexTrace) -> Connection | None:
    """How the run got no HTTP response, if it got none: ``unreachable`` (codex waited
    for the network), ``reset`` (its one request has no traced status), else None."""
    if run.reconnecting:
        return "unreachable"
    statuses = trace.request_statuses
    if run.failed and statuses and all(s is None for s in statuses) and not trace.sse_events:
        return "reset"
    return None


def retry_after(run: CodexRun, code: str | None) -> float | None:
    """An in-stream rate limit's "try again in N s" hint, in seconds."""
    found = _TRY_AGAIN.search(run.failure or "") if code == "rate_limit_exceeded" else None
    if found is None:
        return None
    value = float(found["n"])
    return round(value / 1000 if found["unit"].lower() == "ms" else value, 3)


def codex_billing(code: str | None) -> str | None:
    """The remedy when the vendor's code says the account cannot pay (SPEC §12.6)."""
    if code not in BILLING_CODES:
        return None
    return (
        "add credit or raise the quota of the OpenAI account whose key codex uses "
        "(https://platform.openai.com/account/billing), or give the profile another key"
    )


_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]{1,100}")


def codex_base_url(env: Mapping[str, str]) -> tuple[str | None, str]:
    """The custom model provider whose ``base_url`` codex uses (None: the built-in one, or
    ``OPENAI_BASE_URL``) and the base URL itself, as codex would read them."""
    if env.get("OPENAI_BASE_URL"):
        return None, env["OPENAI_BASE_URL"]
    config = codex_config(env)
    provider = str(config.get("model_provider", "openai"))
    providers = config.get("model_providers")
    chosen = providers.get(provider) if isinstance(providers, dict) else None
    base = chosen.get("base_url") if isinstance(chosen, dict) else None
    if isinstance(base, str) and _BARE_KEY.fullmatch(provider):
        return provider, base
    return None, OPENAI_URL


def chooses_sandbox(args: Iterable[str]) -> bool:
    """Whether codex arguments pick a sandbox mode themselves (then none is added)."""
    return any(
        arg in SANDBOX_FLAGS or arg.startswith(("--sandbox=", "sandbox_mode=")) for arg in args
    )


class CodexHarness:
    """Runs ``codex exec --json`` once per agent call."""

    name: Final = "codex"

    def __init__(self, base_dir: Path, *, gate: Gate | None = None) -> None:
        """Args:
        base_dir: the goal file's folder (codex resolves nothing against it).
        gate: asked by the relay before each model request after the first.
        """
        self.base_dir = base_dir
        self.gate = gate

    def binary(self, profile: Profile) -> str | None:
        """The executable looked up on the child's ``PATH``."""
        return CODEX_BINARY

    def argv(self, profile: Profile, config: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The argument list (``config``: ``-c`` overrides); the prompt goes on stdin (the
        final ``-``)."""
        model = ("--model", profile.model) if profile.model else ()
        sandbox = () if chooses_sandbox(profile.args) else DEFAULT_SANDBOX
        return (
            CODEX_BINARY,
            "exec",
            *config,
            "--json",
            "--skip-git-repo-check",
            *model,
            *sandbox,
            *profile.args,
            "-",
        )

    def environment(self, profile: Profile, env: Mapping[str, str]) -> dict[str, str]:
        """The child's environment: ``CODEX_ENV``, then the scrubbed pass-through."""
        return {**CODEX_ENV, **scrubbed_env(env, (*CODEX_PASS, *profile.env))}

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        """Run codex once (through the relay unless the profile turns it off); see the
        module rules for what it reports."""
        provider, base = codex_base_url(env) if uses_relay(profile) else (None, None)
        return through_relay(
            lambda relay: self._run(
                prompt, profile, cwd=cwd, env=env, relay=relay, provider=provider
            ),
            profile=profile,
            base_url=base,
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
        relay: Relay | None = None,
        provider: str | None = None,
    ) -> SpawnResult:
        events = CodexEvents()
        child_env = self.environment(profile, env)
        config: tuple[str, ...] = ()
        if relay is not None and provider is not None:
            config = ("-c", f'model_providers.{provider}.base_url="{relay.url}"')
        elif relay is not None:
            child_env["OPENAI_BASE_URL"] = relay.url

        def unreachable() -> bool:
            if relay is not None and relay.responded:
                return False  # reached is reached (SPEC §13.4)
            return events.reconnecting > 0 or (relay is not None and relay.unreached)

        result = run_process(
            self.argv(profile, config),
            stdin=prompt.encode("utf-8"),
            env=child_env,
            cwd=cwd,
            timeout_s=profile.timeout_s,
            on_stdout_line=events.feed,
            stop=unreachable,
        )
        endpoint = upstream_of(profile, env, self.base_dir).endpoint
        return codex_result(
            result,
            events.result(),
            Redactor(env),
            endpoint=endpoint,
            wire=relay.facts() if relay else None,
            account=relay.account if relay else None,
        )


def codex_result(
    result: ProcessResult,
    run: CodexRun,
    redact: Redactor,
    *,
    endpoint: str | None = None,
    wire: WireFacts | None = None,
    account: str | None = None,
) -> SpawnResult:
    """Turn a finished codex process and its parsed stream (and what the relay saw) into a
    classified result."""
    trace = parse_codex_trace(
        decode(result.stderr_tail), complete=len(result.stderr_tail) == result.stderr_bytes
    )
    ok = (
        result.started
        and not result.timed_out
        and result.exit_code == 0
        and run.completed
        and not run.failed
        and run.reply is not None
    )
    seen = codex_facts(run, trace)
    connection = codex_connection(run, trace)
    return spawn_result(
        replace(result, stderr_tail=without_trace(result.stderr_tail)),
        redact,
        ok=ok,
        reply=run.reply if ok else None,
        evidence=codex_absence(seen).model_copy(update={"partial": partial_of(result)}),
        vendor_status=codex_status(run, trace),
        vendor_retries=trace.retried + (None,) * (trace.sampling_retries or 0),
        credential=None if ok else codex_credential(run, trace),
        retry_after_s=retry_after(run, seen.code),
        usage=run.usage,
        vendor_code=seen.code,
        billing=codex_billing(seen.code),
        connection=connection,
        connection_detail=CONNECTION_DETAIL[connection] if connection else None,
        endpoint=endpoint,
        stream=seen,
        wire=wire,
        account=account,
    )
