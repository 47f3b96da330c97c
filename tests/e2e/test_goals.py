"""End to end (SPEC §6-§8): real ``governor`` processes, real agent subprocesses, a real SQLite file.

Each test asserts the final status, what it is blocked on, the ledger and the events.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

FAST_BACKOFF = {"upstream_backoff": {"initial_s": 0.05, "factor": 1, "max_s": 0.05}}
OUTAGE = {"vendor_error": {"status": 503, "message": "HTTP/1.1 503 Service Unavailable"}}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def scripted(project: Project, *scripts: dict[str, object]) -> dict[str, object]:
    return {"harness": "scripted", "args": [project.scenario("scenario.json", list(scripts))]}


def test_a_missing_planner_binary_stops_uncharged_and_recovers_when_it_appears(
    project: Project,
) -> None:
    worker = scripted(project, worker_script("a", [{"reply": done("a")}]))
    project.goal("g", {"harness": "command", "args": ["bin/planner"]}, worker)
    first = project.gov("run", "g")
    assert first.returncode == 10, first.stderr
    status = project.status("g")
    assert (status["status"], status["blocked_on"]) == ("blocked", "environment")
    assert "planning could not start; a required precondition is missing" in status["reason"]
    assert status["ledger"]["replans"] == {
        "used": 1,
        "charged": 0,
        "uncharged": 1,
        "consecutive_uncharged": 1,
        "limit": 5,
        "remaining": 5,
    }
    assert project.types("g") == ["goal.created", "plan.requested", "plan.failed"]

    reply = json.dumps(plan("a"))
    project.script(
        "planner",
        f"""prompt=$(cat)
case "$prompt" in *"asked now: milestone"*) echo '{{"decision": "complete", "rationale": "done"}}' ;;
*) echo '{reply}' ;; esac
""",
    )
    second = project.gov("run", "g")
    assert second.returncode == 0, second.stderr
    events = project.events("g")
    resumed = [e for e in events if e["type"] == "goal.resumed"]
    assert resumed
    assert resumed[0]["actor"] == "governor"
    assert "re-probed the environment" in resumed[0]["reason"]
    assert project.status("g")["status"] == "succeeded"


def test_three_scripted_503s_with_no_effect_evidence_block_on_upstream_uncharged(
    project: Project,
) -> None:
    project.goal(
        "g",
        scripted(project, planner_script([OUTAGE])),
        {"harness": "scripted", "args": ["scenario.json"]},
        **FAST_BACKOFF,
    )
    result = project.gov("run", "g")
    assert result.returncode == 10, result.stderr
    status = project.status("g")
    assert (status["status"], status["blocked_on"]) == ("blocked", "upstream")
    assert "after 3 consecutive uncharged planner failures" in status["reason"]
    assert status["ledger"]["replans"]["charged"] == 0
    assert status["ledger"]["replans"]["uncharged"] == 3
    assert project.types("g") == ["goal.created"] + ["plan.requested", "plan.failed"] * 3
    failures = [e for e in project.events("g") if e["type"] == "plan.failed"]
    assert all(
        f["class"] == "upstream" and f["evidence"]["source"] == "scripted:envelope"
        for f in failures
    )


def test_503_503_then_a_plan_succeeds_with_two_uncharged_replans(project: Project) -> None:
    scenario = scripted(
        project,
        planner_script([OUTAGE, OUTAGE, {"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [{"reply": done("a")}]),
    )
    project.goal("g", scenario, scenario, **FAST_BACKOFF)
    result = project.gov("run", "g")
    assert result.returncode == 0, result.stderr
    ledger = project.status("g")["ledger"]
    assert (ledger["replans"]["uncharged"], ledger["replans"]["charged"]) == (2, 2)
    assert ledger["work"]["p3-a"]["status"] == "succeeded"


def test_a_command_planner_printing_a_503_is_charged_by_the_evidence_gate(project: Project) -> None:
    planner = project.script(
        "planner", "cat >/dev/null\necho 'HTTP/1.1 503 Service Unavailable' >&2\nexit 1\n"
    )
    project.goal(
        "g",
        {"harness": "command", "args": [planner]},
        {"harness": "scripted", "args": ["x.json"]},
        max_replans=2,
    )
    result = project.gov("run", "g")
    assert result.returncode == 11, result.stderr
    status = project.status("g")
    assert (status["status"], status["exhausted"]) == ("budget_exhausted", "replans")
    assert (status["ledger"]["replans"]["charged"], status["ledger"]["replans"]["uncharged"]) == (
        2,
        0,
    )
    failures = [e for e in project.events("g") if e["type"] == "plan.failed"]
    assert [f["class"] for f in failures] == ["upstream", "upstream"]
    assert all(f["evidence"]["effects"] == "unknown" for f in failures)


def test_a_worker_out_of_attempts_is_replanned_around_then_the_goal_succeeds(
    project: Project,
) -> None:
    fail = {"effects": True, "stderr": "tests failed\n", "exit_code": 1}
    scenario = scripted(
        project,
        planner_script([{"reply": plan("a")}, {"reply": plan("b")}, {"reply": COMPLETE}]),
        worker_script("a", [fail]),
        worker_script("b", [{"reply": done("b")}]),
    )
    project.goal("g", scenario, scenario, max_attempts=2)
    result = project.gov("run", "g")
    assert result.returncode == 0, result.stderr
    events = project.events("g")
    a = [
        (e["type"], e["attempt"])
        for e in events
        if e.get("work_id") == "p1-a" and e["type"].startswith("attempt.")
    ]
    assert a == [
        ("attempt.started", 1),
        ("attempt.finished", 1),
        ("attempt.started", 2),
        ("attempt.finished", 2),
    ]
    assert [e["trigger"] for e in events if e["type"] == "plan.requested"] == [
        "initial",
        "replan",
        "milestone",
    ]
    ledger = project.status("g")["ledger"]
    assert ledger["work"]["p1-a"]["status"] == "budget_exhausted"
    assert ledger["work"]["p2-b"]["status"] == "succeeded"


def test_a_decision_blocks_the_goal_and_the_answer_reaches_the_next_worker_prompt(
    project: Project,
) -> None:
    worker = project.script(
        "worker",
        """prompt=$(cat)
case "$prompt" in
  *"Use SQLite"*) echo '{"status": "done", "summary": "used SQLite", "acceptance": [{"criterion": "a works", "status": "satisfied"}]}' ;;
  *) echo '{"status": "decision", "question": "Postgres or SQLite?"}' ;;
esac
""",
    )
    planner = scripted(project, planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]))
    project.goal("g", planner, {"harness": "command", "args": [worker]})
    first = project.gov("run", "g")
    assert first.returncode == 10
    status = project.status("g")
    assert (status["status"], status["blocked_on"]) == ("blocked", "decision")
    assert "Postgres or SQLite?" in status["reason"]
    assert status["ledger"]["work"]["p1-a"]["charged_attempts"] == 0
    retry = project.gov("work", "retry", "g", "p1-a", "--reason", "Use SQLite")
    assert retry.returncode == 0, retry.stderr
    second = project.gov("run", "g")
    assert second.returncode == 0, second.stderr
    retried = [e for e in project.events("g") if e["type"] == "work.retried"]
    assert retried[0]["reason"] == "Use SQLite"
    assert retried[0]["actor"].startswith("operator:")


def test_max_total_attempts_stops_the_goal_and_a_raise_lets_it_continue(project: Project) -> None:
    fail = {"effects": True, "stderr": "flaky\n", "exit_code": 1}
    scenario = scripted(
        project,
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [fail, {"reply": done("a")}]),
    )
    project.goal("g", scenario, scenario, max_total_attempts=1)
    first = project.gov("run", "g")
    assert first.returncode == 11, first.stderr
    status = project.status("g")
    assert (status["status"], status["exhausted"]) == ("budget_exhausted", "total_attempts")
    assert status["ledger"]["attempts"] == {"used": 1, "charged": 1, "limit": 1, "remaining": 0}
    refused = project.gov(
        "raise", "g", "--ledger", "total_attempts", "--to", "1", "--reason", "more"
    )
    assert refused.returncode == 5
    assert "the new limit must be higher" in refused.stderr
    raised = project.gov(
        "raise", "g", "--ledger", "total_attempts", "--to", "3", "--reason", "one more try"
    )
    assert raised.returncode == 0, raised.stderr
    second = project.gov("run", "g")
    assert second.returncode == 0, second.stderr
    raise_event = next(e for e in project.events("g") if e["type"] == "budget.raised")
    assert (raise_event["ledger"], raise_event["to"], raise_event["reason"]) == (
        "total_attempts",
        3,
        "one more try",
    )
    assert project.status("g")["ledger"]["attempts"]["limit"] == 3


def test_two_runs_of_one_goal_at_once_one_runs_the_other_names_the_holder(project: Project) -> None:
    # The first run's worker holds on until the test releases it (no assumption about how
    # long a second ``governor`` takes to start on a busy machine).
    release = project.root / "release"
    reply = json.dumps(done("a"))
    worker = project.script(
        "worker", f"cat >/dev/null\nwhile [ ! -f {release} ]; do sleep 0.05; done\necho '{reply}'\n"
    )
    scenario = scripted(project, planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]))
    project.goal("g", scenario, {"harness": "command", "args": [worker]})
    first = project.popen("run", "g")
    try:
        deadline = time.monotonic() + 120
        while project.status("g")["ledger"]["attempts"]["used"] == 0:
            assert time.monotonic() < deadline, "the first run never started the attempt"
            time.sleep(0.05)
        second = project.gov("run", "g")
        assert second.returncode == 6
        assert "held by" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1
    finally:
        release.touch()
        assert first.wait(timeout=120) == 0, first.stderr.read() if first.stderr else ""
    assert project.status("g")["status"] == "succeeded"


def test_status_list_and_export_import_round_trip(project: Project) -> None:
    scenario = scripted(
        project,
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [{"reply": done("a")}]),
    )
    project.goal("g", scenario, scenario)
    assert project.gov("run", "g", "--quiet").returncode == 0
    listed = project.gov("list", "--json")
    assert '"goal_id":"g"' in listed.stdout
    assert '"status":"succeeded"' in listed.stdout
    exported = project.gov("export", "g", "-o", "g.jsonl")
    assert exported.returncode == 0, exported.stderr
    other = Project(project.root / "other")
    other.root.mkdir()
    imported = other.gov("import", str(project.root / "g.jsonl"))
    assert imported.returncode == 0, imported.stderr
    again = other.gov("export", "g")
    assert again.stdout.encode() == (project.root / "g.jsonl").read_bytes()
    assert other.gov("import", str(project.root / "g.jsonl")).returncode == 5


def test_secrets_never_reach_events_or_log_lines_even_when_the_agent_prints_them(
    project: Project,
) -> None:
    project.env["MY_API_KEY"] = "supersecretvalue123"
    project.env["GITHUB_TOKEN"] = "ghp_notpassedatall0000000000000000000000"
    worker = project.script(
        "worker",
        "cat >/dev/null\n"
        'echo "key=$MY_API_KEY sk-abcdefghijklmnopqrstu12345 Authorization: Bearer tok3nvalue9999" >&2\n'
        'echo "github=$GITHUB_TOKEN" >&2\nexit 1\n',
    )
    planner = scripted(project, planner_script([{"reply": plan("a")}]))
    project.goal(
        "g",
        planner,
        {"harness": "command", "args": [worker], "env": ["MY_API_KEY"]},
        max_attempts=1,
        max_total_attempts=1,
    )
    result = project.gov("run", "g")
    assert result.returncode == 11
    recorded = (project.root / "governor.db").read_bytes() + project.gov(
        "events", "g", "--json"
    ).stdout.encode()
    logs = (result.stdout + result.stderr).encode()
    for secret in (
        b"supersecretvalue123",
        b"sk-abcdefghijklmnopqrstu12345",
        b"tok3nvalue9999",
        b"ghp_notpassed",
    ):
        assert secret not in recorded
        assert secret not in logs
    error = next(e for e in project.events("g") if e["type"] == "attempt.finished")["error"]
    assert "[REDACTED]" in error
    assert "github=" in error  # the unlisted variable never reached the child at all


def test_parallel_items_are_dispatched_at_once(project: Project) -> None:
    slow = {"delay_s": 0.5}
    scenario = scripted(
        project,
        planner_script([{"reply": plan("a", "b")}, {"reply": COMPLETE}]),
        worker_script("a", [{**slow, "reply": done("a")}]),
        worker_script("b", [{**slow, "reply": done("b")}]),
    )
    project.goal("g", scenario, scenario, max_parallel_work=2)
    assert project.gov("run", "g").returncode == 0
    attempts = [e["type"] for e in project.events("g") if e["type"].startswith("attempt.")]
    assert attempts[:2] == ["attempt.started", "attempt.started"]


def test_doctor_names_a_missing_binary_in_one_line_then_passes(project: Project) -> None:
    (project.root / "goal.json").write_text(
        json.dumps(
            {
                "title": "t",
                "objective": "o",
                "planner": "p",
                "worker": "w",
                "profiles": {
                    "p": {"harness": "command", "args": ["bin/plan-agent"]},
                    "w": {"harness": "scripted", "args": ["s.json"]},
                },
            }
        )
    )
    missing = project.gov("doctor", "goal.json")
    assert missing.returncode == 8
    assert missing.stdout.splitlines()[0].startswith("missing: goal.json:p: ")
    assert "plan-agent is not on PATH" in missing.stdout
    assert "ok: goal.json:w" in missing.stdout
    project.script("plan-agent", 'echo "plan-agent 1.0"\n')
    assert project.gov("doctor", "goal.json").returncode == 0


PYTHON_AGENTS = """
import json

def plan(prompt, context):
    if "asked now: milestone" in prompt:
        return {"decision": "complete", "rationale": "done"}
    return {"decision": "apply", "rationale": "r", "work": [
        {"key": "a", "title": "a", "objective": "do a", "acceptance": ["a works"]}]}

async def work(prompt, context):
    return {"status": "done", "summary": f"{context['work_id']} attempt {context['attempt']}",
            "acceptance": [{"criterion": c, "status": "satisfied"} for c in context["acceptance"]]}
"""


def python_goal(project: Project, agents: str) -> Path:
    """A goal file in ``goals/`` whose agents are ``pyagents.team:…`` beside it (no PYTHONPATH)."""
    folder = project.root / "goals" / "pyagents"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "team.py").write_text(agents)
    path = project.root / "goals" / "py.json"
    profile = {"harness": "python", "max_attempts": 1, "timeout_s": 60}
    path.write_text(
        json.dumps(
            {
                "id": "py",
                "title": "python agents",
                "objective": "o",
                "planner": "p",
                "worker": "w",
                "profiles": {
                    "p": {**profile, "args": ["pyagents.team:plan"]},
                    "w": {**profile, "args": ["pyagents.team:work"]},
                },
            }
        )
    )
    return path


def test_python_agents_beside_the_goal_file_import_and_drive_a_goal(project: Project) -> None:
    python_goal(project, PYTHON_AGENTS)
    checked = project.gov("doctor", "goals/py.json")
    assert checked.returncode == 0, checked.stdout
    assert "ok: goals/py.json:p: " in checked.stdout
    assert "imports" in checked.stdout
    assert project.gov("new", "goals/py.json").returncode == 0
    ran = project.gov("run", "py")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert project.status("py")["status"] == "succeeded"
    finished = next(e for e in project.events("py") if e["type"] == "attempt.finished")
    assert (finished["outcome"], finished["reason"]) == ("succeeded", "p1-a attempt 1")


def test_doctor_imports_python_agents_for_real(project: Project) -> None:
    python_goal(
        project, "def plan(prompt, context):\n    return 1 / 0\n\nimport no_such_dependency_xyz\n"
    )
    checked = project.gov("doctor", "goals/py.json")
    assert checked.returncode == 8
    assert "missing: goals/py.json:p: cannot import" in checked.stdout
    assert "no_such_dependency_xyz" in checked.stdout
