"""The runner, unit by unit: one goal against the in-memory store and the scripted
harness (a real subprocess per agent call, the embedded scenario), driven through
``drive.act.follow`` and ``goals.tick`` — no command, no graph unless a test compares
with it."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from governor.core.commands import OperatorVerb
from governor.core.history import validate_events
from governor.core.route import Ask, route
from governor.drive import goals
from governor.drive.act import follow
from governor.drive.goalfile import goal_from_mapping
from governor.drive.runner import Runner, RunnerSettings
from governor.errors import LeaseError
from governor.render.records import run_record
from governor.store.memory import MemoryEventStore
from governor.store.transfer import import_history

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
GOAL = {
    "id": "g",
    "title": "Runner unit",
    "objective": "o",
    "acceptance": ["a"],
    "planner": "p",
    "worker": "p",
    "profiles": {"p": {"harness": "scripted"}},
}


@pytest.fixture
def store() -> Iterator[MemoryEventStore]:
    memory = MemoryEventStore()
    at = datetime.now(UTC)
    goals.create_from(memory, goal_from_mapping(GOAL, base=Path.cwd(), where="goal", at=at))
    yield memory
    memory.close()


def runner_of(store: MemoryEventStore, tmp_path: Path, holder: str = "t1") -> Runner:
    settings = RunnerSettings(
        workdir=tmp_path,
        env=dict(os.environ),
        state_dir=tmp_path / "state",
        max_wait_s=0,
        holder=holder,
    )
    return goals.runner(store, "g", settings)


def cancel(store: MemoryEventStore) -> None:
    goals.govern(store, "g", OperatorVerb("cancel", "operator:test", reason="enough"))


def test_follow_drives_the_scripted_goal_to_success_under_the_lease(
    store: MemoryEventStore, tmp_path: Path
) -> None:
    runner = runner_of(store, tmp_path)
    runner.acquire()
    try:
        assert store.current_lease("g") is not None
        decision, _ = follow(runner, runner.decide, max_steps=50)
    finally:
        runner.release()
    assert decision.status == "succeeded"
    assert store.current_lease("g") is None
    history = list(store.load("g"))
    validate_events(history)
    types = [e.type for e in history]
    assert types.count("attempt.started") == types.count("attempt.finished") == 1
    assert types[-1] == "plan.completed"


def test_tick_takes_one_step_and_releases_the_lease(
    store: MemoryEventStore, tmp_path: Path
) -> None:
    report = goals.tick(runner_of(store, tmp_path))
    assert [e.type for e in store.load("g")][-2:] == ["plan.requested", "plan.proposed"]
    assert report.steps == 1
    assert store.current_lease("g") is None


def test_a_second_runner_is_refused_while_the_first_holds_the_lease(
    store: MemoryEventStore, tmp_path: Path
) -> None:
    first = runner_of(store, tmp_path, "t1")
    first.acquire()
    try:
        with pytest.raises(LeaseError, match="t1"):
            goals.tick(runner_of(store, tmp_path, "t2"))
    finally:
        first.release()


def test_a_goal_with_work_to_do_is_not_stopped_and_nothing_is_taken(
    store: MemoryEventStore, tmp_path: Path
) -> None:
    before = store.last_seq("g")
    assert goals.stopped(runner_of(store, tmp_path)) is None
    assert store.last_seq("g") == before
    assert store.current_lease("g") is None


def test_a_stopped_goal_reports_as_the_graph_does_without_the_graph(
    store: MemoryEventStore, tmp_path: Path
) -> None:
    from governor.graph.build import run

    cancel(store)
    report = goals.stopped(runner_of(store, tmp_path))
    assert report is not None
    assert store.current_lease("g") is None
    graph = run(runner_of(store, tmp_path))
    assert (report.outcome, report.steps, report.title) == ("stopped", 1, "Runner unit")
    assert (graph.outcome, graph.steps, graph.title) == (report.outcome, 1, report.title)
    assert run_record("g", report.outcome, report.decision) == run_record(
        "g", graph.outcome, graph.decision
    )


def test_the_heartbeat_renews_the_lease_until_it_is_given_back(
    store: MemoryEventStore, tmp_path: Path
) -> None:
    runner = runner_of(store, tmp_path)
    runner.settings.lease_ttl_s = runner.keeper.ttl_s = 0.3  # a beat every 0.1 s
    first = runner.acquire()
    try:
        deadline = time.monotonic() + 60
        while (current := store.current_lease("g")) is not None and (
            current.expires_at <= first.expires_at
        ):
            assert time.monotonic() < deadline, "the lease was never renewed"
            time.sleep(0.05)
        assert current is not None
        assert (current.holder, current.token) == (first.holder, first.token)
    finally:
        runner.release()
    assert store.current_lease("g") is None
    assert runner.lease is None


def test_an_environment_stop_whose_binary_came_back_is_not_stopped(tmp_path: Path) -> None:
    """The stopped report decides under the lease as the graph does: an environment stop
    is re-probed there, cleared when its binary is back, and the goal goes on."""
    agent = tmp_path / "agent"
    memory = MemoryEventStore()
    goal = {**GOAL, "profiles": {"p": {"harness": "command", "args": [str(agent)]}}}
    at = datetime.now(UTC)
    goals.create_from(memory, goal_from_mapping(goal, base=tmp_path, where="goal", at=at))
    runner = runner_of(memory, tmp_path)
    runner.acquire()
    try:
        decision, _ = follow(runner, runner.decide, max_steps=10)
    finally:
        runner.release()
    assert (decision.status, decision.blocked_on) == ("blocked", "environment")
    report = goals.stopped(runner_of(memory, tmp_path))  # still missing: stopped
    assert report is not None
    assert (report.outcome, report.decision.blocked_on) == ("stopped", "environment")
    agent.write_text("#!/bin/sh\ncat >/dev/null\n")
    agent.chmod(0o755)
    assert goals.stopped(runner_of(memory, tmp_path)) is None
    assert [e.type for e in memory.load("g")][-1] == "goal.resumed"
    assert memory.current_lease("g") is None


def test_a_goal_asking_a_question_reports_as_the_graph_does_without_the_graph(
    tmp_path: Path,
) -> None:
    from governor.graph.build import run

    memory = MemoryEventStore()
    import_history(memory, GOLDEN / "work_decision_blocked.jsonl")
    goal_id = next(iter(memory.goals())).goal_id

    def runner() -> Runner:
        settings = RunnerSettings(workdir=tmp_path, env=dict(os.environ), max_wait_s=0)
        return goals.runner(memory, goal_id, settings)

    assert isinstance(route(runner().decide()), Ask)
    report = goals.stopped(runner())
    assert report is not None
    graph = run(runner())
    assert (report.outcome, report.steps) == (graph.outcome, graph.steps) == ("stopped", 1)
    assert report.decision.blocked_on == "decision"
    assert run_record(goal_id, report.outcome, report.decision) == run_record(
        goal_id, graph.outcome, graph.decision
    )
