"""Pooled goals on Temporal (SPEC §13.6, §13.7): the workflow reserves every agent call
against the goal's pools before its start is recorded, settles it with the recorded
figure, parks the goal on a spent pool until the renewal (a durable timer), records the
request for more and the pool's own grant (actor ``policy``), and a person's grant from
the CLI reaches it as the ``governor.verb`` update.

Real parts throughout: a Temporal dev server, ``governor temporal worker`` processes,
a SQLite store, agents that are subprocesses (the scripted harness) reporting each
call's cost. Every history a test records is replayed at its end (``conftest``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from contextlib import closing
from datetime import datetime
from typing import Any

import pytest

from governor.core.pools import PoolEvent, PoolReserved, PoolSettled, PoolState, evolve_pool
from governor.store import open_store
from tests.e2e.test_pools import CALL, pooled_goal, scripts
from tests.temporal.conftest import (
    TemporalProject,
    histories,
    run_async,
    start_all,
    workflow_of,
)
from tests.temporal.test_cancel import temporal_cli
from tests.temporal.test_grants import verbs_sent


def pool_events(project: TemporalProject, name: str) -> list[PoolEvent]:
    with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
        return store.pool_events(name)


def ok(project: TemporalProject, *args: str) -> str:
    result = project.gov(*args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def calls_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The goal's recorded call outcomes (planner and worker) that report a cost."""
    kinds = ("plan.proposed", "plan.failed", "attempt.finished")
    return [e for e in events if e["type"] in kinds]


def paired(events: list[PoolEvent], goal_id: str) -> list[tuple[PoolReserved, PoolSettled]]:
    """Each of the goal's reservations with its settlement (every one is settled)."""
    reserved = {e.call: e for e in events if isinstance(e, PoolReserved) and e.goal_id == goal_id}
    settled = {e.call: e for e in events if isinstance(e, PoolSettled) and e.goal_id == goal_id}
    assert set(reserved) == set(settled), "a reservation was never settled (or vice versa)"
    for call, done in settled.items():
        assert reserved[call].seq < done.seq
    return [(reserved[c], settled[c]) for c in reserved]


def within_bound(events: list[PoolEvent], limit: float) -> None:
    """At every event, each period's spend is within the limit plus what the calls settled
    so far in it cost over their reservations; a reservation, when made, keeps spent +
    reserved within the limit (so the overshoot is only the calls in flight)."""
    state, asked, over = PoolState(), {}, 0.0
    for event in events:
        if event.type == "pool.renewed":
            over = 0.0
        evolve_pool(state, event)
        if isinstance(event, PoolReserved):
            asked[event.call] = event.figure.usd
            assert state.spent["usd"] + state.reserved("usd") <= limit + over + 1e-9, event
        if isinstance(event, PoolSettled):
            over += max(event.figure.usd - asked[event.call], 0.0)
        assert state.spent["usd"] <= limit + over + 1e-9, (event.seq, state.spent, over)


def parked_one(project: TemporalProject, ids: list[str], within_s: float = 120) -> dict[str, Any]:
    """The status of the first of the goals seen parked on a spent pool."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        for goal_id in ids:
            status = project.status(goal_id)
            if status["blocked_on"] == "budget":
                return status
        time.sleep(0.1)
    raise AssertionError("no goal was seen parked on the pool")


def test_a_pooled_goal_reserves_and_settles_every_call(project: TemporalProject) -> None:
    ok(project, "pool", "set", "team", "--usd", "5")
    pooled_goal(project, "g", ["team"], ("a", "b"))
    start_all(project, ["g"])
    project.worker()
    project.wait_status("g", {"succeeded"})
    events = pool_events(project, "team")
    pairs = paired(events, "g")
    calls = calls_of(project.events("g"))
    assert len(pairs) == len(calls) == 4  # planner twice, a and b once each
    assert [e.type for e in events].count("pool.released") == 0
    spent = sum(s.figure.usd for _, s in pairs)
    assert spent == pytest.approx(sum(c["cost_usd"] for c in calls)) == pytest.approx(4 * CALL)
    assert sum(s.figure.attempts for _, s in pairs) == 4  # every call charged
    pool = json.loads(ok(project, "pool", "show", "team", "--json"))
    assert pool["in_flight"] == 0
    assert pool["goals"] == ["g"]


def test_goals_in_a_tiny_pool_park_and_go_on_by_themselves_at_the_renewal(
    project: TemporalProject,
) -> None:
    """Three goals on two Temporal workers and one under ``governor run``, on one store."""
    limit, period = 0.25, 10
    ok(project, "pool", "set", "tiny", "--usd", str(limit), "--per", f"{period}s")
    ids = [pooled_goal(project, f"g{i}", ["tiny"]) for i in range(3)]
    pooled_goal(project, "by-run", ["tiny"])
    start_all(project, ids)
    project.worker()
    project.worker()
    beside = project.popen("run", "by-run", "--max-wait", "60")
    parked = parked_one(project, ids)  # $1.2 asked of $0.25 a period: one of them parks
    assert (parked["status"], parked["blocked_on"]) == ("waiting", "budget")
    assert "pool 'tiny' is spent this period" in parked["reason"]
    assert "goes on by itself at" in parked["reason"]
    for goal_id in ids:
        project.wait_status(goal_id, {"succeeded"}, within_s=240)
    _, err = beside.communicate(timeout=240)
    assert beside.returncode == 0, err
    events = pool_events(project, "tiny")
    within_bound(events, limit)
    for goal_id in [*ids, "by-run"]:
        pairs = paired(events, goal_id)
        assert len(pairs) == 3
        assert sum(s.figure.usd for _, s in pairs) == pytest.approx(3 * CALL)
    assert [e.type for e in events].count("pool.renewed") >= 4  # $1.2 at $0.25 a period
    asked = {
        goal_id: [e for e in project.events(goal_id) if e["type"] == "budget.requested"]
        for goal_id in ids
    }
    assert any(asked.values()), "no goal found the pool spent"
    runs = Counter(name.split(".")[-2] for name, _ in run_async(histories(project.temporal)))
    assert any(runs[g] > 1 for g, requests in asked.items() if requests), (
        "no parked goal continued as new after its wait for the renewal"
    )
    for goal_id, requests in asked.items():
        history = project.events(goal_id)
        assert "budget.granted" not in [e["type"] for e in history]
        for request in requests:
            assert request["budget"] == "pool:tiny"
            assert "pool 'tiny' is spent this period" in request["reason"]
            # it went on by itself: its next call started at or after the renewal
            after = [e for e in history if e["seq"] > request["seq"]]
            starts = [e for e in after if e["type"] in ("plan.requested", "attempt.started")]
            assert datetime.fromisoformat(starts[0]["at"]) >= datetime.fromisoformat(
                request["renews_at"]
            )


def test_a_pools_rule_grants_a_small_request_by_itself(project: TemporalProject) -> None:
    ok(project, "pool", "set", "fleet", "--usd", "0.15", "--auto-usd", "0.2")
    pooled_goal(project, "g", ["fleet"])
    start_all(project, ["g"])
    project.worker()
    project.wait_status("g", {"succeeded"})
    history = project.events("g")
    granted = [e for e in history if e["type"] == "budget.granted"]
    assert granted
    assert {(e["actor"], e["rule"]) for e in granted} == {("policy", "pool fleet grants.auto_usd")}
    requested = [e for e in history if e["type"] == "budget.requested"]
    assert len(requested) == len(granted)
    events = pool_events(project, "fleet")
    grants = [e for e in events if e.type == "pool.granted"]
    assert len(grants) == len(granted)  # one pool grant per goal grant, none twice
    assert {(e.actor, e.rule, e.goal_id) for e in grants} == {("policy", "grants.auto_usd", "g")}
    assert len(paired(events, "g")) == 3
    assert verbs_sent(project) == []  # the workflow's own steps, no operator's update


def test_a_persons_grant_wakes_a_goal_waiting_on_a_spent_pool(project: TemporalProject) -> None:
    ok(project, "pool", "set", "small", "--usd", "0.15")  # no period: only a person moves it
    pooled_goal(project, "g", ["small"])
    start_all(project, ["g"])
    project.worker()
    status = project.wait_status("g", {"blocked"}, blocked_on="operator")
    assert "waiting for a person to grant more budget" in status["reason"]
    assert "pool 'small' is spent in total" in status["reason"]
    moved = ok(project, "grant", "small", "--usd", "1", "--reason", "the release needs it")
    assert "granted for small: g" in moved
    project.wait_status("g", {"succeeded"})
    [granted] = [e for e in project.events("g") if e["type"] == "budget.granted"]
    assert granted["actor"].startswith("operator:")
    assert verbs_sent(project) == ["grant"]  # through the workflow, its one writer
    events = pool_events(project, "small")
    assert [e.actor for e in events if e.type == "pool.granted"] == [granted["actor"]]
    assert len(paired(events, "g")) == 3


def calling_for_long(project: TemporalProject) -> None:
    """A pooled goal on Temporal whose worker's call runs (for 120 s), its reservation held."""
    ok(project, "pool", "set", "team", "--usd", "5")
    agent = {"harness": "scripted", "args": [project.scenario("s.json", scripts("a", delay_s=120))]}
    path = project.goal_file("g", agent, agent)
    path.write_text(json.dumps({**json.loads(path.read_text()), "pools": ["team"]}))
    ok(project, "new", path.name)
    start_all(project, ["g"])
    project.worker()
    deadline = time.monotonic() + 120
    while "attempt.started" not in project.types("g"):
        assert time.monotonic() < deadline, project.types("g")
        time.sleep(0.2)
    held = json.loads(ok(project, "pool", "show", "team", "--json"))
    assert held["in_flight"] == 1  # the worker's call holds its reservation


def no_reservation_left(project: TemporalProject) -> None:
    """Every reservation of the goal (the planner's call, the worker's) ends settled or
    released."""
    deadline = time.monotonic() + 120
    while json.loads(ok(project, "pool", "show", "team", "--json"))["in_flight"]:
        assert time.monotonic() < deadline, "the cancelled call's reservation stays in flight"
        time.sleep(0.2)
    events = pool_events(project, "team")
    reserved = [e for e in events if isinstance(e, PoolReserved)]
    ended = [e for e in events if e.type in ("pool.settled", "pool.released")]
    assert len(reserved) == len(ended) == 2


def test_a_cancelled_goal_leaves_no_reservation_in_its_pool(project: TemporalProject) -> None:
    calling_for_long(project)
    ok(project, "cancel", "g", "--reason", "enough")
    project.wait_status("g", {"cancelled"})
    no_reservation_left(project)


def test_a_cancel_from_temporal_leaves_no_reservation_in_its_pool(
    project: TemporalProject,
) -> None:
    calling_for_long(project)
    cancelled = temporal_cli(project, "workflow", "cancel", "-w", workflow_of(project, "g"))
    assert cancelled.returncode == 0, cancelled.stderr
    project.wait_status("g", {"cancelled"})
    no_reservation_left(project)
