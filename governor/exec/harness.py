"""The harness protocol, the adapter registry, and the one translation of a process into a failure.

Rules:
    * A harness turns one agent call into a classified core ``SpawnResult``; it never
      raises for an expected outcome (a missing binary, a non-zero exit, a timeout).
    * Adapters build their failures here, so every adapter records the same thing:
      the failure text is stderr-then-stdout, decoded as UTF-8 (bad bytes replaced),
      redacted, then tail-preserved to ``ERROR_LIMIT`` by the core's ``failure_text``.
      Redaction comes *before* the cut, so a secret can neither survive in pieces nor
      push the text past the limit.
    * Output that a failed run wrote to stdout survives as ``Partial`` evidence (its
      size and sha256), never as a claim about what it meant.
    * Every adapter class takes the goal file's folder as its only constructor
      argument: ``Adapter(base_dir)``; ``harness_for`` picks one by ``profile.harness``.
"""

from __future__ import annotations

import importlib
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol, cast

import orjson

from governor.core.classify import ERROR_LIMIT, SpawnResult, classify, failure_text, tail
from governor.core.event_fields import Profile
from governor.core.evidence import UNKNOWN, Evidence, Partial
from governor.core.observation import ClaudeFacts, CodexFacts, Connection, Usage, WireFacts
from governor.errors import InputError
from governor.exec.environment import Redactor
from governor.exec.process import ProcessResult


class Harness(Protocol):
    """Runs one agent call and reports it as a classified ``SpawnResult``."""

    @property
    def name(self) -> str:
        """The profile's ``harness`` value this adapter serves (a plain attribute will do)."""
        ...

    def binary(self, profile: Profile) -> str | None:
        """The executable this profile needs (what ``governor doctor`` looks for), if any."""
        ...

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        """Run the agent once on ``prompt``.

        Args:
            prompt: the agent's input.
            profile: how to run it (arguments, model, timeout, passed variables).
            cwd: the working directory of the run.
            env: the *source* environment; the adapter scrubs it to an allow-list
                for the child and redacts the values of its secret-named variables
                from everything it records.
        """
        ...


_ADAPTERS: Final[dict[str, tuple[str, str]]] = {
    "command": ("governor.exec.command", "CommandHarness"),
    "scripted": ("governor.exec.scripted", "ScriptedHarness"),
    "codex": ("governor.exec.codex", "CodexHarness"),
    "claude": ("governor.exec.claude", "ClaudeHarness"),
    "gemini": ("governor.exec.gemini", "GeminiHarness"),
    "python": ("governor.exec.python", "PythonHarness"),
}
"""Harness name -> (module, class). Imported on demand: adapters import this module."""


def harness_for(profile: Profile, base_dir: Path) -> Harness:
    """The adapter that runs ``profile``.

    Args:
        profile: the agent profile; its ``harness`` picks the adapter.
        base_dir: the goal file's folder, against which relative paths resolve.

    Raises:
        InputError: no adapter serves this harness.
    """
    if profile.harness not in _ADAPTERS:
        raise InputError(f"harness '{profile.harness}' has no process adapter in governor.exec")
    module_name, class_name = _ADAPTERS[profile.harness]
    adapter = getattr(importlib.import_module(module_name), class_name)
    return cast(Callable[[Path], Harness], adapter)(base_dir)


ARGS_NEEDED: Final = {
    "command": "a 'command' profile needs args = [executable, *arguments]",
    "python": "a 'python' profile names its agent as args = ['module:name']",
    "scripted": "a 'scripted' profile takes args = [] or [scenario_file]",
}
"""What each harness needs of a profile's ``args`` (codex and claude take any)."""


def args_problem(harness: str, args: tuple[str, ...]) -> str | None:
    """Why ``args`` cannot run under ``harness`` (SPEC §7), or None when they can.

    Checked when a goal is created, so a profile that could never run is refused then,
    not charged at every attempt; the adapters refuse the same shapes at run time.
    """
    if harness == "command":
        fits = bool(args) and bool(args[0].strip())
    elif harness == "python":
        where, sep, attr = args[0].rpartition(":") if args else ("", "", "")
        fits = bool(sep and where and attr)
    elif harness == "scripted":
        fits = len(args) <= 1
    else:
        fits = True
    return None if fits else ARGS_NEEDED[harness]


def decode(data: bytes) -> str:
    """Child output as text: UTF-8, undecodable bytes replaced."""
    return data.decode("utf-8", errors="replace")


def json_value(text: str) -> Any:
    """``text`` as strict JSON (orjson: nesting bounded, no NaN, no lone surrogate), else None.

    An agent's output is read through here, never with ``json.loads``: deep nesting makes
    that raise ``RecursionError``, and an escaped lone surrogate would reach an event.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def json_event(text: str) -> dict[str, Any] | None:
    """One line of a CLI's JSON event stream: an object with a string ``type``, else None."""
    event = json_value(text)
    return event if isinstance(event, dict) and isinstance(event.get("type"), str) else None


def stdout_text(result: ProcessResult) -> str:
    """All of stdout when it fit in the head; otherwise its tail, marked with a leading ``…``."""
    if result.stdout_complete:
        return decode(result.stdout_head)
    return "…" + decode(result.stdout_tail)


def partial_of(result: ProcessResult) -> Partial | None:
    """The size and digest of what the child wrote to stdout, if it wrote anything."""
    if result.stdout_bytes == 0:
        return None
    return Partial(bytes=result.stdout_bytes, sha256=result.stdout_sha256)


def failure_of(result: ProcessResult, redact: Redactor, *, stdout: str | None = None) -> str:
    """The recorded failure text of a run: redacted, stderr-then-stdout, tail-preserved.

    Args:
        result: the process result.
        redact: the redactor for the run's source environment.
        stdout: the stdout text to use instead of the captured tail (an adapter
            that strips its own envelope passes what is left).

    Returns:
        At most ``ERROR_LIMIT`` characters. A run that never started, timed out, was
        killed by a signal or failed silently ends with a one-line note saying so.
    """
    note = tail(redact(_note(result)), ERROR_LIMIT // 4)
    out = redact(decode(result.stdout_tail) if stdout is None else stdout)
    room = ERROR_LIMIT - (len(note) + 1 if note else 0)
    # stderr usually ends in a newline; the core joins the two with one of its own
    err = redact(decode(result.stderr_tail)).rstrip("\n")
    body = failure_text(err, out, limit=room)
    return "\n".join(part for part in (body, note) if part)


INSTALL: Final = {
    "codex": "npm install -g @openai/codex",
    "claude": "npm install -g @anthropic-ai/claude-code",
    "gemini": "npm install -g @google/gemini-cli",
}
"""How to install each vendor CLI a harness runs (``governor doctor`` says the same)."""


def spawn_remedy(binary: str, errno_name: str | None) -> str:
    """What a person does about an agent that could not start: doctor's remedy, so a run's
    environment stop says it where the stop is shown, not only ``governor doctor``."""
    name = os.path.basename(binary)
    if errno_name == "EACCES":
        fix = f"make {name} executable (chmod +x) or point the profile at the right file"
    elif name in INSTALL:
        fix = f"install it ({INSTALL[name]}) or put it on PATH"
    else:
        fix = "install it or fix the path in the profile's args"
    return f"{fix}; governor doctor GOAL_FILE checks every profile"


def _note(result: ProcessResult) -> str:
    if not result.started:
        remedy = spawn_remedy(result.argv[0], result.spawn_errno)
        return f"could not start {result.argv[0]!r}: {result.spawn_error}; {remedy}"
    if result.timed_out:
        return f"timed out after {result.duration_s:.1f} s; its process group was killed"
    if result.stopped:
        return (
            f"ended by governor after {result.duration_s:.1f} s, at its first sign that the "
            "vendor cannot be reached; its process group was killed"
        )
    code = result.exit_code
    if code is not None and code < 0:
        return f"killed by signal {_signal_name(-code)}"
    if result.stdout_bytes == 0 and result.stderr_bytes == 0:
        return f"exited {code} with no output"
    return ""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def spawn_result(
    result: ProcessResult,
    redact: Redactor,
    *,
    ok: bool,
    reply: str | None = None,
    evidence: Evidence = UNKNOWN,
    stdout: str | None = None,
    vendor_status: int | None = None,
    vendor_retries: tuple[int | None, ...] = (),
    credential: str | None = None,
    retry_after_s: float | None = None,
    cost_usd: float | None = None,
    usage: Usage | None = None,
    vendor_code: str | None = None,
    billing: str | None = None,
    connection: Connection | None = None,
    connection_detail: str | None = None,
    endpoint: str | None = None,
    stream: ClaudeFacts | CodexFacts | None = None,
    wire: WireFacts | None = None,
    account: str | None = None,
) -> SpawnResult:
    """Turn a process result into a classified ``SpawnResult``.

    Args:
        result: the process result.
        redact: the redactor for the run's source environment.
        ok: whether the adapter accepts the run as a success.
        reply: the reply text on success (redacted here).
        evidence: what the adapter observed about a failure.
        stdout: stdout text for the failure text, when the adapter strips its own
            envelope from it.
        vendor_status: a status read from a structured vendor envelope.
        vendor_retries: statuses of refused requests the CLI retried by itself.
        credential: the remedy, when the adapter read a structured credential refusal.
        retry_after_s: the vendor's Retry-After hint.
        cost_usd: the cost the vendor reported.
        usage: the tokens the vendor reported.
        vendor_code: the vendor's structured error code.
        billing: the remedy, when the adapter read that the account cannot pay.
        connection: how the call got no HTTP response at all (SPEC §12.7).
        connection_detail: what said so.
        endpoint: the vendor endpoint, for the "never reached" remedy.
        stream: the stream facts the adapter's absence rule judged.
        wire: what governor's relay saw of the call (SPEC §13.1); its token usage stands
            in when the CLI reported none.
        account: the digest of the account the call ran under (SPEC §13.2).

    Returns:
        The result, classified by the core's rules (a success is never classed).
    """
    failed = not ok
    return classify(
        SpawnResult(
            ok=ok,
            exit_code=result.exit_code,
            spawn_errno=result.spawn_errno,
            timed_out=result.timed_out,
            vendor_status=vendor_status,
            vendor_retries=vendor_retries[:20],
            credential=credential if failed else None,
            error=failure_of(result, redact, stdout=stdout) if failed else None,
            evidence=evidence if failed else UNKNOWN,
            reply=redact(reply) if reply is not None else None,
            retry_after_s=retry_after_s,
            duration_s=result.duration_s,
            cost_usd=cost_usd,
            usage=usage if usage is not None or wire is None else wire.usage,
            vendor_code=vendor_code if failed else None,
            billing=billing if failed else None,
            connection=connection if failed else None,
            connection_detail=connection_detail[:100] if failed and connection_detail else None,
            stopped=result.stopped,
            endpoint=endpoint[:500] if failed and endpoint else None,
            stream=stream if failed else None,
            wire=wire,
            account=account,
        )
    )
