"""Temporal's own tools (issue 34, Build 6): a payload codec on every client of a namespace,
and OpenTelemetry's tracing interceptor on governor's tracer.

With ``GOVERNOR_TEMPORAL_CODEC=zlib`` a goal runs to its end on a real dev server, and the
workflow's history — read by a client without the codec — holds no payload in plain JSON:
the goal's words never sit in Temporal as text. With the codec the same history replays.
A codec that cannot be loaded is one line and exit 3, and nothing starts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from governor.temporal.codec import ZLIB_ENCODING, data_converter
from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.temporal.conftest import (
    DevServer,
    Temporal,
    TemporalProject,
    run_async,
    start_all,
    workflow_of,
)
from tests.temporal.test_verbs import scripted

OBJECTIVE = "Make the widget frobnicate the sprocket"
"""A phrase that must not be found in the history's bytes while a codec compresses them."""


def goal(project: TemporalProject, goal_id: str) -> None:
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    path = project.goal_file(goal_id, agents, agents)
    path.write_text(json.dumps({**json.loads(path.read_text()), "objective": OBJECTIVE}))
    created = project.gov("new", path.name)
    assert created.returncode == 0, created.stderr


@pytest.fixture
def coded(tmp_path: Path, dev_server: DevServer) -> Iterator[TemporalProject]:
    """A namespace of its own (the shared fixture replays without the codec)."""
    project = TemporalProject(tmp_path, Temporal(dev_server.address, next(dev_server.names)))
    project.env["GOVERNOR_TEMPORAL_CODEC"] = "zlib"
    try:
        yield project
    finally:
        project.stop_workers()


async def history(project: TemporalProject, goal_id: str, codec: str | None) -> WorkflowHistory:
    from temporalio.client import Client

    client = await Client.connect(
        project.temporal.address,
        namespace=project.temporal.namespace,
        data_converter=data_converter(codec),
    )
    return await client.get_workflow_handle(workflow_of(project, goal_id)).fetch_history()


def test_a_goal_runs_under_a_codec_and_its_history_holds_no_plain_payload(
    coded: TemporalProject,
) -> None:
    from temporalio.worker import Replayer

    from governor.temporal.worker import workflow_runner
    from governor.temporal.workflow import GoalWorkflow

    project = coded
    goal(project, "z")
    started = project.gov("temporal", "start", "z")
    assert started.returncode == 0, started.stderr
    project.worker()
    project.wait_status("z", {"succeeded"})
    assert project.gov("status", "z").returncode == 0

    raw = run_async(history(project, "z", None))
    text = raw.to_json()
    assert OBJECTIVE not in text
    assert '"z"' not in text.replace('"workflowId"', "")  # no payload names the goal in JSON
    [start] = [e for e in raw.events if e.HasField("workflow_execution_started_event_attributes")]
    payloads = start.workflow_execution_started_event_attributes.input.payloads
    assert payloads
    assert {p.metadata["encoding"] for p in payloads} == {ZLIB_ENCODING}

    decoded = run_async(history(project, "z", "zlib"))
    replayer = Replayer(
        workflows=[GoalWorkflow],
        workflow_runner=workflow_runner(),
        data_converter=data_converter("zlib"),
    )
    run_async(replayer.replay_workflow(decoded))  # raises on a nondeterminism error


@pytest.mark.parametrize("codec", ["nowhere.at_all:Codec", "json:dumps", "zlib:"])
def test_a_codec_that_cannot_be_loaded_is_one_line_and_exit_3(
    coded: TemporalProject, codec: str
) -> None:
    project = coded
    goal(project, "z")
    result = project.gov("temporal", "start", "z", "--codec", codec)
    assert result.returncode == 3, result.stderr
    line = result.stderr.strip()
    assert "\n" not in line
    assert line.startswith(f"error: codec '{codec}'"), line
    assert project.status("z").get("lease") is None  # nothing started


def test_the_tracing_interceptor_sends_temporals_spans_to_governors_tracer(
    coded: TemporalProject,
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import governor

    project = coded
    project.env.pop("GOVERNOR_TEMPORAL_CODEC")  # this process starts it: no codec here
    goal(project, "t")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    governor.instrument(provider)
    try:
        start_all(project, ["t"])
    finally:
        governor.uninstrument()
    names = [s.name for s in exporter.get_finished_spans()]
    assert "StartWorkflow:governor.goal" in names, names
    project.worker()
    project.wait_status("t", {"succeeded"})
