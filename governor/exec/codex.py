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
      ``credential`` to the remedy; the missing key also counts as a refusal for the
      absence rule (no request was sent: the trace shows none).
    * Retry-After is not observable through codex: ``retry_after_s`` stays None.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from governor.core.classify import CREDENTIAL_STATUSES, SpawnResult
from governor.core.events import Profile
from governor.core.evidence import Evidence, Observation
from governor.exec.codex_trace import CodexTrace, parse_codex_trace, without_trace
from governor.exec.environment import Redactor, scrubbed_env
from governor.exec.harness import decode, json_event, partial_of, spawn_result
from governor.exec.process import ProcessResult, run_process

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

TOOL_ITEMS: Final = frozenset(
    {"command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search"}
)
"""Item types that record a tool the agent used: effects observed."""
TEXT_ITEMS: Final = frozenset({"agent_message", "reasoning", "plan", "todo_list"})
"""Item types that carry model text: output observed."""
DIAGNOSTIC_ITEMS: Final = frozenset({"error"})
"""Item types codex adds on its own (warnings): neither effect nor output."""
TEXT_EVENTS: Final = frozenset({"item.plan.delta", "request_user_input"})
"""Top-level events that carry model output."""

_STATUS_IN_MESSAGE: Final = re.compile(
    r"^(?:unexpected status|exceeded retry limit, last status:) (?P<status>[1-5]\d\d)\b"
)
_MISSING_KEY: Final = re.compile(r"^Missing environment variable: `(?P<name>[A-Za-z_]\w{0,127})`")
"""Codex's own message when its model provider's key variable is not set."""


@dataclass(frozen=True, slots=True)
class CodexRun:
    """What a ``codex exec --json`` stream said, summarised in bounded space."""

    events: int = 0
    """Non-empty lines read."""
    malformed: int = 0
    """Lines that were not a JSON event object."""
    completed: bool = False
    """A ``turn.completed`` event was seen."""
    failed: bool = False
    """A ``turn.failed`` event was seen."""
    failure: str | None = None
    """The ``turn.failed`` message (else the last ``error`` event's)."""
    reply: str | None = None
    """The last ``agent_message`` text."""
    tool_items: int = 0
    """Item events of a tool type."""
    text_items: int = 0
    """Item (and top-level) events that carry model output."""
    unknown_items: int = 0
    """Item events of a type this adapter does not know."""


class CodexEvents:
    """An incremental fold of the JSONL stream, fed one line at a time as codex writes it."""

    def __init__(self) -> None:
        self.events = self.malformed = 0
        self.tool_items = self.text_items = self.unknown_items = 0
        self.completed = self.failed = False
        self.reply: str | None = None
        self._failure: str | None = None
        self._error: str | None = None

    def feed(self, line: bytes | str) -> None:
        """Fold one stdout line (blank lines are ignored)."""
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        if not text.strip():
            return
        self.events += 1
        event = json_event(text)
        if event is None:
            self.malformed += 1
        else:
            self._fold(event)

    def result(self) -> CodexRun:
        """The summary so far."""
        return CodexRun(
            events=self.events,
            malformed=self.malformed,
            completed=self.completed,
            failed=self.failed,
            failure=self._failure or self._error,
            reply=self.reply,
            tool_items=self.tool_items,
            text_items=self.text_items,
            unknown_items=self.unknown_items,
        )

    def _fold(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "turn.completed":
            self.completed = True
        elif kind == "turn.failed":
            self.failed = True
            self._failure = _message(event.get("error")) or self._failure
        elif kind == "error":
            self._error = _message(event) or self._error
        elif kind in TEXT_EVENTS:
            self.text_items += 1
        elif kind in ("item.started", "item.updated", "item.completed"):
            self._item(kind, event.get("item"))

    def _item(self, kind: str, item: object) -> None:
        item_type = item.get("type") if isinstance(item, dict) else None
        if item_type in TOOL_ITEMS:
            self.tool_items += 1
        elif item_type in TEXT_ITEMS:
            self.text_items += 1
        elif item_type not in DIAGNOSTIC_ITEMS:
            self.unknown_items += 1
        if item_type == "agent_message" and kind == "item.completed" and isinstance(item, dict):
            text = item.get("text")
            self.reply = text if isinstance(text, str) else self.reply


def _message(container: object) -> str | None:
    message = container.get("message") if isinstance(container, dict) else None
    return message if isinstance(message, str) and message else None


def parse_codex_events(lines: Iterable[bytes | str]) -> CodexRun:
    """Summarise a whole ``codex exec --json`` stream (see :class:`CodexEvents`)."""
    events = CodexEvents()
    for line in lines:
        events.feed(line)
    return events.result()


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
    return (
        f"the vendor answered HTTP {status} to codex's key: set a valid OPENAI_API_KEY or "
        "CODEX_API_KEY (or the env_key variable of codex's model provider) and list it in the "
        "profile's env, or run `codex login`"
    )


def proves_nothing_happened(run: CodexRun, trace: CodexTrace) -> bool:
    """Whether the stream and the trace together show the model never produced anything."""
    stream_says_nothing = (
        run.failed
        and not run.completed
        and run.malformed == 0
        and run.tool_items == run.text_items == run.unknown_items == 0
    )
    refused = bool(trace.request_statuses) and all(
        status is not None and status >= 400 for status in trace.request_statuses
    )
    refused = refused or (missing_key(run) is not None and not trace.request_statuses)
    return (
        stream_says_nothing
        and trace.complete
        and trace.sampling_requests == 1
        and trace.sampling_retries == 0
        and trace.sse_events == 0
        and trace.tool_calls == 0
        and refused
    )


def codex_evidence(run: CodexRun, trace: CodexTrace) -> Evidence:
    """The failure evidence of a codex run (see the module rules)."""
    ref = f"codex-jsonl:events 0-{max(run.events - 1, 0)}"
    if proves_nothing_happened(run, trace):
        statuses = ",".join(str(s) for s in trace.request_statuses[:10])
        statuses += ",…" if len(trace.request_statuses) > 10 else ""
        sent = f"HTTP {statuses}" if statuses else f"not sent (no {missing_key(run)})"
        return Evidence(
            effects="absent",
            output="absent",
            refusal="absent",
            source="codex:jsonl",
            ref=f"{ref}; codex-trace:1 model request, {sent}, 0 stream events",
        )
    effects: Observation = "observed" if run.tool_items or trace.tool_calls else "unknown"
    output: Observation = "observed" if run.text_items else "unknown"
    if run.events == 0 or (effects == output == "unknown"):
        return Evidence()
    return Evidence(effects=effects, output=output, source="codex:jsonl", ref=ref)


def chooses_sandbox(args: Iterable[str]) -> bool:
    """Whether codex arguments pick a sandbox mode themselves (then none is added)."""
    return any(
        arg in SANDBOX_FLAGS or arg.startswith(("--sandbox=", "sandbox_mode=")) for arg in args
    )


class CodexHarness:
    """Runs ``codex exec --json`` once per agent call."""

    name: Final = "codex"

    def __init__(self, base_dir: Path) -> None:
        """Args:
        base_dir: the goal file's folder (codex resolves nothing against it).
        """
        self.base_dir = base_dir

    def binary(self, profile: Profile) -> str | None:
        """The executable looked up on the child's ``PATH``."""
        return CODEX_BINARY

    def argv(self, profile: Profile) -> tuple[str, ...]:
        """The argument list; the prompt goes on stdin (the final ``-``)."""
        model = ("--model", profile.model) if profile.model else ()
        sandbox = () if chooses_sandbox(profile.args) else DEFAULT_SANDBOX
        return (
            CODEX_BINARY,
            "exec",
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
        """Run codex once; see the module rules for what it reports."""
        events = CodexEvents()
        result = run_process(
            self.argv(profile),
            stdin=prompt.encode("utf-8"),
            env=self.environment(profile, env),
            cwd=cwd,
            timeout_s=profile.timeout_s,
            on_stdout_line=events.feed,
        )
        return codex_result(result, events.result(), Redactor(env))


def codex_result(result: ProcessResult, run: CodexRun, redact: Redactor) -> SpawnResult:
    """Turn a finished codex process and its parsed stream into a classified result."""
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
    return spawn_result(
        replace(result, stderr_tail=without_trace(result.stderr_tail)),
        redact,
        ok=ok,
        reply=run.reply if ok else None,
        evidence=codex_evidence(run, trace).model_copy(update={"partial": partial_of(result)}),
        vendor_status=codex_status(run, trace),
        vendor_retries=trace.retried + (None,) * (trace.sampling_retries or 0),
        credential=None if ok else codex_credential(run, trace),
    )
