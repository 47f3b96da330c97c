"""What-if of a history's grants through the real ``governor replay`` (issue 33 Build 7):
histories recorded by real runs (the scripted harness, a real SQLite store) in which a
person, or the goal's own grant rule, granted more budget — re-decided had no grant been
made (``--without-grants``) or under other auto-grant settings (``--grants K=V,…``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

NOBODY = {"auto_usd": 0.0, "auto_attempts": 0}
STOOD = ("status", "next_action", "blocked_on", "reason", "ledger")


def short_goal(project: Project, goal_id: str, grants: dict[str, Any]) -> None:
    """Two items, b after a, under a budget of one charged attempt: the goal asks for more."""
    scenario = project.scenario(
        f"{goal_id}.scenario.json",
        [
            planner_script([{"reply": plan("a", "b", deps={"b": ["a"]})}, {"reply": COMPLETE}]),
            worker_script("a", [{"effects": True, "reply": done("a")}]),
            worker_script("b", [{"effects": True, "reply": done("b")}]),
        ],
    )
    agent = {"harness": "scripted", "args": [scenario]}
    path = project.goal_file(goal_id, agent, agent, max_total_attempts=1, grants=grants)
    assert project.gov("new", path.name).returncode == 0


def ok(project: Project, *args: str) -> str:
    result = project.gov(*args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def whatif(project: Project, goal_id: str, *how: str) -> dict[str, Any]:
    return json.loads(ok(project, "replay", goal_id, *how, "--json"))  # type: ignore[no-any-return]


def decision_after(project: Project, goal_id: str, seq: int) -> dict[str, Any]:
    """The recorded decision after event ``seq`` (``governor replay --at``)."""
    step = json.loads(ok(project, "replay", goal_id, "--at", str(seq), "--json"))
    return {k: step[k] for k in STOOD}


@pytest.fixture(scope="module")
def granted(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """g1: a person granted two attempts after the goal asked for one; it then succeeded."""
    project = Project(tmp_path_factory.mktemp("granted"))
    short_goal(project, "g1", NOBODY)
    assert project.gov("run", "g1").returncode == 10  # blocked: a person must grant
    ok(project, "grant", "g1", "--attempts", "2", "--reason", "ship it")
    assert project.gov("run", "g1").returncode == 0
    return project


@pytest.fixture(scope="module")
def auto(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """g2: the goal's own rule granted one attempt, twice, by itself; it succeeded."""
    project = Project(tmp_path_factory.mktemp("auto"))
    short_goal(project, "g2", {"auto_attempts": 1})
    assert project.gov("run", "g2").returncode == 0
    return project


def test_without_the_persons_grant_the_goal_stops_where_it_asked(granted: Project) -> None:
    result = whatif(granted, "g1", "--without-grants")
    assert result["outcome"] == "known"
    assert result["grants"] is None
    [request] = result["requests"]
    assert (request["budget"], request["attempts"], request["answered"]) == (
        "total_attempts",
        1,
        "person",
    )
    assert result["divergence"] == {
        "seq": request["answer_seq"],
        "kind": "not granted",
        "request_seq": request["seq"],
    }
    # exact: where the record stood just before the grant
    stood = {k: result["decision"][k] for k in STOOD}
    assert stood == decision_after(granted, "g1", request["answer_seq"] - 1)
    assert result["decision"]["rule"] == "budget.3"
    assert result["bought"] == {  # b's attempt, and the planner's call that completed the goal
        "attempts_charged": 1,
        "replans_charged": 1,
        "cost_usd": 0.0,
        "accepted": ["p1-b"],
    }
    assert result["recorded_final"]["status"] == "succeeded"


def test_settings_that_grant_it_by_themselves_save_the_persons_wait(granted: Project) -> None:
    result = whatif(granted, "g1", "--grants", "auto_attempts=1")
    assert result["outcome"] == "censored"
    [request] = result["requests"]
    assert request["auto"] is True
    assert result["divergence"]["kind"] == "granted by policy"
    assert result["divergence"]["seq"] == request["seq"]
    assert result["saved_s"] == pytest.approx(request["waited_s"])
    assert result["saved_s"] > 0


def test_settings_that_grant_nothing_by_themselves_change_nothing(granted: Project) -> None:
    result = whatif(granted, "g1", "--grants", "auto_attempts=0")
    assert (result["outcome"], result["divergence"], result["bought"]) == ("same", None, None)


def test_a_policy_grant_the_other_settings_do_not_allow_stops_the_goal(auto: Project) -> None:
    requests = whatif(auto, "g2", "--grants", "auto_attempts=1")["requests"]
    assert [r["answered"] for r in requests] == ["policy", "policy"]
    assert whatif(auto, "g2", "--grants", "auto_attempts=1")["outcome"] == "same"
    result = whatif(auto, "g2", "--grants", "auto_attempts=0,auto_usd=5")
    assert result["outcome"] == "known"
    assert result["divergence"]["seq"] == requests[0]["answer_seq"]
    assert result["decision"]["rule"] == "budget.3"
    assert result["bought"]["accepted"] == ["p1-b"]
    assert result["bought"]["attempts_charged"] == 1


def test_the_text_says_where_the_story_parts(granted: Project) -> None:
    text = ok(granted, "replay", "g1", "--without-grants")
    assert "what-if goal g1 without any grant:" in text
    assert "granted by operator:" in text
    assert "known: without the grant at seq" in text
    assert "blocked/none [on operator]: waiting for a person to grant more budget" in text
    assert "items accepted after it: p1-b" in text


def test_a_history_without_grants_is_the_same_and_plain_replay_is_unchanged(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    short_goal(project, "g3", NOBODY)
    before = ok(project, "replay", "g3", "--json")
    result = whatif(project, "g3", "--without-grants")
    assert (result["outcome"], result["requests"]) == ("same", [])
    assert ok(project, "replay", "g3", "--json") == before


@pytest.mark.parametrize(
    ("how", "says"),
    [
        (["--grants", "auto_usd=-1"], "--grants: auto_usd:"),
        (["--grants", "auto_usd=nan"], "--grants: auto_usd:"),
        (["--grants", "bogus=1"], "--grants: bogus:"),
        (["--grants", "auto_usd"], "'auto_usd' is not field=value"),
        (["--grants", ""], "give at least one field=value"),
        (["--without-grants", "--policy", "max_replans=3"], "stand alone"),
    ],
    ids=["a negative amount", "NaN", "an unknown field", "no value", "nothing", "with --policy"],
)
def test_bad_settings_are_one_line_and_exit_3(granted: Project, how: list[str], says: str) -> None:
    result = granted.gov("replay", "g1", *how)
    assert result.returncode == 3, result.stderr
    assert says in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("fixture", ["granted", "auto"])
def test_a_what_if_under_the_recorded_policy_reproduces_a_history_with_grants(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    project: Project = request.getfixturevalue(fixture)
    goal_id = {"granted": "g1", "auto": "g2"}[fixture]
    result = whatif(project, goal_id, "--policy", "max_total_attempts=1")
    assert result["divergence"] is None
    assert result["final"] == result["recorded_final"]
    assert result["final"]["status"] == "succeeded"
