"""SPEC §7-§10 read line by line against the real command (audit B).

Each test names the sentence of the spec (or of docs/cli.md, which restates it) that the
command broke before, and drives the real ``governor`` in a temporary folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from governor.workflow.briefs import PLANNER_SCHEMA, WORKER_SCHEMA
from tests.e2e.cli import Project, done, plan
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
    # doctor said "ok: … the command harness needs no binary" for such a profile
    assert_one_line(governor(tmp_path, "doctor", "goal.json"), 3, said)


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


RECORDING_PLANNER = f"""prompt=$(cat)
printf '%s' "$prompt" > "planner-prompt-$(date +%s%N).txt"
case "$prompt" in *"asked now: milestone"*) echo '{{"decision": "complete", "rationale": "done"}}' ;;
*) echo '{json.dumps(plan("a"))}' ;; esac
"""
RECORDING_WORKER = f"""prompt=$(cat)
printf '%s' "$prompt" > worker-prompt.txt
echo '{json.dumps(done("a"))}'
"""


def test_a_profiles_instructions_reach_its_agent(tmp_path: Path) -> None:
    """SPEC §7: a profile has `instructions` (docs/goals.md: "extra text for the agent").
    Before, only the python harness passed them on (in its context); a command, codex,
    claude or scripted agent never saw them."""
    project = Project(tmp_path)
    planner = project.script("planner", RECORDING_PLANNER)
    worker = project.script("worker", RECORDING_WORKER)
    project.goal(
        "g",
        {"harness": "command", "args": [planner], "instructions": "Plan in small steps."},
        {"harness": "command", "args": [worker], "instructions": "Write TypeScript, not JS."},
    )
    result = project.gov("run", "g")
    assert result.returncode == 0, result.stderr
    planner_prompts = [p.read_text() for p in sorted(tmp_path.glob("planner-prompt-*.txt"))]
    assert len(planner_prompts) == 2
    for prompt in planner_prompts:
        assert "# Instructions for this agent\nPlan in small steps.\n" in prompt
        assert "TypeScript" not in prompt
        assert prompt.rstrip().endswith(PLANNER_SCHEMA)  # the answer's shape stays last
    worker_prompt = (tmp_path / "worker-prompt.txt").read_text()
    assert "# Instructions for this agent\nWrite TypeScript, not JS.\n" in worker_prompt
    assert "small steps" not in worker_prompt
    assert worker_prompt.rstrip().endswith(WORKER_SCHEMA)


def test_a_prompt_without_instructions_has_no_such_section(tmp_path: Path) -> None:
    project = Project(tmp_path)
    worker = project.script("worker", RECORDING_WORKER)
    project.goal(
        "g",
        {"harness": "command", "args": [project.script("planner", RECORDING_PLANNER)]},
        {"harness": "command", "args": [worker]},
    )
    assert project.gov("run", "g").returncode == 0
    assert "Instructions" not in (tmp_path / "worker-prompt.txt").read_text()


def test_demo_into_a_folder_it_cannot_make_is_one_line(tmp_path: Path) -> None:
    """SPEC §10: bad input gets "a clear one-line error naming what is wrong and where, a
    non-zero exit code". Before, `demo --dir FILE` was an internal error (exit 1)."""
    taken = tmp_path / "taken.txt"
    taken.write_text("mine")
    result = governor(tmp_path, "demo", "--dir", str(taken))
    assert_one_line(result, 3, f"--dir {taken}: is a file, not a folder")
    assert taken.read_text() == "mine"
    under = governor(tmp_path, "demo", "--dir", str(taken / "sub"))
    assert_one_line(under, 3, f"--dir {taken / 'sub'}: cannot make the folder")


def test_list_refuses_a_status_no_goal_can_have(tmp_path: Path) -> None:
    """SPEC §10 (bad input is an error, not an empty answer): `list --status bogus` printed
    "no goals with status bogus" and exited 0."""
    golden = Path(__file__).resolve().parent.parent / "golden" / "replans_exhausted.jsonl"
    assert governor(tmp_path, "import", str(golden)).returncode == 0
    result = governor(tmp_path, "list", "--status", "bogus")
    assert_one_line(result, 2, "argument --status: invalid choice: 'bogus'", "budget_exhausted")
    good = governor(tmp_path, "list", "--status", "budget_exhausted", "--json")
    assert good.returncode == 0, good.stderr
    assert [orjson.loads(line)["status"] for line in good.stdout.splitlines()] == [
        "budget_exhausted"
    ]


EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "login-page.jsonl"


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--policy", ""), "--policy: give at least one field=value"),
        (("--policy", " , "), "--policy: give at least one field=value"),
        (("--policy", "max_replans=8", "--at", "3"), "--at does not apply to a what-if"),
    ],
)
def test_a_what_if_that_would_ignore_what_was_asked_is_refused(
    tmp_path: Path, extra: tuple[str, ...], said: str
) -> None:
    """SPEC §9 `replay --policy` re-folds under another policy; §10 bad input is an error.
    Before, `--policy ""` printed a plain replay and `--at` beside `--policy` was dropped
    without a word (both exit 0)."""
    result = governor(tmp_path, "replay", str(EXAMPLE), *extra)
    assert_one_line(result, 3, said)
    assert result.stdout == ""


def test_a_what_if_still_answers(tmp_path: Path) -> None:
    result = governor(tmp_path, "replay", str(EXAMPLE), "--policy", "max_replans=8", "--json")
    assert result.returncode == 0, result.stderr
    assert orjson.loads(result.stdout)["overrides"] == {"max_replans": 8}


def test_a_secret_of_the_environment_never_goes_into_a_history_from_an_operator(
    tmp_path: Path,
) -> None:
    """SPEC §10: "API keys and bearer tokens never land in events or logs (redact … the
    values of variables named `*_KEY`, `*_TOKEN`, `*_SECRET`)". Before, a goal file or a
    `--reason` holding such a value was stored as written (agents' output was redacted)."""
    secret = "s3cr3t-value-of-my-token"
    env = {"MY_API_TOKEN": secret}
    spec = {
        "id": "g",
        "title": "t",
        "objective": f"log in with {secret}",
        "planner": "p",
        "worker": "p",
        "profiles": {"p": {"harness": "scripted"}},
    }
    (tmp_path / "goal.json").write_text(orjson.dumps(spec).decode())
    refused = governor(tmp_path, "new", "goal.json", env=env)
    line = assert_one_line(refused, 3, "goal.json holds the value of $MY_API_TOKEN")
    assert secret not in line
    assert not (tmp_path / "s.db").exists()

    spec["objective"] = "log in"
    (tmp_path / "goal.json").write_text(orjson.dumps(spec).decode())
    assert governor(tmp_path, "new", "goal.json", env=env).returncode == 0
    cancel = governor(tmp_path, "cancel", "g", "--reason", f"key {secret}", env=env)
    assert_one_line(cancel, 3, "--reason holds the value of $MY_API_TOKEN")
    exported = governor(tmp_path, "export", "g", env=env)
    assert secret not in exported.stdout
    assert [orjson.loads(line)["type"] for line in exported.stdout.splitlines()] == ["goal.created"]
