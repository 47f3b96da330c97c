"""The scripted agent: a real process that plays one step of a scenario file per invocation.

Run as ``python -m governor.exec.scripted_player SCENARIO_FILE`` with the prompt on stdin.
It uses the standard library only, so it starts fast and behaves like any other CLI.

Rules (the format is documented with an example in ``docs/exec.md``):
    * A scenario (JSON, or TOML when the file ends in ``.toml``) is an ordered list of
      ``scripts``. The first script whose ``match`` (a substring, or a list of
      substrings that must all occur) is contained in the prompt plays; a script
      without ``match`` matches every prompt, so put the fallback last. No match is an
      error (exit 2).
    * Each invocation plays the script's *next* step; steps advance across separate
      processes through a state file. When a script is exhausted, its last step
      repeats.
    * The state file lives in ``$GOVERNOR_SCRIPTED_STATE`` (a folder), else next to the
      scenario, named ``<stem>-<12 hex of the scenario's path digest>.state.json``.
      It is read and replaced atomically under an ``fcntl.flock`` on a sibling
      ``.lock`` file, so concurrent players never play the same step twice. Editing the
      scenario (its bytes change) starts every script from its first step again.
    * A step plays in a fixed order: ``stdout``, ``effects`` (declared), ``delay_s``,
      ``stderr``, ``vendor_error`` (a vendor-like text on stderr), ``reply``, then the
      envelope line, then exit with ``exit_code`` (default 0, or 1 with a vendor error).
    * The last stdout line is the envelope ``{"scripted": {...}}``: what the step did
      (output bytes and sha256, effects, refusal, vendor status, Retry-After, cost),
      so the adapter observes positively. A player killed before it (a timeout) leaves
      no envelope, and the adapter then knows nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final

STATE_VAR: Final = "GOVERNOR_SCRIPTED_STATE"
"""Names the folder that holds the players' state files."""
ENVELOPE_KEY: Final = "scripted"
STEP_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "stdout": (str,),
    "effects": (bool,),
    "delay_s": (int, float),
    "stderr": (str,),
    "vendor_error": (dict,),
    "reply": (str, dict),
    "refusal": (bool,),
    "cost_usd": (int, float),
    "exit_code": (int,),
    "note": (str,),
}
"""Every key a step may have and the types it takes (``note`` is a comment, ignored)."""
NON_NEGATIVE: Final = frozenset({"delay_s", "cost_usd", "retry_after_s"})
SCRIPT_KEYS: Final = frozenset({"name", "match", "steps", "note"})
SCENARIO_KEYS: Final = frozenset({"name", "description", "scripts"})
VENDOR_ERROR_KEYS: Final = frozenset({"status", "message", "retry_after_s"})
EXIT_BAD_SCENARIO: Final = 2


class ScenarioError(Exception):
    """The scenario file cannot be read or breaks the format."""


@dataclass(frozen=True, slots=True)
class Script:
    """One sequence of steps, played for the prompts that contain all of ``match``."""

    name: str
    match: tuple[str, ...]
    steps: tuple[dict[str, Any], ...]

    def matches(self, prompt: str) -> bool:
        """Whether this script plays for ``prompt``."""
        return all(part in prompt for part in self.match)


@dataclass(frozen=True, slots=True)
class Scenario:
    """A parsed scenario file."""

    name: str
    scripts: tuple[Script, ...]
    sha256: str

    def script_for(self, prompt: str) -> Script | None:
        """The first script that matches ``prompt``, if any."""
        return next((script for script in self.scripts if script.matches(prompt)), None)


def load_scenario(path: Path) -> Scenario:
    """Read and check a scenario file.

    Args:
        path: a ``.json`` or ``.toml`` scenario file.

    Raises:
        ScenarioError: it cannot be read or breaks the format; the message names the
            file and the offending script or step.
    """
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode()) if path.suffix == ".toml" else json.loads(raw)
    except (OSError, ValueError) as exc:
        raise ScenarioError(f"{path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("scripts"), list):
        raise ScenarioError(f"{path}: a scenario is an object with a list of 'scripts'")
    _check_keys(data, SCENARIO_KEYS, f"{path}")
    scripts = tuple(
        _script(item, n, f"{path}: script {n}") for n, item in enumerate(data["scripts"])
    )
    if not scripts:
        raise ScenarioError(f"{path}: 'scripts' is empty")
    names = [script.name for script in scripts]
    if len(set(names)) != len(names):
        raise ScenarioError(f"{path}: script names must be unique, got {names}")
    name = str(data.get("name") or path.stem)
    return Scenario(name=name, scripts=scripts, sha256=hashlib.sha256(raw).hexdigest())


def _script(item: object, number: int, where: str) -> Script:
    if not isinstance(item, dict):
        raise ScenarioError(f"{where}: a script is an object")
    _check_keys(item, SCRIPT_KEYS, where)
    match = item.get("match", ())
    match = (match,) if isinstance(match, str) else match
    if not isinstance(match, list | tuple) or not all(isinstance(m, str) for m in match):
        raise ScenarioError(f"{where}: 'match' is a string or a list of strings")
    steps = item.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ScenarioError(f"{where}: 'steps' must be a non-empty list")
    for n, step in enumerate(steps):
        _check_step(step, f"{where} step {n}")
    name = str(item.get("name") or f"script-{number}")
    return Script(name=name, match=tuple(match), steps=tuple(steps))


def _check_step(step: object, where: str) -> None:
    if not isinstance(step, dict):
        raise ScenarioError(f"{where}: a step is an object")
    _check_keys(step, frozenset(STEP_TYPES), where)
    for key, value in step.items():
        _check_value(key, value, STEP_TYPES[key], where)
    error = step.get("vendor_error")
    if error is not None:
        _check_keys(error, VENDOR_ERROR_KEYS, f"{where} vendor_error")
        _check_value("status", error.get("status"), (int,), f"{where} vendor_error")
        _check_value("retry_after_s", error.get("retry_after_s", 0), (int, float), where)


def _check_value(key: str, value: object, types: tuple[type, ...], where: str) -> None:
    # bool is an int to Python, never to a scenario author
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        names = " or ".join(kind.__name__ for kind in types)
        raise ScenarioError(f"{where}: '{key}' must be {names}")
    if isinstance(value, int | float) and key in NON_NEGATIVE and value < 0:
        raise ScenarioError(f"{where}: '{key}' must not be negative")


def _check_keys(data: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ScenarioError(f"{where}: unknown keys {unknown}; allowed: {sorted(allowed)}")


def state_path(scenario_path: Path, state_dir: Path | None) -> Path:
    """Where the step counters of ``scenario_path`` are kept."""
    resolved = scenario_path.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    folder = state_dir if state_dir is not None else resolved.parent
    return folder / f"{resolved.stem}-{digest}.state.json"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def take_step(scenario: Scenario, script: Script, path: Path) -> int:
    """Claim the next step of ``script`` and advance its counter; return the step's index.

    Args:
        scenario: the scenario being played (its digest resets stale state).
        script: the script that matched the prompt.
        path: the state file (see ``state_path``).
    """
    with _locked(path):
        state = _read_state(path)
        if state.get("scenario_sha256") != scenario.sha256:
            state = {"scenario_sha256": scenario.sha256, "next": {}}
        played = int(state["next"].get(script.name, 0))
        state["next"][script.name] = played + 1
        _write_atomically(path, json.dumps(state, indent=2, sort_keys=True) + "\n")
    return min(played, len(script.steps) - 1)


def _read_state(path: Path) -> dict[str, Any]:
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) and isinstance(state.get("next"), dict) else {}


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def vendor_error_text(error: dict[str, Any]) -> str:
    """A vendor-like error text for a structured vendor error, ending in a newline."""
    status = int(error["status"])
    reason = "Site Overloaded" if status == 529 else _reason(status)
    lines = [f"error: the model provider answered HTTP/1.1 {status} {reason}".rstrip()]
    if error.get("message"):
        lines.append(str(error["message"]))
    if error.get("retry_after_s") is not None:
        lines.append(f"retry-after: {error['retry_after_s']}")
    return "\n".join(lines) + "\n"


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


class _Out:
    """The agent's stdout, counted and hashed (the envelope reports exactly this)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.sha = hashlib.sha256()
        self.last = b"\n"

    def write(self, text: str) -> None:
        data = text.encode()
        if data:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            self.bytes += len(data)
            self.sha.update(data)
            self.last = data[-1:]


def play(scenario: Scenario, script: Script, index: int) -> int:
    """Play one step; return its exit code."""
    step = script.steps[index]
    out = _Out()
    out.write(str(step.get("stdout", "")))
    time.sleep(float(step.get("delay_s", 0)))
    _stderr(str(step.get("stderr", "")))
    error = step.get("vendor_error")
    if error is not None:
        _stderr(vendor_error_text(error))
    reply = step.get("reply")
    if reply is not None:
        out.write(reply if isinstance(reply, str) else json.dumps(reply) + "\n")
    exit_code = int(step.get("exit_code", 1 if error is not None else 0))
    envelope = _envelope(scenario, script, index, out=out, exit_code=exit_code)
    separator = b"" if out.last == b"\n" else b"\n"
    sys.stdout.buffer.write(separator + json.dumps({ENVELOPE_KEY: envelope}).encode() + b"\n")
    sys.stdout.buffer.flush()
    return exit_code


def _envelope(
    scenario: Scenario, script: Script, index: int, *, out: _Out, exit_code: int
) -> dict[str, Any]:
    step = script.steps[index]
    error = step.get("vendor_error") or {}
    return {
        "scenario": scenario.name,
        "script": script.name,
        "step": index,
        "output": {"bytes": out.bytes, "sha256": out.sha.hexdigest()},
        "effects": bool(step.get("effects", False)),
        "refusal": bool(step.get("refusal", False)),
        "vendor_status": error.get("status"),
        "retry_after_s": error.get("retry_after_s"),
        "cost_usd": step.get("cost_usd"),
        "exit_code": exit_code,
    }


def _stderr(text: str) -> None:
    if text:
        sys.stderr.write(text)
        sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    """Play the next step for the prompt on stdin; return the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        _stderr("usage: python -m governor.exec.scripted_player SCENARIO_FILE\n")
        return EXIT_BAD_SCENARIO
    path = Path(args[0])
    prompt = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    try:
        scenario = load_scenario(path)
    except ScenarioError as exc:
        _stderr(f"scripted: {exc}\n")
        return EXIT_BAD_SCENARIO
    script = scenario.script_for(prompt)
    if script is None:
        _stderr(f"scripted: {path}: no script matches the prompt\n")
        return EXIT_BAD_SCENARIO
    state_dir = os.environ.get(STATE_VAR)
    index = take_step(scenario, script, state_path(path, Path(state_dir) if state_dir else None))
    return play(scenario, script, index)


if __name__ == "__main__":
    sys.exit(main())
