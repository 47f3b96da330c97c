"""SPEC §7-§10 read line by line against the real command (audit B).

Each test names the sentence of the spec (or of docs/cli.md, which restates it) that the
command broke before, and drives the real ``governor`` in a temporary folder.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.hardening.run import assert_one_line, governor


def test_upstreams_never_creates_a_store(tmp_path: Path) -> None:
    """docs/cli.md: every command that only reads "never creates or upgrades a store: with
    none there it exits 4 naming the store it looked for" (SPEC §10: nothing is changed)."""
    result = governor(tmp_path, "upstreams", env={"GOVERNOR_STORE": ""})
    assert_one_line(result, 4, "no store at .governor/governor.db", "never creates")
    as_json = governor(tmp_path, "upstreams", "--json", env={"GOVERNOR_STORE": ""})
    assert_one_line(as_json, 4, "no store at")
    assert list(tmp_path.iterdir()) == []


def test_upstreams_reads_an_existing_store(tmp_path: Path) -> None:
    golden = Path(__file__).resolve().parent.parent / "golden" / "replans_exhausted.jsonl"
    assert governor(tmp_path, "import", str(golden)).returncode == 0
    before = (tmp_path / "s.db").stat().st_mtime_ns
    result = governor(tmp_path, "upstreams", "--json")
    assert result.returncode == 0, result.stderr
    assert [orjson.loads(line) for line in result.stdout.splitlines()] == []
    assert (tmp_path / "s.db").stat().st_mtime_ns == before


def _goal(tmp_path: Path, worker: dict[str, object]) -> str:
    spec = {
        "id": "g",
        "title": "t",
        "objective": "o",
        "planner": "p",
        "worker": "w",
        "profiles": {"p": {"harness": "scripted"}, "w": worker},
    }
    (tmp_path / "goal.json").write_text(orjson.dumps(spec).decode())
    return "goal.json"


@pytest.mark.parametrize(
    ("worker", "said"),
    [
        ({"harness": "command"}, "profiles.w: args: a 'command' profile needs args = [executable"),
        ({"harness": "command", "args": [""]}, "a 'command' profile needs args = [executable"),
        (
            {"harness": "python"},
            "profiles.w: args: a 'python' profile names its agent as args = ['",
        ),
        ({"harness": "python", "args": ["agents"]}, "names its agent as args = ['module:name']"),
        ({"harness": "scripted", "args": ["a.json", "b.json"]}, "takes args = [] or [scenario"),
    ],
)
def test_a_profile_whose_harness_cannot_run_is_refused_by_new(
    tmp_path: Path, worker: dict[str, object], said: str
) -> None:
    """SPEC §7: a `command` profile's args are "executable and arguments"; SPEC §10: bad
    input gets "a clear one-line error naming what is wrong and where". Before, `new`
    accepted a command profile without args, and every attempt then failed *charged*
    ("governor could not record the run"), spending the whole budget."""
    result = governor(tmp_path, "new", _goal(tmp_path, worker))
    assert_one_line(result, 3, "goal.json: ", said)
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize(
    "worker",
    [
        {"harness": "command", "args": ["bin/agent", "--fast"]},
        {"harness": "python", "args": ["agents.py:work"]},
        {"harness": "scripted"},
        {"harness": "scripted", "args": ["s.json"]},
        {"harness": "codex"},
        {"harness": "claude", "args": []},
    ],
)
def test_profiles_that_can_run_are_accepted(tmp_path: Path, worker: dict[str, object]) -> None:
    result = governor(tmp_path, "new", _goal(tmp_path, worker))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "g"
