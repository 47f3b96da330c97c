"""Recorded workflow histories replay with the current code (no server needed).

``tests/temporal/histories/`` holds Temporal histories of goal workflows recorded by the
suite (the demo scenarios, operator verbs, a continue-as-new, pools and grants): a change
to the workflow code or to the core it runs that would make in-flight workflows diverge
fails here (``temporalio.worker.Replayer``, with the workers' sandbox and converter). Every history
the rest of the suite records is replayed as well, when its test ends
(``tests/temporal/conftest.py``). To record these again after a deliberate change (see
decision record 0020 for what such a change must do), run the Temporal tests with
``GOVERNOR_TEMPORAL_HISTORIES=DIR`` and copy the ones named below from DIR.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.temporal.conftest import run_async

HISTORIES = Path(__file__).parent / "histories"
FILES = sorted(HISTORIES.glob("*.json"))


def replay(text: str, workflow_id: str) -> None:
    from temporalio.client import WorkflowHistory
    from temporalio.worker import Replayer

    from governor.temporal.convert import data_converter
    from governor.temporal.worker import workflow_runner
    from governor.temporal.workflow import GoalWorkflow

    replayer = Replayer(
        workflows=[GoalWorkflow],
        workflow_runner=workflow_runner(),
        data_converter=data_converter,
    )
    history = WorkflowHistory.from_json(workflow_id, text)
    run_async(replayer.replay_workflow(history))


def test_histories_were_recorded() -> None:
    assert len(FILES) >= 3, "tests/temporal/histories/ lost its recorded histories"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a_recorded_history_replays_with_the_current_code(path: Path) -> None:
    pytest.importorskip("temporalio", reason="the temporal extra is not installed")
    replay(path.read_text(), path.stem)


def test_a_history_the_code_would_not_have_made_fails_to_replay() -> None:
    """The replay can fail: an activity the code never schedules is a nondeterminism."""
    pytest.importorskip("temporalio", reason="the temporal extra is not installed")
    from temporalio.workflow import NondeterminismError

    history = json.loads(FILES[0].read_text())
    scheduled = [e for e in history["events"] if "activityTaskScheduledEventAttributes" in e]
    scheduled[1]["activityTaskScheduledEventAttributes"]["activityType"]["name"] = "governor.other"
    with pytest.raises(NondeterminismError):
        replay(json.dumps(history), FILES[0].stem)
