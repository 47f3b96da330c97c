"""What a new user ran into (issue 9, item 12), each through the real command.

* A worker that failed with EACCES (or ENOEXEC) stayed blocked after ``chmod +x`` (or
  a ``#!`` line) although docs/cli.md promises the runner resumes by itself.
* ``governor doctor`` ran command agents (``--version``): it must only look at them.
* The what-if ``--json`` ledger was all zeros (limit 0) for a stop "(1 of 1)".
* ``governor new missing.toml`` exited 3 (docs/cli.md: 4) and created a store.
* Typo suggestions came only for top-level keys of a goal file.
* ``governor list`` created ``.governor/governor.db`` and did not say which store it read.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from tests.e2e.cli import Project, done, plan, worker_script
from tests.hardening.run import assert_one_line, governor

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

PLANNER = f"""prompt=$(cat)
case "$prompt" in *"asked now: milestone"*) echo '{{"decision": "complete", "rationale": "done"}}' ;;
*) echo '{json.dumps(plan("a"))}' ;; esac
"""


@pytest.mark.parametrize("cause", ["EACCES", "ENOEXEC"])
def test_a_planner_that_could_not_start_is_re_probed_once_it_can(
    tmp_path: Path, cause: str
) -> None:
    project = Project(tmp_path)
    scenario = project.scenario("s.json", [worker_script("a", [{"reply": done("a")}])])
    agent = tmp_path / "bin" / "planner"
    agent.parent.mkdir()
    if cause == "EACCES":  # a good script, not executable
        agent.write_text("#!/bin/sh\n" + PLANNER)
        agent.chmod(0o644)
    else:  # executable, but no #! line: the kernel refuses its format
        agent.write_text(PLANNER)
        agent.chmod(0o755)
    project.goal(
        "g",
        {"harness": "command", "args": ["bin/planner"]},
        {"harness": "scripted", "args": [scenario]},
    )
    first = project.gov("run", "g")
    assert first.returncode == 10, first.stderr
    status = project.status("g")
    assert (status["status"], status["blocked_on"]) == ("blocked", "environment")
    failed = [e for e in project.events("g") if e["type"] == "plan.failed"]
    assert failed[-1]["evidence"]["ref"] == cause

    again = project.gov("run", "g")  # nothing changed: still blocked, nothing recorded
    assert again.returncode == 10, again.stderr
    assert project.types("g") == ["goal.created", "plan.requested", "plan.failed"]

    if cause == "EACCES":
        agent.chmod(0o755)
    else:
        agent.write_text("#!/bin/sh\n" + PLANNER)
    fixed = project.gov("run", "g")
    assert fixed.returncode == 0, fixed.stderr
    resumed = [e for e in project.events("g") if e["type"] == "goal.resumed"]
    assert len(resumed) == 1
    assert resumed[0]["actor"] == "governor"
    assert f"re-probed the environment ({cause} before)" in resumed[0]["reason"]
    assert project.status("g")["status"] == "succeeded"


def _doctor_goal(tmp_path: Path, agent: str) -> None:
    (tmp_path / "goal.json").write_text(
        json.dumps(
            {
                "title": "t",
                "objective": "o",
                "planner": "p",
                "worker": "w",
                "profiles": {
                    "p": {"harness": "command", "args": [agent]},
                    "w": {"harness": "scripted", "args": ["s.json"]},
                },
            }
        )
    )


def test_doctor_looks_at_a_command_agent_but_never_runs_it(tmp_path: Path) -> None:
    project = Project(tmp_path)
    _doctor_goal(tmp_path, "bin/agent")
    project.script("agent", f'touch "{tmp_path}/ran"\necho "agent 1.0"\n')
    result = project.gov("doctor", "goal.json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok: goal.json:p: " in result.stdout
    assert "executable; not run" in result.stdout
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    ("mode", "body", "problem"),
    [
        (0o644, "#!/bin/sh\necho hi\n", "is not executable: chmod +x"),
        (0o755, "echo hi\n", "does not begin with #!"),
    ],
)
def test_doctor_names_an_agent_that_cannot_start(
    tmp_path: Path, mode: int, body: str, problem: str
) -> None:
    agent = tmp_path / "bin" / "agent"
    agent.parent.mkdir()
    agent.write_text(body)
    agent.chmod(mode)
    _doctor_goal(tmp_path, "bin/agent")
    result = Project(tmp_path).gov("doctor", "goal.json")
    assert result.returncode == 8
    assert result.stdout.startswith("missing: goal.json:p: ")
    assert problem in result.stdout


def test_the_what_if_json_ledger_is_the_ledger_the_stop_names(tmp_path: Path) -> None:
    history = GOLDEN / "replans_exhausted.jsonl"
    result = governor(tmp_path, "replay", str(history), "--policy", "max_replans=1", "--json")
    assert result.returncode == 0, result.stderr
    record = orjson.loads(result.stdout)
    assert record["outcome"] == "stopped_earlier"
    for decision in (record["divergence"], record["final"]):
        assert "(1 of 1)" in decision["reason"]
        replans = decision["ledger"]["replans"]
        assert (replans["charged"], replans["limit"], replans["remaining"]) == (1, 1, 0)
        assert decision["ledger"]["attempts"]["limit"] == 100
        assert decision["ledger"]["runtime_s"] > 0


def test_new_with_a_missing_goal_file_exits_4_and_creates_no_store(tmp_path: Path) -> None:
    result = governor(tmp_path, "new", "missing.toml", env={"GOVERNOR_STORE": ""})
    assert_one_line(result, 4, "missing.toml", "no such file")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("profile", "policy", "said"),
    [
        ({"harnes": "scripted"}, {}, "profiles.p: unknown key 'harnes' (did you mean 'harness'?)"),
        ({"harness": "scripted", "max_atempts": 2}, {}, "(did you mean 'max_attempts'?)"),
        (
            {"harness": "scripted"},
            {"upstream_backoff": {"facter": 2}},
            "unknown policy field 'upstream_backoff.facter' (did you mean 'factor'?)",
        ),
        ({"harness": "scripted"}, {"max_replan": 2}, "(did you mean 'max_replans'?)"),
    ],
)
def test_a_typo_anywhere_in_a_goal_file_gets_a_suggestion(
    tmp_path: Path, profile: dict[str, object], policy: dict[str, object], said: str
) -> None:
    spec = {
        "title": "t",
        "objective": "o",
        "planner": "p",
        "worker": "p",
        "policy": policy,
        "profiles": {"p": profile},
    }
    (tmp_path / "goal.json").write_text(json.dumps(spec))
    assert_one_line(governor(tmp_path, "new", "goal.json"), 3, said)


def test_list_never_creates_a_store_and_says_which_it_reads(tmp_path: Path) -> None:
    fresh = governor(tmp_path, "list", env={"GOVERNOR_STORE": ""})
    line = assert_one_line(fresh, 4, "no store at .governor/governor.db", "never creates")
    assert "governor new" in line
    assert list(tmp_path.iterdir()) == []
    for read in (("status", "g"), ("events", "g"), ("export", "g"), ("service", "status")):
        result = governor(tmp_path, *read, env={"GOVERNOR_STORE": ""})
        assert_one_line(result, 4, "no store at")
    assert list(tmp_path.iterdir()) == []

    assert governor(tmp_path, "import", str(GOLDEN / "replans_exhausted.jsonl")).returncode == 0
    listed = governor(tmp_path, "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0] == f"store {tmp_path / 's.db'}: 1 goal"
    empty = governor(tmp_path, "list", "--status", "ready")
    assert empty.stdout.strip() == f"no goals with status ready in the store {tmp_path / 's.db'}"
