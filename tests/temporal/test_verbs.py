"""Operator verbs on a goal Temporal drives: updates validated by the CLI's own verbs.

Every verb given through the ``governor`` command reaches the goal's workflow as an
update; a refused one comes back as the CLI's one-line error with its exit code, and
nothing is recorded (the store's last seq does not move); an applied one is recorded by
the workflow, the one writer, and the goal goes on. ``cancel`` and ``work abandon`` kill
the agent in flight.
"""

from __future__ import annotations

from contextlib import closing
from datetime import UTC, datetime
from typing import Any

import pytest

from governor.core.commands import OperatorVerb, apply_verb
from governor.core.fold import project as fold_view
from governor.errors import GovernorError
from governor.store import open_store
from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.e2e.workers import all_dead, entries, install, processes
from tests.temporal.conftest import TemporalProject


def scripted(project: TemporalProject, scripts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"harness": "scripted", "args": [project.scenario("scenario.json", scripts)]}


def start(
    project: TemporalProject,
    goal_id: str,
    planner: dict[str, Any],
    worker: dict[str, Any],
    **policy: Any,
) -> None:
    path = project.goal_file(goal_id, planner, worker, **policy)
    created = project.gov("new", path.name, "--temporal", project.temporal.address)
    assert created.returncode == 0, created.stderr


def last_seq(project: TemporalProject, goal_id: str) -> int:
    with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
        return store.last_seq(goal_id)


def expected_refusal(project: TemporalProject, goal_id: str, verb: OperatorVerb) -> str:
    """The line the CLI prints when the rules refuse ``verb`` on the goal as stored."""
    with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
        view = fold_view(store.load(goal_id))
    with pytest.raises(GovernorError) as refused:
        apply_verb(verb, view, datetime.now(UTC))
    return f"error: {refused.value}"


REFUSED_IN_REVIEW = [
    (["plan", "approve", "g", "p9"], OperatorVerb("plan approve", "x", plan="p9"), 4),
    (
        ["plan", "reject", "g", "p9", "--reason", "r"],
        OperatorVerb("plan reject", "x", plan="p9", reason="r"),
        4,
    ),
    (["work", "accept", "g", "p1-zz"], OperatorVerb("work accept", "x", item="p1-zz"), 4),
    (
        ["work", "retry", "g", "p1-zz", "--reason", "r"],
        OperatorVerb("work retry", "x", item="p1-zz", reason="r"),
        4,
    ),
    (
        ["work", "abandon", "g", "p1-zz", "--reason", "r"],
        OperatorVerb("work abandon", "x", item="p1-zz", reason="r"),
        4,
    ),
    (["resume", "g", "--reason", "r"], OperatorVerb("resume", "x", reason="r"), 5),
    (
        ["raise", "g", "--ledger", "replans", "--to", "2", "--reason", "r"],
        OperatorVerb("raise", "x", ledger="replans", to=2, reason="r"),
        5,
    ),
]


def test_verbs_are_applied_or_refused_through_the_workflow(project: TemporalProject) -> None:
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    start(project, "g", agents, agents, auto_apply=False, accept_passing=False)
    project.worker()
    project.wait_status("g", {"awaiting_review"})

    seq = last_seq(project, "g")
    for argv, verb, code in REFUSED_IN_REVIEW:
        refused = project.gov(*argv)
        assert refused.returncode == code, (argv, refused.stdout, refused.stderr)
        assert refused.stderr.strip() == expected_refusal(project, "g", verb), argv
        assert "\n" not in refused.stderr.strip()
    assert last_seq(project, "g") == seq, "a refused verb recorded something"

    rejected = project.gov("plan", "reject", "g", "p1", "--reason", "smaller, please")
    assert rejected.returncode == 0, rejected.stderr
    project.wait_status("g", {"awaiting_review"})  # the planner was asked again: p2
    assert "plan.rejected" in project.types("g")
    assert project.gov("plan", "approve", "g", "p2").returncode == 0
    project.wait_status("g", {"awaiting_review"})  # p2-a's attempt passed: review it
    types = project.types("g")
    assert "plan.applied" in types
    assert "attempt.finished" in types
    assert project.gov("work", "accept", "g", "p2-a").returncode == 0
    project.wait_status("g", {"awaiting_review"})  # the completion proposal
    assert project.gov("plan", "approve", "g", "p3").returncode == 0
    project.wait_status("g", {"succeeded"})
    actors = {
        e["actor"] for e in project.events("g") if e["type"] in ("plan.rejected", "work.accepted")
    }
    assert actors
    assert all(a.startswith("operator:") for a in actors)


def test_an_answer_through_the_cli_reaches_the_waiting_workflow(project: TemporalProject) -> None:
    question = {"status": "decision", "question": "Which database?", "summary": "need a choice"}
    scripts = [
        MILESTONE_COMPLETE,
        planner_script(
            [
                {"reply": {"status": "decision", "question": "Ship it in one plan?"}},
                {"reply": plan("a")},
            ]
        ),
        worker_script("a", [{"reply": question}, {"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    start(project, "q", agents, agents)
    project.worker()

    project.wait_status("q", {"blocked"}, blocked_on="decision")
    assert project.gov("resume", "q", "--reason", "yes, one plan").returncode == 0
    project.wait_status("q", {"blocked"}, blocked_on="decision")  # now the worker asks
    status = project.status("q")
    assert "Which database?" in status["reason"]
    answered = project.gov("work", "retry", "q", "p2-a", "--reason", "PostgreSQL")
    assert answered.returncode == 0, answered.stderr
    project.wait_status("q", {"succeeded"})
    events = project.events("q")
    retried = [e for e in events if e["type"] == "work.retried"]
    assert [e["reason"] for e in retried] == ["PostgreSQL"]
    assert [e["reason"] for e in events if e["type"] == "goal.resumed"] == ["yes, one plan"]


def test_raise_lets_an_exhausted_goal_go_on(project: TemporalProject) -> None:
    failing = {"status": "failed", "summary": "not yet"}
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": failing}, {"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    start(project, "x", agents, agents, max_total_attempts=1)
    project.worker()
    project.wait_status("x", {"budget_exhausted"})
    raised = project.gov(
        "raise", "x", "--ledger", "total_attempts", "--to", "3", "--reason", "one more"
    )
    assert raised.returncode == 0, raised.stderr
    project.wait_status("x", {"succeeded"})
    assert sum(t == "attempt.started" for t in project.types("x")) == 2


def test_cancel_and_abandon_kill_the_agent_in_flight(project: TemporalProject) -> None:
    agents = install(project, ticks=2000, tick_s=0.05)  # each run would take 100 s
    quick = {
        "harness": "scripted",
        "args": [
            project.scenario(
                "plan.json", [MILESTONE_COMPLETE, planner_script([{"reply": plan("a")}])]
            )
        ],
    }
    start(project, "k", quick, agents, max_attempts=3)
    project.worker()

    first = wait_for_agent(project, 1)
    abandoned = project.gov("work", "abandon", "k", "p1-a", "--reason", "stuck")
    assert abandoned.returncode == 0, abandoned.stderr
    assert all_dead(first) == [], "the abandoned attempt's agent lives on"
    second = wait_for_agent(project, 2)  # the next attempt runs
    outcomes = [e.get("outcome") for e in project.events("k") if e["type"] == "attempt.finished"]
    assert outcomes == ["abandoned"]

    cancelled = project.gov("cancel", "k", "--reason", "enough")
    assert cancelled.returncode == 0, cancelled.stderr
    assert all_dead(second) == [], "the cancelled goal's agent lives on"
    project.wait_status("k", {"cancelled"})
    wait_lease_released(project, "k")
    left = project.gov("work", "retry", "k", "p1-a", "--reason", "again")
    assert (left.returncode, left.stderr.strip()) == (5, "error: k: the goal is cancelled")


def wait_for_agent(project: TemporalProject, count: int) -> list[tuple[int, int]]:
    """The processes of the ``count``-th agent to start (waiting for it)."""
    import time

    deadline = time.monotonic() + 300
    while True:
        starts = [e for e in entries(project) if e.kind == "start" and e.key == "a"]
        if len(starts) >= count:
            p = starts[count - 1].pids
            return [(p[0], p[1]), (p[2], p[3])]
        assert time.monotonic() < deadline, f"agent {count} never started"
        time.sleep(0.05)


def wait_lease_released(project: TemporalProject, goal_id: str) -> None:
    import time

    deadline = time.monotonic() + 120
    while project.status(goal_id).get("lease") is not None:
        assert time.monotonic() < deadline, "the workflow kept the lease of an ended goal"
        time.sleep(0.1)
    assert processes(project)  # the agents did run
