"""The demo scenarios on Temporal: the same outcome, ledger and events as ``governor run``.

Each scenario runs twice with the same scripted agents: once as ``governor demo`` runs it
(the LangGraph runner, ``governor run``), once created with ``governor new --temporal``
and driven by a ``governor temporal worker`` process on a real dev server. Ids and times
aside, the two histories are the same, event for event.

The story's vendor outage cools its item down for 1 s, and which item runs next
depends on whether another item's two attempts took longer than that: under ``governor
run`` as much as on Temporal, a loaded machine changes the order. The story here cools
down for 10 s (20 s at most) instead, so both drives meet the same order.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from governor.demo import HERE, MISSING_GOAL, PLAN_AGENT, STORY_GOAL, _create, _run, run_demo
from tests.temporal.compare import assert_same_drive, drive_facts
from tests.temporal.conftest import TemporalProject

STORY = STORY_GOAL.replace("initial_s = 1\n", "initial_s = 10\n").replace(
    "max_s = 2\n", "max_s = 20\n"
)


def reference(scenario: str, folder: Path) -> Path:
    folder.mkdir()
    if scenario == "story":  # as the demo runs it, with the wider cooldown
        shutil.copy(HERE / "story.json", folder / "story.json")
        goal_id = _create(folder, STORY, lambda _: None)
        _run(folder, goal_id, lambda _: None, lambda _: None)
        return folder
    run_demo(scenario, lambda _: None, lambda _: None, lambda _g, _d: None, folder=folder)
    return folder


def on_temporal(project: TemporalProject, scenario: str, goal_text: str) -> Path:
    """Create the scenario's goal with ``governor new --temporal`` and start a worker."""
    root = project.root
    shutil.copy(HERE / scenario, root / scenario)
    (root / "goal.toml").write_text(goal_text)
    created = project.gov(
        "new", "goal.toml", "--temporal", project.temporal.address, "--actor", "governor"
    )
    assert created.returncode == 0, created.stderr
    project.worker()
    return root


def test_the_story_runs_the_same_on_temporal(tmp_path: Path, project: TemporalProject) -> None:
    expected_in = reference("story", tmp_path / "reference")
    root = on_temporal(project, "story.json", STORY)
    project.wait_status("demo-login", {"succeeded", "blocked", "budget_exhausted"})
    expected = drive_facts(str(expected_in / "governor.db"), "demo-login", expected_in)
    got = drive_facts(str(root / "governor.db"), "demo-login", root)
    assert expected["status"] == "succeeded"
    assert "initial_s = 10" in STORY
    assert_same_drive(expected, got)
    deadline = time.monotonic() + 120
    while project.status("demo-login")["lease"] is not None:  # the workflow lets it go
        assert time.monotonic() < deadline, "the workflow kept the lease of an ended goal"
        time.sleep(0.1)


def test_the_missing_binary_runs_the_same_on_temporal(
    tmp_path: Path, project: TemporalProject
) -> None:
    expected_in = reference("missing-binary", tmp_path / "reference")
    root = on_temporal(project, "missing-binary.json", MISSING_GOAL)
    project.wait_status("demo-missing-binary", {"blocked"}, blocked_on="environment")

    agent = root / "bin" / "plan-agent"
    agent.parent.mkdir(exist_ok=True)
    agent.write_text(PLAN_AGENT)
    agent.chmod(0o755)
    followed = project.gov("run", "demo-missing-binary", timeout=600)
    assert followed.returncode == 0, followed.stdout + followed.stderr
    assert "is driven by Temporal" in followed.stdout

    expected = drive_facts(str(expected_in / "governor.db"), "demo-missing-binary", expected_in)
    got = drive_facts(str(root / "governor.db"), "demo-missing-binary", root)
    assert expected["status"] == "succeeded"
    assert_same_drive(expected, got)
