"""Replay also checks what governor writes: the append inputs produced while replaying a
recorded history must be those the history recorded (decision record 0029).

Temporal's replay compares commands, not activity inputs, and governor's output is the
input of its ``governor.append`` activity: a core change that wrote other events (a
charged failure recorded as something else, another summary) would replay green. Here an
outbound workflow interceptor records every ``governor.append`` request the workflow code
builds during replay, and the test compares them, event by event (their stored encoding)
and expected seq, with the inputs decoded from the history's scheduled activities. Seeded
changes to what the core writes while the commands stay the same (an attempt's finish
with another reason; a charged failure recorded as ``timed_out``, the issue's example)
fail the comparison, where Temporal's own replay passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.temporal.conftest import run_async
from tests.temporal.test_replay import FILES

temporalio = pytest.importorskip("temporalio", reason="the temporal extra is not installed")

from temporalio import workflow  # noqa: E402
from temporalio.client import WorkflowHistory  # noqa: E402
from temporalio.contrib.pydantic import pydantic_data_converter  # noqa: E402
from temporalio.worker import (  # noqa: E402
    ExecuteWorkflowInput,
    Interceptor,
    Replayer,
    StartActivityInput,
    StartLocalActivityInput,
    UnsandboxedWorkflowRunner,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)

from governor.core.wire.codec import encode, to_dict  # noqa: E402
from governor.temporal.wire import Appended, AppendRequest, contents  # noqa: E402
from governor.temporal.workflow import GoalWorkflow  # noqa: E402

PRODUCED: list[AppendRequest] = []
"""The append requests the workflow code built during the current replay."""


class _Outbound(WorkflowOutboundInterceptor):
    def start_activity(self, input: StartActivityInput) -> workflow.ActivityHandle[Any]:
        if input.activity == "governor.append":
            PRODUCED.append(input.args[0])
        return super().start_activity(input)

    def start_local_activity(self, input: StartLocalActivityInput) -> workflow.ActivityHandle[Any]:
        if input.activity == "governor.append":
            PRODUCED.append(input.args[0])
        return super().start_local_activity(input)


class _Inbound(WorkflowInboundInterceptor):
    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        super().init(_Outbound(outbound))

    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        return await super().execute_workflow(input)


class Appends(Interceptor):
    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor]:
        return _Inbound


def recorded(history: WorkflowHistory) -> list[AppendRequest]:
    """The append inputs the history's scheduled activities carry."""
    found = []
    converter = pydantic_data_converter.payload_converter
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled = event.activity_task_scheduled_event_attributes
            if scheduled.activity_type.name == "governor.append":
                [request] = converter.from_payloads(scheduled.input.payloads, [AppendRequest])
                found.append(request)
    return found


def recorded_locally(history: WorkflowHistory) -> list[Appended]:
    """The answers of the history's local ``governor.append`` activities (a run under the
    ``governor-lean-history`` patch: its markers keep the answer, not the input)."""
    found = []
    converter = pydantic_data_converter.payload_converter
    for event in history.events:
        if event.HasField("marker_recorded_event_attributes"):
            marker = event.marker_recorded_event_attributes
            if "data" not in marker.details or "result" not in marker.details:
                continue
            [data] = converter.from_payloads(marker.details["data"].payloads, [dict])
            if data.get("activity_type") == "governor.append":
                [answer] = converter.from_payloads(marker.details["result"].payloads, [Appended])
                found.append(answer)
    return found


def same_contents(produced: list[AppendRequest], stored: list[Appended]) -> bool:
    """Whether replay wrote what a lean history's appends wrote: each done append's
    ``content`` (the digest of its events' stored encodings) is that of the request
    replay built at its place."""
    if len(produced) != len(stored):
        return False
    return all(
        answer.content is None or answer.content == contents(request.events)
        for request, answer in zip(produced, stored, strict=True)
    )


def same_writes(produced: list[AppendRequest], stored: list[AppendRequest]) -> bool:
    """Whether replay wrote what the history recorded: the same appends at the same seqs,
    each recorded field of each event the same. A field the recorded event lacks is the
    one change the history contract allows (new fields are optional and additive: the
    committed ``missing-binary`` history predates failure signatures, SPEC §12.10)."""
    if [r.expected_seq for r in produced] != [r.expected_seq for r in stored]:
        return False
    for mine, theirs in zip(produced, stored, strict=True):
        if len(mine.events) != len(theirs.events):
            return False
        for a, b in zip(mine.events, theirs.events, strict=True):
            now, then = to_dict(a), to_dict(b)
            if any(now.get(k) != v for k, v in then.items()):
                return False
    return True


def replay(path: Path) -> tuple[list[AppendRequest], WorkflowHistory]:
    """Replay ``path``; (the appends produced, the history)."""
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    replayer = Replayer(
        workflows=[GoalWorkflow],
        workflow_runner=UnsandboxedWorkflowRunner(),  # the interceptor's list is this one
        data_converter=pydantic_data_converter,
        interceptors=[Appends()],
    )
    PRODUCED.clear()
    run_async(replayer.replay_workflow(history))
    return list(PRODUCED), history


def replay_appends(path: Path) -> tuple[list[AppendRequest], list[AppendRequest]]:
    """Replay ``path``; (the appends produced, the appends recorded)."""
    produced, history = replay(path)
    return produced, recorded(history)


@pytest.fixture(autouse=True)
def _clear() -> Iterator[None]:
    yield
    PRODUCED.clear()


OLD = [p for p in FILES if not p.stem.endswith("-lean")]
"""Histories recorded before the ``governor-lean-history`` patch (appends as activities)."""
LEAN = [p for p in FILES if p.stem.endswith("-lean")]
"""Histories recorded after it (appends as local activities: the answer is recorded)."""


@pytest.mark.parametrize("path", OLD, ids=[p.stem for p in OLD])
def test_replay_writes_what_the_history_recorded(path: Path) -> None:
    produced, stored = replay_appends(path)
    assert stored, f"{path.stem} records no append"
    assert same_writes(produced, stored)


@pytest.mark.parametrize("path", LEAN, ids=[p.stem for p in LEAN])
def test_replay_writes_what_a_lean_history_recorded(path: Path) -> None:
    produced, history = replay(path)
    stored = recorded_locally(history)
    assert stored, f"{path.stem} records no local append"
    assert not recorded(history), f"{path.stem} carries events as an append's input"
    assert any(a.content is not None for a in stored)
    assert same_contents(produced, stored)


def seeded(monkeypatch: pytest.MonkeyPatch, change: Any) -> None:
    """Make the core's finish of an attempt write ``change(event)`` instead."""
    from governor.drive.outcomes import finish_events as real
    from governor.temporal import calls

    def changed(*args: Any, **kwargs: Any) -> list[Any]:
        return [change(e) for e in real(*args, **kwargs)]

    monkeypatch.setattr(calls, "finish_events", changed)


def story() -> Path:
    return next(p for p in FILES if p.stem == "story")


def test_another_text_written_fails_though_the_commands_are_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def reworded(event: Any) -> Any:
        if event.type == "attempt.finished" and event.reason:
            return event.model_copy(update={"reason": "written differently"})
        return event

    seeded(monkeypatch, reworded)
    produced, stored = replay_appends(story())  # Temporal's own replay passes
    assert not same_writes(produced, stored)
    changed = [r for r, s in zip(produced, stored, strict=True) if not same_writes([r], [s])]
    assert any(b"written differently" in encode(e) for e in changed[0].events)


def timed_out(event: Any) -> Any:
    """A charged failure written as ``timed_out`` (the issue's example of a core change)."""
    charged = getattr(event, "failure_class", "x") is None
    if event.type == "attempt.finished" and event.outcome == "failed" and charged:
        return event.model_copy(update={"outcome": "timed_out"})
    return event


def test_a_charged_failure_written_as_timed_out_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's example: a core change that turned a charged failure into ``timed_out``."""
    seeded(monkeypatch, timed_out)
    try:
        produced, stored = replay_appends(story())
    except workflow.NondeterminismError:
        pytest.fail("the change altered the commands: this test is meant for one that does not")
    assert not same_writes(produced, stored)


def test_a_charged_failure_written_as_timed_out_fails_on_a_lean_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lean history keeps what each append wrote as a digest: the same change fails."""
    seeded(monkeypatch, timed_out)
    lean = next(p for p in LEAN if p.stem == "story-lean")
    try:
        produced, history = replay(lean)
    except workflow.NondeterminismError:
        pytest.fail("the change altered the commands: this test is meant for one that does not")
    assert not same_contents(produced, recorded_locally(history))
