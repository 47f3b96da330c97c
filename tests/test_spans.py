"""OpenTelemetry spans (issue 27 §4), seen by the SDK's in-memory exporter inside real
``governor`` processes: a failed agent call is an error with an exception event, the goal
span ends with the goal's status, and the runs of one goal — three processes here — are
linked into one story."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from governor.drive.spans import goal_anchor
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

TRACED = """
import json, sys
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import governor
from governor.cli.main import main

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
governor.instrument(provider)
times, argv = int(sys.argv[1]), sys.argv[2:]
codes = [main(argv) for _ in range(times)]
spans = [
    {
        "name": s.name,
        "trace_id": s.context.trace_id,
        "span_id": s.context.span_id,
        "status": s.status.status_code.name,
        "description": s.status.description,
        "attributes": dict(s.attributes or {}),
        "events": [{"name": e.name, "attributes": dict(e.attributes or {})} for e in s.events],
        "links": [
            {"trace_id": l.context.trace_id, "span_id": l.context.span_id,
             "attributes": dict(l.attributes or {})}
            for l in s.links
        ],
    }
    for s in exporter.get_finished_spans()
]
print(json.dumps({"codes": codes, "spans": spans}))
"""


def traced(project: Project, *argv: str, times: int = 1) -> tuple[list[int], list[dict[str, Any]]]:
    """Run the command ``times`` in one new process, with the SDK's in-memory exporter."""
    done_ = subprocess.run(
        [sys.executable, "-c", TRACED, str(times), *argv],
        cwd=project.root, env=project.env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done_.returncode == 0, done_.stderr
    found = json.loads(done_.stdout.strip().splitlines()[-1])
    return found["codes"], found["spans"]


def agent(project: Project, *scripts: dict[str, Any]) -> dict[str, Any]:
    return {"harness": "scripted", "args": [project.scenario("scenario.json", list(scripts))]}


FAILS_ONCE = worker_script(
    "a", [{"stderr": "the tests failed\n", "exit_code": 1}, {"reply": done("a")}]
)


def test_a_failed_call_is_an_error_with_an_exception_event_and_the_goal_ends_ok(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    scripted = agent(
        project, planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]), FAILS_ONCE
    )
    project.goal("g", scripted, scripted)
    codes, spans = traced(project, "run", "g")
    assert codes == [0]
    workers = [
        s
        for s in spans
        if s["name"] == "governor.agent" and s["attributes"]["governor.role"] == "worker"
    ]
    failed, succeeded = sorted(workers, key=lambda s: s["attributes"]["governor.outcome"])
    assert failed["attributes"]["governor.outcome"] == "failed"
    assert failed["status"] == "ERROR"
    [event] = failed["events"]
    assert event["name"] == "exception"
    assert event["attributes"]["exception.type"] == "governor.AgentRunFailed"
    assert "the tests failed" in event["attributes"]["exception.message"]
    assert succeeded["status"] == "UNSET"
    assert succeeded["events"] == []
    [goal] = [s for s in spans if s["name"] == "governor.goal"]
    assert goal["status"] == "OK"
    assert goal["attributes"]["governor.status"] == "succeeded"
    assert goal["attributes"]["governor.outcome"] == "stopped"


def test_a_goal_that_runs_out_of_budget_ends_its_span_in_error(tmp_path: Path) -> None:
    project = Project(tmp_path)
    failing = worker_script("a", [{"stderr": "no\n", "exit_code": 1}])
    scripted = agent(project, planner_script([{"reply": plan("a")}]), failing)
    project.goal("g", scripted, scripted, max_total_attempts=1)
    codes, spans = traced(project, "run", "g")
    assert codes == [11]
    [goal] = [s for s in spans if s["name"] == "governor.goal"]
    assert goal["status"] == "ERROR"
    assert goal["attributes"]["governor.status"] == "budget_exhausted"
    assert goal["description"] == "the goal's charged attempts are spent (1 of 1)"  # the reason


def test_a_question_is_not_an_error(tmp_path: Path) -> None:
    project = Project(tmp_path)
    asking = worker_script("a", [{"reply": {"status": "decision", "question": "Which database?"}}])
    scripted = agent(project, planner_script([{"reply": plan("a")}]), asking)
    project.goal("g", scripted, scripted)
    codes, spans = traced(project, "run", "g")
    assert codes == [10]
    [asked] = [
        s
        for s in spans
        if s["name"] == "governor.agent" and s["attributes"].get("governor.class") == "decision"
    ]
    assert asked["status"] == "UNSET"
    [goal] = [s for s in spans if s["name"] == "governor.goal"]
    assert (goal["status"], goal["attributes"]["governor.blocked_on"]) == ("UNSET", "decision")


def test_the_runs_of_one_goal_in_three_processes_link_to_one_anchor(tmp_path: Path) -> None:
    project = Project(tmp_path)
    scripted = agent(
        project, planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]), FAILS_ONCE
    )
    project.goal("g", scripted, scripted)
    anchor = goal_anchor("g")
    goal_spans = []
    for _ in range(3):  # three processes, one step each: plan, apply, dispatch
        _, spans = traced(project, "tick", "g")
        [goal] = [s for s in spans if s["name"] == "governor.goal"]
        goal_spans.append(goal)
    assert len({s["trace_id"] for s in goal_spans}) == 3  # three traces …
    for goal in goal_spans:  # … one story: each links to the goal's anchor
        [link] = [k for k in goal["links"] if k["attributes"]["governor.link"] == "goal"]
        assert (link["trace_id"], link["span_id"]) == anchor
        assert goal["attributes"]["governor.goal_trace_id"] == f"{anchor[0]:032x}"
    _, spans = traced(project, "tick", "g", times=2)  # two runs in one process: chained too
    first, second = [s for s in spans if s["name"] == "governor.goal"]
    [previous] = [k for k in second["links"] if k["attributes"]["governor.link"] == "previous run"]
    assert (previous["trace_id"], previous["span_id"]) == (first["trace_id"], first["span_id"])
    assert goal_anchor("other") != anchor


@pytest.mark.parametrize("goal_id", ["g", "a-much-longer.goal_id-1"])
def test_the_anchor_is_a_valid_span_context_from_the_goal_id_alone(goal_id: str) -> None:
    trace_id, span_id = goal_anchor(goal_id)
    assert 0 < trace_id < 2**128
    assert 0 < span_id < 2**64
    assert goal_anchor(goal_id) == (trace_id, span_id)


def test_a_pools_reservations_and_settlements_are_spans_with_their_figures(tmp_path: Path) -> None:
    from tests.e2e.test_pools import CALL, pooled_goal

    project = Project(tmp_path)
    assert project.gov("pool", "set", "team", "--usd", "0.15").returncode == 0
    pooled_goal(project, "g", ["team"])
    _, spans = traced(project, "run", "g")
    reservations = [s["attributes"] for s in spans if s["name"] == "governor.reservation"]
    held = [a for a in reservations if a["governor.reservation"] == "held"]
    [refused] = [a for a in reservations if a["governor.reservation"] == "refused"]
    assert held  # the pool had room, then it had none
    assert reservations[-1] is refused
    assert (refused["governor.refused.pool"], refused["governor.refused.unit"]) == ("team", "usd")
    assert all(a["governor.pools"] == "team" and a["governor.reserve.usd"] > 0 for a in held)
    settled = [s["attributes"] for s in spans if s["name"] == "governor.settlement"]
    assert [a["governor.pool.call"] for a in settled] == [a["governor.pool.call"] for a in held]
    assert all(a["governor.settlement"] == "settled" for a in settled)
    assert all(a["governor.settle.usd"] == CALL for a in settled)
    [goal] = [s for s in spans if s["name"] == "governor.goal"]
    assert goal["attributes"]["governor.blocked_on"] == "operator"  # a person grants, or not
