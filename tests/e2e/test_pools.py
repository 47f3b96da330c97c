"""Pools and grants through the real ``governor`` command (SPEC §13.6, §13.7): agents are
real subprocesses (the scripted harness) that report each call's cost.

A goal parks on a spent pool and goes on by itself at the (test-shortened) renewal; a
pool's grant rule grants a small request by itself (actor ``policy``); a larger one waits
for a person, whose ``governor grant`` moves the goal; a goal's own budget asks too, and a
grant that expired stops the goal again at its next charge.
"""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

CALL = 0.1
"""What every agent call of these goals reports it cost."""


def scripts(*keys: str, delay_s: float = 0.0) -> list[dict[str, Any]]:
    worker = {"cost_usd": CALL, "effects": True, "delay_s": delay_s}
    return [
        planner_script([
            {"cost_usd": CALL, "reply": plan(*keys)}, {"cost_usd": CALL, "reply": COMPLETE}
        ]),
        *(worker_script(k, [{**worker, "reply": done(k)}]) for k in keys),
    ]  # fmt: skip


def pooled_goal(
    project: Project, goal_id: str, pools: list[str], keys: tuple[str, ...] = ("a",), **policy: Any
) -> str:
    scenario = project.scenario(f"{goal_id}.scenario.json", scripts(*keys))
    agent = {"harness": "scripted", "args": [scenario]}
    path = project.goal_file(goal_id, agent, agent, **policy)
    spec = json.loads(path.read_text())
    path.write_text(json.dumps({**spec, "pools": pools} if pools else spec))
    result = project.gov("new", path.name)
    assert result.returncode == 0, result.stderr
    return goal_id


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def ok(project: Project, *args: str) -> str:
    result = project.gov(*args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def ledger(project: Project, goal_id: str) -> tuple[Any, ...]:
    status = project.status(goal_id)
    rows = status["ledger"]
    return (
        status["status"],
        rows["replans"]["charged"],
        rows["attempts"]["charged"],
        rows["cost_usd"],
    )


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_a_goal_parks_on_a_spent_pool_and_goes_on_by_itself_when_it_renews(project):
    ok(project, "pool", "set", "team", "--usd", "0.25", "--per", "20s")
    pooled_goal(project, "g1", ["team"])
    pooled_goal(project, "alone", [])
    time.sleep(20 - time.time() % 20 + 0.05)  # a fresh window: the first calls share it
    result = project.gov("run", "g1", "--max-wait", "60")
    assert result.returncode == 0, result.stderr
    assert "pool 'team' is spent this period" in result.stderr
    events = project.events("g1")
    [asked] = [e for e in events if e["type"] == "budget.requested"]
    assert asked["budget"] == "pool:team"
    assert asked["actor"] == "governor"
    # it asked before the third call, and that call started only after the renewal
    after = [e for e in events if e["seq"] > asked["seq"]]
    assert after[0]["type"] == "plan.requested"
    assert when(after[0]["at"]) >= when(asked["renews_at"])
    # the goal's own ledger is what the same goal spends without a pool
    assert project.gov("run", "alone").returncode == 0
    assert ledger(project, "g1") == ledger(project, "alone")
    assert ledger(project, "g1")[:3] == ("succeeded", 2, 1)
    assert ledger(project, "g1")[3] == pytest.approx(3 * CALL)
    pool = json.loads(ok(project, "pool", "show", "team", "--json"))
    assert pool["goals"] == ["g1"]
    assert pool["in_flight"] == 0
    kinds = [
        json.loads(line)["type"]
        for line in ok(project, "pool", "show", "team", "--events").splitlines()
    ]
    assert kinds.count("pool.reserved") == kinds.count("pool.settled") == 3
    assert kinds.count("pool.renewed") == 2


def test_a_pools_grant_rule_grants_a_small_request_by_itself(project):
    ok(project, "pool", "set", "fleet", "--usd", "0.15", "--auto-usd", "0.2")
    pooled_goal(project, "g1", ["fleet"])
    result = project.gov("run", "g1")
    assert result.returncode == 0, result.stderr
    granted = [e for e in project.events("g1") if e["type"] == "budget.granted"]
    assert granted
    assert {(e["actor"], e["rule"]) for e in granted} == {("policy", "pool fleet grants.auto_usd")}
    pool_events = [
        json.loads(x) for x in ok(project, "pool", "show", "fleet", "--events").splitlines()
    ]
    assert {e["actor"] for e in pool_events if e["type"] == "pool.granted"} == {"policy"}
    assert ledger(project, "g1")[0] == "succeeded"


def test_a_larger_request_waits_for_a_person_whose_grant_moves_the_goal(project):
    ok(project, "pool", "set", "small", "--usd", "0.15", "--auto-usd", "0.01")
    pooled_goal(project, "g1", ["small"])
    stopped = project.gov("run", "g1")
    assert stopped.returncode == 10, stopped.stderr  # blocked
    status = project.status("g1")
    assert (status["status"], status["blocked_on"]) == ("blocked", "operator")
    assert "waiting for a person to grant more budget" in status["reason"]
    listed = [json.loads(x) for x in ok(project, "list", "--json", "--needs-person").splitlines()]
    assert [g["goal_id"] for g in listed] == ["g1"]
    explained = ok(project, "explain", "g1")
    assert "advice: the goal asks a person for more budget (pool:small)" in explained
    [blocker] = status["blockers"]
    assert (blocker["kind"], blocker["waits_on"]) == ("grant", "person")
    assert blocker["commands"] == [
        "governor grant g1 --usd 0.1 --reason REASON",
        "governor decline g1 --reason REASON",
    ]
    [row] = listed
    assert row["blockers"][0]["commands"] == blocker["commands"]
    assert json.loads(ok(project, "explain", "g1", "--json"))["blockers"][0]["kind"] == "grant"
    refused = project.gov("grant", "nobody-here", "--usd", "1", "--reason", "x")
    assert refused.returncode == 4
    moved = ok(project, "grant", "g1", "--usd", "1", "--reason", "the release needs it")
    assert "granted for g1: g1" in moved
    assert project.gov("run", "g1").returncode == 0
    [granted] = [e for e in project.events("g1") if e["type"] == "budget.granted"]
    assert granted["actor"].startswith("operator:")
    assert granted["reason"] == "the release needs it"
    again = project.gov("grant", "g1", "--usd", "1", "--reason", "x")
    assert again.returncode == 5  # it is not waiting: nothing recorded
    assert len([e for e in project.events("g1") if e["type"] == "budget.granted"]) == 1


def test_an_expired_grant_on_the_goals_own_budget_stops_it_again_at_its_next_charge(project):
    grants = {"auto_usd": 0.0, "auto_attempts": 0}
    pooled_goal(project, "g1", [], ("a", "b"), max_cost_usd=0.15, grants=grants)
    stopped = project.gov("run", "g1")
    assert stopped.returncode == 10, stopped.stderr
    [asked] = [e for e in project.events("g1") if e["type"] == "budget.requested"]
    assert (asked["budget"], asked["usd"]) == ("cost", CALL)
    # enough for the goal to finish, had it not expired while its next call runs
    ok(project, "grant", "g1", "--usd", "0.5", "--expires", "15s", "--reason", "one more")
    project.scenario("g1.scenario.json", scripts("a", "b", delay_s=25.0))
    again = project.gov("run", "g1")
    assert again.returncode == 10, again.stderr
    types = [e["type"] for e in project.events("g1")]
    tail = types[types.index("budget.granted") :]
    # the grant ran b (unless this machine took 15 s to start it), and, expired, stopped
    # the goal at b's charge: the goal never completes on what the grant had allowed
    assert "budget.expired" in tail
    assert tail[-1] == "budget.requested"
    assert "plan.completed" not in tail
    if "attempt.started" in tail:
        assert tail.index("attempt.started") < tail.index("budget.expired")
    status = project.status("g1")
    assert (status["status"], status["blocked_on"]) == ("blocked", "operator")


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["pool", "set", "p", "--usd", "-1"], 3, "greater than or equal to 0"),
        (["pool", "set", "p", "--usd", "nan"], 3, "finite"),
        (["pool", "set", "p", "--usd", "inf"], 3, "finite"),
        (["pool", "set", "p", "--usd", "1e12"], 3, "less than or equal"),
        (["pool", "set", "p", "--usd", "1", "--tz", "Mars/Olympus"], 3, "unknown time zone"),
        (["pool", "set", "p", "--usd", "1", "--per", "fortnight"], 3, "not a duration"),
        (["pool", "delete", "ghost"], 4, "no pool 'ghost'"),
        (["grant", "ghost", "--usd", "1", "--reason", "x"], 4, "no pool 'ghost'"),
    ],
    ids=["negative", "NaN", "infinite", "absurd", "unknown zone", "unknown period",
         "deleting a pool that is not there", "granting to nothing"],
)  # fmt: skip
def test_bad_input_is_one_line_and_a_documented_exit_code_and_records_nothing(
    project, args, code, says
):
    result = project.gov(*args)
    assert result.returncode == code
    assert says in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert ok(project, "pool", "list", "--json") == ""


def test_a_goal_cannot_name_a_pool_that_does_not_exist_nor_delete_one_in_use(project):
    scenario = project.scenario("s.json", scripts("a"))
    agent = {"harness": "scripted", "args": [scenario]}
    path = project.goal_file("g1", agent, agent)
    path.write_text(json.dumps({**json.loads(path.read_text()), "pools": ["nope"]}))
    result = project.gov("new", path.name)
    assert (result.returncode, result.stderr.strip()) == (
        4,
        "error: no pool 'nope': `governor pool list` shows the pools",
    )
    ok(project, "pool", "set", "team", "--usd", "1")
    pooled_goal(project, "g2", ["team"])
    refused = project.gov("pool", "delete", "team")
    assert refused.returncode == 5
    assert "named by 1 goal(s) that have not ended (g2)" in refused.stderr
    assert project.gov("cancel", "g2", "--reason", "done with it").returncode == 0
    ok(project, "pool", "delete", "team")


def test_the_python_api_joins_a_goal_to_its_pools(project):
    import governor
    from governor.errors import NotFoundError

    ok(project, "pool", "set", "team", "--usd", "1")
    store = project.env["GOVERNOR_STORE"]
    spec = {
        "title": "API goal", "objective": "Do it.", "planner": "p", "worker": "p",
        "profiles": {"p": {"harness": "scripted", "reserve_usd": 0.2}},
    }  # fmt: skip
    with governor.Goal.create(
        {**spec, "pools": ["team"]}, store=store, workdir=project.root
    ) as goal:
        created = goal.events()[0]
        assert created.type == "goal.created"
        assert created.pools == ("team",)
        assert created.profiles["p"].reserve_usd == 0.2
    with pytest.raises(NotFoundError, match="no pool 'other'"):
        governor.Goal.create({**spec, "pools": ["other"]}, store=store, workdir=project.root)


def test_a_request_asks_what_the_forecast_says_the_goal_needs_to_finish(project):
    """With similar goals in the store (the same agents), a goal stopped by its own cost
    budget asks for what they say it needs to finish (SPEC §13.7), not one more call."""
    keys = ("a", "b", "c", "d")  # each goal: a plan, four items, "complete": $0.60
    scenario = project.scenario("same.scenario.json", scripts(*keys))
    agent = {"harness": "scripted", "args": [scenario]}
    for n in range(8):
        ok(project, "new", project.goal_file(f"done{n}", agent, agent).name)
        assert project.gov("run", f"done{n}").returncode == 0
    grants = {"auto_usd": 0.0, "auto_attempts": 0}
    ok(project, "new", project.goal_file("g1", agent, agent, max_cost_usd=0.15, grants=grants).name)
    assert project.gov("run", "g1").returncode == 10
    [asked] = [e for e in project.events("g1") if e["type"] == "budget.requested"]
    spent = project.status("g1")["ledger"]["cost_usd"]
    assert asked["budget"] == "cost"
    # more than one call (what it asks without data), at most what the eight finished
    # goals spent in all ($0.60) less what this one has spent: three items and a plan left
    assert CALL < asked["usd"] <= 6 * CALL - spent + 1e-9, (asked, spent)
    [blocker] = project.status("g1")["blockers"]
    assert f"governor grant g1 --usd {asked['usd']:g}" in blocker["commands"][0]
