"""A goal waiting for days continues as new at each rest and runs on the current workers
(decision record 0029), with a day shortened to a 6 s lease TTL.

The goal blocks on a question under ``--lease-ttl 6``: each wait runs out after at most
one TTL with nothing happening, and the workflow continues as new (the next run loads the
goal from the store). The worker that started it is stopped and a new worker process
takes over the next run; the answer then reaches the current run, and the goal succeeds.
"""

from __future__ import annotations

import json
import time

from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.temporal.conftest import TemporalProject, workflow_of
from tests.temporal.test_cancel import temporal_cli
from tests.temporal.test_verbs import scripted


def runs(project: TemporalProject, workflow: str) -> list[str]:
    listed = temporal_cli(
        project, "workflow", "list", "--query", f'WorkflowId = "{workflow}"', "--output", "json"
    )
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout) if listed.stdout.strip() else []
    return [str(r["status"]) for r in found]


def test_a_blocked_goal_continues_as_new_at_each_rest(project: TemporalProject) -> None:
    question = {"status": "decision", "question": "Which database?", "summary": "need a choice"}
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": question}, {"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    path = project.goal_file("d", agents, agents)
    assert project.gov("new", path.name).returncode == 0
    assert project.gov("temporal", "start", "d", "--lease-ttl", "6").returncode == 0
    project.worker()
    project.wait_status("d", {"blocked"}, blocked_on="decision")
    workflow = workflow_of(project, "d")

    deadline = time.monotonic() + 120
    while runs(project, workflow).count("WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW") < 2:
        assert time.monotonic() < deadline, runs(project, workflow)
        time.sleep(0.5)
    project.stop_workers()  # the old workers go; a new one takes the next run
    project.worker()
    answered = project.gov("work", "retry", "d", "p1-a", "--reason", "PostgreSQL")
    assert answered.returncode == 0, answered.stderr
    project.wait_status("d", {"succeeded"})
    assert [e["reason"] for e in project.events("d") if e["type"] == "work.retried"] == [
        "PostgreSQL"
    ]
