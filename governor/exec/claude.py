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
    * Credentials, evidence and the absence rule: ``governor.exec.claude_stream``. A
      profile that overrides the stream flags or the fallback variable
      (``claim_overrides``) never gets the absence claim (SPEC §11.9).
    * Verified with ``CLAUDE_VERIFIED_VERSION``; the ref names the version that ran.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from governor.core.absence import BILLING_ERROR, claude_absence
from governor.core.classify import SpawnResult
from governor.core.events import Profile
from governor.exec.claude_stream import (
    ClaudeEvents,
    ClaudeStream,
    claude_billing_remedy,
    claude_credential,
    claude_retries,
    connection_of,
    facts,
)
from governor.exec.environment import Redactor, scrubbed_env
from governor.exec.harness import partial_of, spawn_result
from governor.exec.process import ProcessResult, run_process
from governor.exec.upstream import ANTHROPIC_URL, public_url

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

    def __init__(self, base_dir: Path) -> None:
        """Args:
        base_dir: the goal file's folder (claude resolves nothing against it).
        """
        self.base_dir = base_dir

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
        """Run claude once; see the module rules for what it reports."""
        events = ClaudeEvents()
        child_env = self.environment(profile, env)
        result = run_process(
            self.argv(profile),
            stdin=prompt.encode("utf-8"),
            env=child_env,
            cwd=cwd,
            timeout_s=profile.timeout_s,
            on_stdout_line=events.feed,
        )
        overrides = claim_overrides(profile, child_env)
        base = env.get("ANTHROPIC_BASE_URL") or None
        return claude_result(
            result, events.result(), Redactor(env), overrides=overrides, endpoint=base
        )


def claude_result(
    result: ProcessResult,
    stream: ClaudeStream,
    redact: Redactor,
    *,
    overrides: Iterable[str] = (),
    endpoint: str | None = None,
) -> SpawnResult:
    """Turn a finished claude process and its folded stream into a classified result."""
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
    )
