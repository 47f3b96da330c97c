"""The ``claude`` harness: ``claude -p --output-format json`` and its result envelope.

Rules (SPEC §4, §7; decision record 0213; observations in ``docs/harnesses.md``):
    * Invocation: ``claude -p --output-format json [--model M] *profile.args``, the
      prompt on stdin. In print mode Claude Code never prompts: a tool that needs
      permission is denied (listed in ``permission_denials``) unless ``profile.args``
      allows it (``--allowedTools``, ``--permission-mode``).
    * The child sees the scrubbed environment plus ``CLAUDE_PASS`` and ``profile.env``,
      over ``CLAUDE_ENV``: in-CLI retries off (``CLAUDE_CODE_MAX_RETRIES=0``, and no
      silent non-streaming re-request), no auto-update, telemetry, error reporting or
      other non-essential traffic. A profile may override these through ``env``.
    * Success: exit 0 and an envelope ``type: result``, ``subtype: success``,
      ``is_error: false`` with a string ``result``, which is the reply.
    * Vendor status: ``api_error_status``. Cost: ``total_cost_usd``.
    * Evidence: the envelope is a summary, not a log, so it can only ever say
      *observed*. ``num_turns > 1`` means a model turn completed and another began,
      which in print mode is how tool results go back: effects and output observed
      (a continuation for another reason would over-state effects, which can only
      charge); ``usage.output_tokens > 0`` means output observed; ``stop_reason:
      refusal`` is the API's native refusal, declared. It never proves absence: a
      stream cut after text leaves a zero-usage, one-turn envelope, exactly like an
      HTTP 503, and Claude Code may start a tool as soon as its block has streamed,
      before the response completes. So claude failures are never uncharged-eligible;
      they stay ``unknown`` unless something was observed.
    * Retry-After is not in the envelope: ``retry_after_s`` stays None.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from governor.core.classify import SpawnResult
from governor.core.events import Profile
from governor.core.evidence import Evidence, Observation, RefusalObservation
from governor.exec.environment import Redactor, scrubbed_env
from governor.exec.harness import partial_of, spawn_result, stdout_text
from governor.exec.process import ProcessResult, run_process

CLAUDE_BINARY: Final = "claude"
CLAUDE_PASS: Final = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "CLAUDE_CONFIG_DIR",
)
"""Claude Code's own configuration variables, passed through when the parent has them."""
CLAUDE_ENV: Final = {
    "CLAUDE_CODE_MAX_RETRIES": "0",
    "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
"""Set for the child: governor retries (and records) vendor failures itself."""

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class ClaudeRun:
    """The fields of a Claude Code result envelope that governor reads."""

    parsed: bool = False
    """A JSON object with ``type: result`` was found on stdout."""
    subtype: str | None = None
    is_error: bool = False
    api_error_status: int | None = None
    result: str | None = None
    """The reply on success; Claude Code's error text on failure."""
    num_turns: int | None = None
    session_id: str | None = None
    total_cost_usd: float | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None


def parse_claude_envelope(text: str) -> ClaudeRun:
    """Read the result envelope from ``claude -p --output-format json`` stdout.

    The whole text is tried first, then its last non-blank line; anything that is not
    a JSON object with ``type: result`` gives an unparsed run.
    """
    envelope = _envelope(text.strip())
    if envelope is None:
        lines = [line for line in text.splitlines() if line.strip()]
        envelope = _envelope(lines[-1]) if lines else None
    if envelope is None:
        return ClaudeRun()
    usage = envelope.get("usage")
    return ClaudeRun(
        parsed=True,
        subtype=_of(envelope, "subtype", str),
        is_error=envelope.get("is_error") is True,
        api_error_status=_of(envelope, "api_error_status", int),
        result=_of(envelope, "result", str),
        num_turns=_of(envelope, "num_turns", int),
        session_id=_of(envelope, "session_id", str),
        total_cost_usd=_cost(envelope.get("total_cost_usd")),
        output_tokens=_of(usage, "output_tokens", int) if isinstance(usage, dict) else None,
        stop_reason=_of(envelope, "stop_reason", str),
    )


def _envelope(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) and value.get("type") == "result" else None


def _of(mapping: dict[str, Any], key: str, kind: type[_T]) -> _T | None:
    value = mapping.get(key)
    if isinstance(value, bool) and kind is not bool:
        return None
    return value if isinstance(value, kind) else None


def _cost(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def claude_evidence(run: ClaudeRun) -> Evidence:
    """The failure evidence of a claude run (see the module rules): never absence."""
    if not run.parsed:
        return Evidence()
    tool_turns = (run.num_turns or 0) > 1
    effects: Observation = "observed" if tool_turns else "unknown"
    output: Observation = "observed" if tool_turns or (run.output_tokens or 0) > 0 else "unknown"
    refusal: RefusalObservation = "declared" if run.stop_reason == "refusal" else "unknown"
    if effects == output == refusal == "unknown":
        return Evidence()
    ref = f"claude-result:session {run.session_id or '?'}, num_turns {run.num_turns}"
    return Evidence(
        effects=effects, output=output, refusal=refusal, source="claude:result", ref=ref
    )


def is_claude_success(result: ProcessResult, run: ClaudeRun) -> bool:
    """Exit 0 within the time limit, and an envelope that reports a successful reply."""
    return (
        result.started
        and not result.timed_out
        and result.exit_code == 0
        and run.parsed
        and not run.is_error
        and run.subtype == "success"
        and run.result is not None
    )


class ClaudeHarness:
    """Runs ``claude -p --output-format json`` once per agent call."""

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
        return (CLAUDE_BINARY, "-p", "--output-format", "json", *model, *profile.args)

    def environment(self, profile: Profile, env: Mapping[str, str]) -> dict[str, str]:
        """The child's environment: ``CLAUDE_ENV``, then the scrubbed pass-through."""
        return {**CLAUDE_ENV, **scrubbed_env(env, (*CLAUDE_PASS, *profile.env))}

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        """Run claude once; see the module rules for what it reports."""
        result = run_process(
            self.argv(profile),
            stdin=prompt.encode("utf-8"),
            env=self.environment(profile, env),
            cwd=cwd,
            timeout_s=profile.timeout_s,
        )
        return claude_result(result, Redactor(env))


def claude_result(result: ProcessResult, redact: Redactor) -> SpawnResult:
    """Turn a finished claude process into a classified result."""
    run = parse_claude_envelope(stdout_text(result))
    ok = is_claude_success(result, run)
    return spawn_result(
        result,
        redact,
        ok=ok,
        reply=run.result if ok else None,
        evidence=claude_evidence(run).model_copy(update={"partial": partial_of(result)}),
        vendor_status=run.api_error_status if run.is_error else None,
        cost_usd=run.total_cost_usd,
    )
