"""Agent commands: ``probe`` (one call through a harness) and ``doctor`` (are the binaries there?)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from governor.cli.exit_codes import ExitCode
from governor.cli.io import json_line, out, store_from
from governor.cli.values import seconds
from governor.core.event_fields import Profile
from governor.core.events import GoalCreated
from governor.drive.goalfile import goal_from_file
from governor.exec.cli_pins import cli_pins, range_note, standing, version_of
from governor.exec.environment import scrubbed_env
from governor.exec.gemini import DIR_VAR, insecure_ancestor, settings_root
from governor.exec.harness import INSTALL, harness_for
from governor.exec.process import run_process
from governor.exec.python import PythonHarness
from governor.exec.startable import has_start_format
from governor.render.text import format_probe

DEFAULT_PROMPT: Final = (
    'Reply with exactly this JSON object and nothing else: {"status": "done", "summary": "probe"}'
)
DOCTOR_HELP: Final = (
    "check that the binaries goal files need are on PATH (codex and claude answer "
    "--version, within the releases governor supports) and that python agents import"
)


def cmd_probe(args: argparse.Namespace) -> int:
    profile = Profile(
        harness=args.harness,
        model=args.model,
        timeout_s=args.timeout_s,
        env=tuple(args.pass_env or ()),
        args=tuple(args.arg or ()),
        max_attempts=1,
    )
    harness = harness_for(profile, Path.cwd())
    result = harness.run(args.prompt, profile, cwd=Path.cwd(), env=dict(os.environ))
    if args.json:
        json_line(result.model_dump(mode="json", by_alias=True))
    else:
        out(format_probe(result))
    return ExitCode.OK if result.ok else ExitCode.AGENT_FAILED


@dataclass(frozen=True, slots=True)
class Check:
    profile: str
    harness: str
    binary: str | None
    path: str | None
    version: str | None
    problem: str | None
    support: str | None = None
    """Where a vendor CLI's version stands against the pins (``governor.exec.cli_pins``):
    supported, older, newer or unknown; None for other harnesses."""
    note: str | None = None
    """What doctor says about a version outside the supported range (a warning)."""


VERSIONED: Final = frozenset({"codex", "claude", "gemini"})
"""Harnesses whose binary is a known vendor CLI: ``--version`` prints its version and
starts no agent session. Any other binary is an agent itself and is never run here."""


def check_binary(profile_name: str, profile: Profile, env: dict[str, str]) -> Check:
    """Is the profile's binary on PATH and executable (and, for codex and claude, does
    ``--version`` run)? A command agent is looked at, never run; a python agent is
    imported for real instead."""
    harness = harness_for(profile, Path.cwd())
    if isinstance(harness, PythonHarness):
        return check_import(profile_name, profile, harness)
    check = _check_path(profile_name, profile, env, harness.binary(profile))
    if profile.harness == "gemini" and check.problem is None:
        return _gemini_settings(check, env)
    return check


def _gemini_settings(check: Check, env: dict[str, str]) -> Check:
    """``check`` with a warning when gemini would ignore governor's retry bound: its call
    settings would sit in a folder others can write (``governor.exec.gemini``)."""
    root = settings_root(env)
    shared = insecure_ancestor(root) if root is not None else None
    if shared is None:
        return check
    why = (
        f"gemini ignores settings under {shared} (others can write it), so its own silent "
        f"retries would come back: set {DIR_VAR} to a folder only you can write"
    )
    return dataclasses.replace(check, note="; ".join(n for n in (check.note, why) if n))


def _check_path(
    profile_name: str, profile: Profile, env: dict[str, str], binary: str | None
) -> Check:
    if binary is None:
        return Check(profile_name, profile.harness, None, None, None, None)
    found = shutil.which(binary, path=env.get("PATH"))
    if found is None:
        hint = INSTALL.get(profile.harness, f"install {binary} or put it on PATH")
        return Check(profile_name, profile.harness, binary, None, None, _absent(binary, hint))
    if profile.harness not in VERSIONED:
        if not has_start_format(found):
            why = "it does not begin with #! or a binary header, so the system cannot start it"
            return Check(profile_name, profile.harness, binary, found, None, f"{found}: {why}")
        return Check(profile_name, profile.harness, binary, found, None, None)
    result = run_process([found, "--version"], env=scrubbed_env(env, ()), timeout_s=30)
    text = (
        (result.stdout_head or result.stderr_tail).decode("utf-8", "replace").strip().splitlines()
    )
    if result.spawn_errno or result.timed_out or result.exit_code != 0:
        why = result.spawn_error or (
            "timed out" if result.timed_out else f"exited {result.exit_code}"
        )
        return Check(
            profile_name, profile.harness, binary, found, None, f"{found} does not run: {why}"
        )
    version = text[0] if text else None
    check = Check(profile_name, profile.harness, binary, found, version, None)
    return versioned(check)


def versioned(check: Check) -> Check:
    """``check`` with where its CLI's version stands against the pinned range (issue 32)."""
    pin = cli_pins().get(check.harness)
    if pin is None:
        return check
    version = version_of(check.version)
    return dataclasses.replace(
        check,
        support=standing(pin, version),
        note=range_note(pin, version),
    )


def _absent(binary: str, hint: str) -> str:
    """Why ``shutil.which`` found nothing: not there, or there but not executable."""
    if "/" in binary and Path(binary).is_file():
        return f"{binary} is not executable: chmod +x {binary}"
    return f"{binary} is not on PATH: {hint}"


def check_import(profile_name: str, profile: Profile, harness: PythonHarness) -> Check:
    """Does the python agent import, and is it something the harness can call?"""
    target = profile.args[0] if profile.args else None
    try:
        harness.load(profile)
    except LookupError as exc:
        return Check(profile_name, profile.harness, None, target, None, str(exc))
    return Check(profile_name, profile.harness, None, target, None, None)


def _profiles(goal_files: Iterable[str]) -> dict[str, Profile]:
    found: dict[str, Profile] = {}
    for name in goal_files:
        created = goal_from_file(Path(name), at=datetime.now(UTC))[0]
        assert isinstance(created, GoalCreated)
        found.update({f"{name}:{p}": profile for p, profile in created.profiles.items()})
    return found or {"codex": Profile(harness="codex"), "claude": Profile(harness="claude")}


def cmd_doctor(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    checks = [
        check_binary(name, profile, env) for name, profile in _profiles(args.goal_files).items()
    ]
    for check in checks:
        if args.json:
            json_line(dataclasses.asdict(check))
        elif check.problem:
            out(f"missing: {check.profile}: {check.problem}")
        elif check.harness == "python":
            out(f"ok: {check.profile}: {check.path} imports")
        elif check.binary is None:
            out(f"ok: {check.profile}: the {check.harness} harness needs no binary")
        else:
            version = check.version or (
                "no version printed" if check.harness in VERSIONED else "executable; not run"
            )
            out(f"ok: {check.profile}: {check.path} ({version})")
        if check.note and not args.json:
            out(f"warning: {check.profile}: {check.note}")
    report_drift(args)
    return ExitCode.AGENT_FAILED if any(c.problem for c in checks) else ExitCode.OK


def report_drift(args: argparse.Namespace) -> None:
    """The drift report of the store, when there is one (``governor.analysis.drift``)."""
    from governor.analysis.drift import store_drift  # noqa: PLC0415 - only with a store
    from governor.errors import GovernorError  # noqa: PLC0415

    try:
        with store_from(getattr(args, "store", None), read_only=True) as store:
            drifts = store_drift(store)
    except GovernorError:
        return  # no store: nothing recorded to compare
    for found in drifts:
        if args.json:
            json_line({"drift": found.as_json()})
        else:
            out(f"drift: {found.line()}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "probe", help="run one agent call through a harness; show its class, evidence and rule"
    )
    p.add_argument(
        "harness",
        choices=("codex", "claude", "gemini", "command", "python", "scripted"),
        help="the harness that runs the agent (as a profile's harness)",
    )
    p.add_argument(
        "--prompt",
        default=DEFAULT_PROMPT,
        help="the prompt to send (default: ask for a one-line JSON reply)",
    )
    p.add_argument(
        "--model", default=None, help="the model (codex, claude, gemini; default: the CLI's own)"
    )
    p.add_argument(
        "--timeout-s",
        type=seconds,
        default=120.0,
        dest="timeout_s",
        metavar="DURATION",
        help="the wall-clock limit of the call: 90, 90s, 5m (default 120)",
    )
    p.add_argument(
        "--pass-env",
        action="append",
        metavar="NAME",
        help="pass this variable to the agent (repeatable)",
    )
    p.add_argument(
        "--arg",
        action="append",
        metavar="ARG",
        help="a harness argument (repeatable): the command and its arguments, a scenario file, module:function",
    )
    p.add_argument("--json", action="store_true", help="print the SpawnResult as JSON")
    p.set_defaults(func=cmd_probe)

    p = sub.add_parser(
        "doctor",
        help=DOCTOR_HELP,
        description=DOCTOR_HELP + ". No agent session is started and no goal changes.",
    )
    p.add_argument(
        "goal_files",
        nargs="*",
        metavar="GOAL_FILE",
        help="goal files (default: check codex and claude)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per check")
    p.set_defaults(func=cmd_doctor)
