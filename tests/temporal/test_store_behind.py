"""A store restored one event behind a running workflow: the workflow fails, once, with one
message; the store stays the truth and the documented restart brings the goal back.

The goal blocks on a question; the store file is backed up (SQLite's backup API), an
operator's ``raise`` is recorded through the workflow (one event more), and the backup is
restored over the store. The next verb reaches the workflow: its append finds the store
behind (its fence: the seq and the digest of the event the workflow folded last), the verb
fails with the message (exit code of a store error), the workflow fails with it at once,
its history stays short (no loop), ``governor temporal doctor`` says how to restart, and
``governor temporal start`` picks the goal up from the store.
"""

from __future__ import annotations

import json
import sqlite3
import time

from governor.cli.exit_codes import ExitCode
from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.temporal.conftest import TemporalProject, workflow_of
from tests.temporal.test_cancel import temporal_cli
from tests.temporal.test_verbs import scripted, start

FAILED = "WORKFLOW_EXECUTION_STATUS_FAILED"
BEHIND = "goal r: the store is behind this workflow"


def copy_db(source: str, target: str) -> None:
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()


def describe(project: TemporalProject, goal_id: str) -> dict[str, object]:
    described = temporal_cli(
        project, "workflow", "describe", "-w", workflow_of(project, goal_id), "--output", "json"
    )
    assert described.returncode == 0, described.stderr
    info: dict[str, object] = json.loads(described.stdout)["workflowExecutionInfo"]
    return info


def test_a_store_behind_the_workflow_fails_it_once_and_the_goal_restarts(
    project: TemporalProject,
) -> None:
    question = {"status": "decision", "question": "Which database?", "summary": "need a choice"}
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": question}, {"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    start(project, "r", agents, agents)
    project.worker()
    project.wait_status("r", {"blocked"}, blocked_on="decision")
    store, backup = project.env["GOVERNOR_STORE"], str(project.root / "backup.db")
    copy_db(store, backup)
    seq = project.status("r")["seq"]

    more = ["raise", "r", "--ledger", "total_attempts", "--to", "200", "--reason", "more"]
    assert project.gov(*more).returncode == 0
    assert project.status("r")["seq"] == seq + 1
    copy_db(backup, store)  # the restore: the store is one event behind the workflow
    assert project.status("r")["seq"] == seq

    began = time.monotonic()
    refused = project.gov(*more[:-4], "--to", "300", "--reason", "more again")
    assert refused.returncode == ExitCode.STORE_ERROR, (refused.stdout, refused.stderr)
    line = refused.stderr.strip()
    assert line.startswith(f"error: {BEHIND} (the store holds the goal up to seq {seq}"), line
    assert "\n" not in line
    deadline = time.monotonic() + 60
    while (info := describe(project, "r"))["status"] != FAILED:
        assert time.monotonic() < deadline, info["status"]
        time.sleep(0.2)
    print(f"the workflow failed {time.monotonic() - began:.1f}s after the verb")
    assert int(str(info["historyLength"])) < 200
    assert project.status("r")["seq"] == seq, "the failing workflow wrote to the store"

    doctor = project.gov("temporal", "doctor", "r")
    assert doctor.returncode == 0, doctor.stderr
    lines = doctor.stdout.splitlines()
    assert lines[1].startswith(f"its Temporal workflow: failed: {BEHIND}"), lines
    assert lines[2].startswith("the store is the truth: governor temporal start r"), lines

    again = project.gov("temporal", "start", "r")
    assert again.returncode == 0, again.stderr
    project.wait_status("r", {"blocked"}, blocked_on="decision")
    answered = project.gov("work", "retry", "r", "p1-a", "--reason", "PostgreSQL")
    assert answered.returncode == 0, answered.stderr
    project.wait_status("r", {"succeeded"})
    assert "budget.raised" not in project.types("r")  # the store is the truth
