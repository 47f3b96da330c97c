"""``governor doctor`` says where each installed vendor CLI stands against the pins (issue 32).

The real pinned claude releases (``.cache/npm``, both ends of ``cli_pins.json``) are
supported; a real executable printing a version below the oldest, above the newest, or
none at all gets a warning line (and ``support``/``note`` in ``--json``), exit 0.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from governor.exec.cli_pins import CliPin, cli_pins, range_note, standing, version_of
from tests.e2e.cli import GOVERNOR
from tests.fakevendor.clis import GEMINI_CALLS, require_cli, tool_path

CLAUDE = cli_pins()["claude"]
REPO_CACHE = GEMINI_CALLS.parent


def doctor(path: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": path, "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run(
        [GOVERNOR, "doctor", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def claude_check(path: str, cwd: Path) -> dict[str, object]:
    done = doctor(path, cwd, "--json")
    checks: list[dict[str, object]] = [json.loads(line) for line in done.stdout.splitlines()]
    [check] = [c for c in checks if c["harness"] == "claude"]
    return check


def fake_claude(folder: Path, prints: str) -> str:
    folder.mkdir()
    script = folder / "claude"
    script.write_text(f"#!/bin/sh\necho '{prints}'\n")
    script.chmod(0o755)
    return f"{folder}:/usr/bin:/bin"


@pytest.mark.parametrize("version", CLAUDE.versions, ids=lambda v: f"claude-{v}")
def test_each_pinned_claude_is_supported(version: str, tmp_path: Path) -> None:
    cli = require_cli("claude", version)
    check = claude_check(tool_path(cli), tmp_path)
    assert (check["support"], check["note"], check["problem"]) == ("supported", None, None)
    assert version in str(check["version"])
    text = doctor(tool_path(cli), tmp_path)
    assert "warning: claude" not in text.stdout


@pytest.mark.parametrize(
    ("prints", "support", "says"),
    [
        ("9.0.0 (Claude Code)", "newer", "newer than the newest release governor was tested on"),
        ("2.0.1 (Claude Code)", "older", "older than the oldest release governor supports"),
        ("claude, some build", "unknown", "printed no version governor can read"),
    ],
    ids=["newer", "older", "no-version"],
)
def test_a_claude_outside_the_pins_is_a_warning_not_a_failure(
    prints: str, support: str, says: str, tmp_path: Path
) -> None:
    path = fake_claude(tmp_path / "bin", prints)
    check = claude_check(path, tmp_path)
    assert (check["support"], check["problem"]) == (support, None)
    assert says in str(check["note"])
    text = doctor(path, tmp_path)
    [warning] = [line for line in text.stdout.splitlines() if line.startswith("warning: claude")]
    assert says in warning
    assert f"ok: claude: {tmp_path / 'bin' / 'claude'}" in text.stdout


def test_the_range_note_names_both_ends() -> None:
    pin = CliPin("x", "@x/x", "1.2.3", "1.4.0")
    assert [standing(pin, v) for v in ("1.2.2", "1.2.3", "1.3.9", "1.4.0", "1.10.0")] == [
        "older",
        "supported",
        "supported",
        "supported",
        "newer",
    ]
    assert "(1.2.3)" in (range_note(pin, "1.0.0") or "")
    assert "npm install -g @x/x@1.4.0" in (range_note(pin, "1.0.0") or "")
    assert "(1.4.0)" in (range_note(pin, "2.0.0") or "")
    assert range_note(pin, "1.3.0") is None


@pytest.mark.parametrize(
    ("line", "version"),
    [
        ("2.1.332 (Claude Code)", "2.1.332"),
        ("codex-cli 0.171.0", "0.171.0"),
        ("0.61.0", "0.61.0"),
        ("0.62.0-nightly.20261001.gabc", "0.62.0"),
        ("v1.2", None),
        ("1.2.3.4", None),
        (None, None),
    ],
)
def test_version_of_reads_the_first_three_part_version(
    line: str | None, version: str | None
) -> None:
    assert version_of(line) == version


def test_every_pin_names_an_npm_package_and_an_ordered_range() -> None:
    for name, pin in cli_pins().items():
        assert pin.package.startswith("@"), name
        assert standing(pin, pin.oldest) == standing(pin, pin.newest) == "supported", name


def test_doctor_warns_when_gemini_would_ignore_governors_retry_bound(tmp_path: Path) -> None:
    cli = require_cli("gemini", cli_pins()["gemini"].oldest)
    goal = tmp_path / "goal.json"
    profile = {"harness": "gemini", "model": "gemini-2.5-flash"}
    goal.write_text(
        json.dumps(
            {
                "title": "t",
                "objective": "o",
                "planner": "g",
                "worker": "g",
                "profiles": {"g": profile},
            }
        )
    )
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    env = {"PATH": tool_path(cli), "HOME": str(tmp_path), "GOVERNOR_GEMINI_DIR": str(shared / "g")}
    done = subprocess.run(
        [GOVERNOR, "doctor", "goal.json", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    [check] = [json.loads(line) for line in done.stdout.splitlines()]
    assert (check["support"], check["problem"], done.returncode) == ("supported", None, 0)
    assert f"gemini ignores settings under {shared}" in check["note"]
    safe = REPO_CACHE / "doctor-gemini"
    safe.mkdir(mode=0o700, parents=True, exist_ok=True)
    env["GOVERNOR_GEMINI_DIR"] = str(safe)
    done = subprocess.run(
        [GOVERNOR, "doctor", "goal.json", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    [check] = [json.loads(line) for line in done.stdout.splitlines()]
    assert check["note"] is None
