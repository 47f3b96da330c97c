"""A goal's workflow terminated from Temporal's side is noticed, and started again (SPEC §13.9).

``temporal workflow terminate`` leaves the goal's lease held by the Temporal server's
holder with nothing renewing it: ``governor status`` and ``list`` (text and ``--json``)
say its workflow is gone, a worker process's check releases the lease, and ``governor
temporal start`` picks the goal up again from the store: it goes on where it was.
"""

from __future__ import annotations

import time

import orjson

from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.temporal.conftest import TemporalProject, workflow_of
from tests.temporal.test_cancel import temporal_cli
from tests.temporal.test_verbs import scripted, start

GONE = "t: its Temporal workflow is gone (terminated); governor temporal start t picks the goal up again"


def test_a_terminated_workflow_is_noticed_and_the_goal_started_again(
    project: TemporalProject,
) -> None:
    question = {"status": "decision", "question": "Which database?", "summary": "need a choice"}
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": question}, {"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    start(project, "t", agents, agents)
    project.worker("--check-workflows", "3600")  # checks once at start, then not in this test
    project.wait_status("t", {"blocked"}, blocked_on="decision")
    assert project.status("t")["temporal_workflow"] == "running"

    ended = temporal_cli(
        project, "workflow", "terminate", "-w", workflow_of(project, "t"), "--reason", "by hand"
    )
    assert ended.returncode == 0, ended.stderr
    assert project.status("t")["temporal_workflow"] == "gone (terminated)"
    assert GONE in project.gov("status", "t").stdout.splitlines()
    assert GONE in project.gov("list").stdout.splitlines()
    rows = [orjson.loads(line) for line in project.gov("list", "--json").stdout.splitlines()]
    assert [r.get("temporal_workflow") for r in rows] == ["gone (terminated)"]
    assert project.status("t")["lease"] is not None  # nothing released it yet

    project.stop_workers()
    project.worker("--check-workflows", "1")
    deadline = time.monotonic() + 120
    while project.status("t")["lease"] is not None:
        assert time.monotonic() < deadline, "no worker released the gone workflow's lease"
        time.sleep(0.2)
    assert "temporal_workflow" not in project.status("t")

    again = project.gov("temporal", "start", "t")
    assert again.returncode == 0, again.stderr
    assert "t: started on Temporal" in again.stdout
    project.wait_status("t", {"blocked"}, blocked_on="decision")
    assert project.status("t")["temporal_workflow"] == "running"
    answered = project.gov("work", "retry", "t", "p1-a", "--reason", "PostgreSQL")
    assert answered.returncode == 0, answered.stderr
    project.wait_status("t", {"succeeded"})
    assert project.types("t").count("attempt.started") == 2
