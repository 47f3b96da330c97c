"""The Temporal commands' failures: one line and a documented exit code, nothing stored.

Server unreachable (9), a bad address (3), an unknown goal or namespace (4), the extra
not installed (9); ``temporal start`` is idempotent; the other drivers can tell from the
store that Temporal drives a goal.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import MILESTONE_COMPLETE, Project, done, plan, planner_script, worker_script
from tests.temporal.conftest import (
    Temporal,
    TemporalProject,
    free_port,
    run_async,
    workflow_of,
)


async def visibility(temporal: Temporal, workflow: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The goal's workflow's search attributes (found by a visibility query on them) and
    its memo's ledger, once the workflow has ended."""
    from temporalio.client import Client, WorkflowExecutionStatus
    from temporalio.contrib.pydantic import pydantic_data_converter

    client = await Client.connect(
        temporal.address, namespace=temporal.namespace, data_converter=pydantic_data_converter
    )
    handle = client.get_workflow_handle(workflow)
    deadline = time.monotonic() + 120
    while (described := await handle.describe()).status == WorkflowExecutionStatus.RUNNING:
        assert time.monotonic() < deadline, "the workflow of an ended goal keeps running"
        await asyncio.sleep(0.2)
    found = [
        e.id
        async for e in client.list_workflows(
            f'GovernorStatus = "succeeded" AND WorkflowId = "{workflow}"'
        )
    ]
    assert found == [workflow]
    names = ("GovernorStatus", "GovernorBlockedOn", "GovernorRule")
    attributes = {k: v[0] for k, v in described.search_attributes.items() if k in names}
    return attributes, (await described.memo())["ledger"]


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def agents(project: Project) -> dict[str, str | list[str]]:
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": done("a")}]),
    ]
    return {"harness": "scripted", "args": [project.scenario("s.json", scripts)]}


@pytest.mark.parametrize(
    "argv",
    [
        ["temporal", "start", "g", "--address", "ADDRESS"],
        ["temporal", "worker", "--address", "ADDRESS"],
        ["new", "g.json", "--temporal", "ADDRESS"],
    ],
    ids=["start", "worker", "new --temporal"],
)
def test_a_server_that_cannot_be_reached_is_one_line_and_exit_9(
    tmp_path: Path, argv: list[str]
) -> None:
    project = Project(tmp_path)
    profile = agents(project)
    project.goal_file("g", profile, profile)
    if argv[0] == "temporal" and argv[1] == "start":
        assert project.gov("new", "g.json").returncode == 0
    address = f"127.0.0.1:{free_port()}"
    result = project.gov(*[address if a == "ADDRESS" else a for a in argv], timeout=120)
    assert result.returncode == 9, result.stderr
    assert one_line(result.stderr).startswith(
        f"error: cannot reach the Temporal server at {address}"
    )
    if argv[0] == "new":
        assert project.gov("status", "g").returncode == 4, "new stored a goal it could not start"


@pytest.mark.parametrize("address", ["nonsense", "host:99999", "http://h:7233", ":7233"])
def test_a_bad_address_is_one_line_and_exit_3(tmp_path: Path, address: str) -> None:
    project = Project(tmp_path)
    profile = agents(project)
    project.goal_file("g", profile, profile)
    started = project.gov("temporal", "start", "g", "--address", address)
    assert started.returncode == 3
    assert one_line(started.stderr) == (
        f"error: --address: '{address}' is not a Temporal server address; "
        "give HOST:PORT (e.g. 127.0.0.1:7233)"
    )
    created = project.gov("new", "g.json", "--temporal", address)
    assert created.returncode == 3
    assert "--temporal:" in one_line(created.stderr)
    assert project.gov("status", "g").returncode == 4  # nothing stored
    project.env["GOVERNOR_TEMPORAL"] = address
    from_env = project.gov("temporal", "worker")
    assert from_env.returncode == 3
    assert one_line(from_env.stderr).startswith(f"error: $GOVERNOR_TEMPORAL: '{address}'")


def test_no_address_at_all_is_one_line_and_exit_3(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.env.pop("GOVERNOR_TEMPORAL", None)
    result = project.gov("temporal", "worker")
    assert result.returncode == 3
    assert one_line(result.stderr) == (
        "error: name the Temporal server: --address HOST:PORT (or set GOVERNOR_TEMPORAL)"
    )


def test_without_the_extra_it_says_how_to_install_it(tmp_path: Path) -> None:
    project = Project(tmp_path)
    blocker = tmp_path / "blocked"
    blocker.mkdir()
    (blocker / "temporalio.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'temporalio'\", name='temporalio')\n"
    )
    project.env["PYTHONPATH"] = str(blocker)
    for argv in (
        ["temporal", "worker", "--address", "127.0.0.1:7233"],
        ["new", "g.json", "--temporal", "127.0.0.1:7233"],
    ):
        profile = agents(project)
        project.goal_file("g", profile, profile)
        result = project.gov(*argv)
        assert result.returncode == 9, result.stderr
        assert one_line(result.stderr) == (
            "error: the temporal extra is not installed (temporalio): pip install 'governor[temporal]'"
        )
    assert project.gov("status", "g").returncode == 4


def test_an_unknown_goal_or_namespace_is_exit_4(tmp_path: Path, temporal: Temporal) -> None:
    project = TemporalProject(tmp_path, temporal)
    unknown = project.gov("temporal", "start", "nope")
    assert unknown.returncode == 4
    assert one_line(unknown.stderr).startswith("error: no goal 'nope' in this store")
    profile = agents(project)
    project.goal_file("g", profile, profile)
    assert project.gov("new", "g.json").returncode == 0
    elsewhere = project.gov("temporal", "start", "g", "--namespace", "no-such-namespace")
    assert elsewhere.returncode == 4
    assert one_line(elsewhere.stderr) == (
        f"error: the Temporal server at {temporal.address} has no namespace no-such-namespace "
        "(temporal operator namespace create no-such-namespace)"
    )


def test_start_is_idempotent_and_other_drivers_keep_off(project: TemporalProject) -> None:
    profile = agents(project)
    project.goal_file("g", profile, profile)
    assert project.gov("new", "g.json").returncode == 0
    first = project.gov("temporal", "start", "g")
    assert first.returncode == 0, first.stderr
    assert "started on Temporal" in first.stdout
    again = project.gov("temporal", "start", "g")
    assert again.returncode == 0, again.stderr
    assert "already running" in again.stdout

    status = project.status("g")
    holder = f"temporal:{project.temporal.namespace}@{project.temporal.address}"
    assert status["lease"]["holder"] == holder
    ticked = project.gov("tick", "g")  # no worker yet: the goal waits for Temporal, not for tick
    assert ticked.returncode == 6
    assert holder in one_line(ticked.stderr)
    assert project.types("g") == ["goal.created"]

    project.worker()
    project.wait_status("g", {"succeeded"})
    attributes, memo = run_async(visibility(project.temporal, workflow_of(project, "g")))
    assert attributes == {
        "GovernorStatus": "succeeded",
        "GovernorBlockedOn": "none",
        "GovernorRule": "goal.1",
    }
    assert memo["status"] == "succeeded"
    assert memo["replans"] == "2 charged of 5 (2 used)"
    finished = project.gov("temporal", "start", "g")
    assert finished.returncode == 5
    assert (
        one_line(finished.stderr)
        == "error: g: the goal has ended (plan.completed); nothing to drive"
    )


@pytest.mark.parametrize(
    "argv",
    [["temporal", "start", "g", "--address"], ["new", "g.json", "--temporal"]],
    ids=["start", "new"],
)
def test_a_goal_that_names_a_pool_goes_to_temporal_as_any_goal_does(
    tmp_path: Path, argv: list[str]
) -> None:
    """A workflow reserves a pooled goal's calls against its pools (tests/temporal/
    test_pools.py): the pool is no reason to refuse. With no server to reach, the command
    fails as for any goal (exit 9), and ``new`` stores nothing."""
    project = Project(tmp_path)
    profile = agents(project)
    path = project.goal_file("g", profile, profile)
    path.write_text(json.dumps({**json.loads(path.read_text()), "pools": ["team"]}))
    assert project.gov("pool", "set", "team", "--usd", "5").returncode == 0
    if argv[0] == "temporal":
        assert project.gov("new", "g.json").returncode == 0
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    result = project.gov(*argv, address, timeout=120)
    assert result.returncode == 9, result.stderr
    assert "pool" not in one_line(result.stderr)
    if argv[0] == "new":
        assert project.gov("status", "g").returncode == 4, "new stored a goal it cannot start"
