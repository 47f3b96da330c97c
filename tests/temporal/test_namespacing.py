"""Two stores' goals of equal ids run side by side in one namespace (names.workflow_id).

Two project folders, each with its own store, create goals ``tp1`` and ``tp2`` and start
them on the same Temporal namespace, each with its own worker process (each worker serves
its own store, so each project gets its own task queue). Both stores' goals succeed; the
workflow ids differ by their store-derived prefix; ``start`` again says "already running"
of each store's own goal, and refuses a running workflow under the goal's id that is not
the store's goal's (a look-alike started by hand).
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.temporal.conftest import Temporal, TemporalProject, workflow_of
from tests.temporal.test_cancel import temporal_cli
from tests.temporal.test_verbs import scripted

IDS = ["tp1", "tp2"]


def make(root: Path, temporal: Temporal, queue: str) -> TemporalProject:
    root.mkdir()
    project = TemporalProject(root, temporal)
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    for goal_id in IDS:
        path = project.goal_file(goal_id, agents, agents)
        assert project.gov("new", path.name).returncode == 0
        started = project.gov("temporal", "start", goal_id, "--task-queue", queue)
        assert started.returncode == 0, started.stderr
        assert f"workflow id {workflow_of(project, goal_id)}" in started.stdout
    project.worker("--task-queue", queue)
    return project


def test_two_stores_goals_of_equal_ids_share_a_namespace(
    tmp_path: Path, temporal: Temporal
) -> None:
    one = make(tmp_path / "one", temporal, "store-one")
    two = make(tmp_path / "two", temporal, "store-two")
    try:
        for project in (one, two):
            for goal_id in IDS:
                project.wait_status(goal_id, {"succeeded"})
        for goal_id in IDS:
            assert workflow_of(one, goal_id) != workflow_of(two, goal_id)
            assert workflow_of(one, goal_id).endswith(f".{goal_id}")
    finally:
        one.stop_workers()
        two.stop_workers()


def test_start_refuses_a_look_alike_workflow(tmp_path: Path, temporal: Temporal) -> None:
    project = TemporalProject(tmp_path, temporal)
    agents = {"harness": "command", "args": ["/bin/true"]}
    path = project.goal_file("g", agents, agents)
    assert project.gov("new", path.name).returncode == 0
    workflow = workflow_of(project, "g")
    look_alike = temporal_cli(
        project, "workflow", "start", "--type", "other.thing", "-t", "nobody", "-w", workflow
    )
    assert look_alike.returncode == 0, look_alike.stderr
    refused = project.gov("temporal", "start", "g")
    assert refused.returncode == 5, (refused.stdout, refused.stderr)
    assert refused.stderr.strip() == (
        f"error: g: workflow {workflow} in namespace {temporal.namespace} at {temporal.address} "
        "is a other.thing workflow, not governor's; it was not started"
    )
    assert project.status("g").get("lease") is None
    temporal_cli(project, "workflow", "terminate", "-w", workflow)
