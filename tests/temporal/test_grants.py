"""A grant (or a decline) of a goal Temporal drives reaches its workflow as the operator
verbs do: ``governor grant``/``decline`` send it as the ``governor.verb`` update, validated
by the same pure verb (``governor.core.commands``), recorded by the workflow (the one
writer); a refused one is the CLI's one line with nothing recorded.

A request recorded by another driver (``governor run``) before the goal was handed to
Temporal is answered the same way; and the workflow records a request on the goal's own
budget itself (granting it when the policy's ``grants`` rule allows, actor ``policy``).
Pools: ``test_pools.py``."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.cli import COMPLETE, done, plan, planner_script, worker_script
from tests.temporal.conftest import TemporalProject, histories, run_async, start_all
from tests.temporal.test_verbs import last_seq, scripted

NOBODY = {"auto_usd": 0.0, "auto_attempts": 0}


def two_items(project: TemporalProject, goal_id: str, grants: dict[str, Any]) -> None:
    """A goal of two items (b after a) with one attempt in its budget, under ``grants``."""
    scripts: list[dict[str, Any]] = [
        planner_script([{"reply": plan("a", "b", deps={"b": ["a"]})}, {"reply": COMPLETE}]),
        worker_script("a", [{"effects": True, "reply": done("a")}]),
        worker_script("b", [{"effects": True, "reply": done("b")}]),
    ]
    agents = scripted(project, scripts)
    path = project.goal_file(goal_id, agents, agents, max_total_attempts=1, grants=grants)
    assert project.gov("new", path.name).returncode == 0


def asking(project: TemporalProject, goal_id: str) -> None:
    """A goal that spent its one attempt under ``governor run`` and asks for one more."""
    two_items(project, goal_id, NOBODY)
    assert project.gov("run", goal_id).returncode == 10  # waits for a person's grant
    assert project.types(goal_id)[-1] == "budget.requested"
    start_all(project, [goal_id])
    project.worker()


def verbs_sent(project: TemporalProject) -> list[str]:
    """The operator verbs the workflows accepted as ``governor.verb`` updates."""
    sent = []
    for _, history in run_async(histories(project.temporal)):
        for event in history.events:
            if event.HasField("workflow_execution_update_accepted_event_attributes"):
                accepted = event.workflow_execution_update_accepted_event_attributes
                update = accepted.accepted_request.input
                if update.name == "governor.verb":  # (calls ask with governor.call_ready)
                    sent.append(json.loads(update.args.payloads[0].data)["verb"])
    return sent


def test_a_grant_through_the_workflow_moves_the_goal(project: TemporalProject) -> None:
    asking(project, "g")
    project.wait_status("g", {"blocked"}, blocked_on="operator")
    seq = last_seq(project, "g")
    refused = project.gov("grant", "g", "--attempts", "-1", "--reason", "x")
    assert refused.returncode == 3, refused.stderr
    assert last_seq(project, "g") == seq
    granted = project.gov("grant", "g", "--attempts", "2", "--reason", "ship it", "--json")
    assert granted.returncode == 0, granted.stderr
    project.wait_status("g", {"succeeded"})
    [grant] = [e for e in project.events("g") if e["type"] == "budget.granted"]
    assert (grant["attempts"], grant["reason"]) == (2, "ship it")
    assert grant["actor"].startswith("operator:")
    assert verbs_sent(project) == ["grant"]  # as the workflow's update, not to the store
    again = project.gov("grant", "g", "--attempts", "1", "--reason", "x")
    assert again.returncode == 5  # it is not waiting: refused before anything is sent
    assert "not waiting for more budget" in again.stderr


def test_a_decline_through_the_workflow_leaves_it_waiting(project: TemporalProject) -> None:
    asking(project, "d")
    project.wait_status("d", {"blocked"}, blocked_on="operator")
    declined = project.gov("decline", "d", "--reason", "not this week")
    assert declined.returncode == 0, declined.stderr
    assert [e["reason"] for e in project.events("d") if e["type"] == "budget.declined"] == [
        "not this week"
    ]
    assert verbs_sent(project) == ["decline"]
    status = project.status("d")
    assert (status["status"], status["blocked_on"]) == ("blocked", "operator")
    twice = project.gov("decline", "d", "--reason", "still no")
    assert twice.returncode == 5
    assert "declined already" in twice.stderr


def test_the_workflow_asks_for_more_of_the_goals_own_budget(project: TemporalProject) -> None:
    two_items(project, "w", NOBODY)
    start_all(project, ["w"])
    project.worker()
    status = project.wait_status("w", {"blocked"}, blocked_on="operator")
    assert "waiting for a person to grant more budget" in status["reason"]
    [asked] = [e for e in project.events("w") if e["type"] == "budget.requested"]
    assert (asked["budget"], asked["attempts"], asked["actor"]) == ("total_attempts", 1, "governor")
    granted = project.gov("grant", "w", "--attempts", "2", "--reason", "two more")
    assert granted.returncode == 0, granted.stderr
    project.wait_status("w", {"succeeded"})
    assert verbs_sent(project) == ["grant"]


def test_the_goals_own_rule_grants_a_small_request_on_temporal(project: TemporalProject) -> None:
    two_items(project, "p", {"auto_usd": 0.0, "auto_attempts": 1})
    start_all(project, ["p"])
    project.worker()
    project.wait_status("p", {"succeeded"})
    events = project.events("p")
    asked = [e for e in events if e["type"] == "budget.requested"]
    granted = [e for e in events if e["type"] == "budget.granted"]
    assert asked
    assert len(asked) == len(granted)  # each request answered at once by the rule
    for request, grant in zip(asked, granted, strict=True):
        assert grant["seq"] == request["seq"] + 1
        assert (grant["actor"], grant["rule"], grant["attempts"]) == (
            "policy", "policy grants.auto_attempts", 1
        )  # fmt: skip
    assert verbs_sent(project) == []  # the workflow's own steps


def test_the_workflow_asks_for_what_the_forecast_says_the_goal_needs(
    project: TemporalProject,
) -> None:
    """With similar goals in the store (the same agents), a goal the workflow drives that
    its own attempts stop asks for the attempts they say it needs to finish (SPEC §13.7),
    not one."""
    keys = ("a", "b", "c", "d")
    deps = {"b": ["a"], "c": ["b"], "d": ["c"]}
    scripts: list[dict[str, Any]] = [
        planner_script([{"reply": plan(*keys, deps=deps)}, {"reply": COMPLETE}]),
        *(worker_script(k, [{"effects": True, "reply": done(k)}]) for k in keys),
    ]
    agents = scripted(project, scripts)
    for n in range(6):
        assert (
            project.gov("new", project.goal_file(f"done{n}", agents, agents).name).returncode == 0
        )
        assert project.gov("run", f"done{n}").returncode == 0
    path = project.goal_file("w", agents, agents, max_total_attempts=1, grants=NOBODY)
    assert project.gov("new", path.name).returncode == 0
    start_all(project, ["w"])
    project.worker()
    project.wait_status("w", {"blocked"}, blocked_on="operator")
    [asked] = [e for e in project.events("w") if e["type"] == "budget.requested"]
    assert (asked["budget"], asked["actor"]) == ("total_attempts", "governor")
    assert 1 < asked["attempts"] <= 3, asked  # b, c and d are left: not one more
