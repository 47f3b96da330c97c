"""A simulated fleet sharing one pool (issue 33 Build 7, SPEC §13.6): calls reserve, a
refused goal parks until the renewal or is granted by the pool's rule, and the pool's
spend passes its limit only by what calls in flight cost beyond their reservations."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from datetime import datetime, timedelta

import orjson
import pytest

from governor.analysis.fleet import POOL, FleetRun, FleetSettings, simulate_fleet
from governor.analysis.model import Model
from governor.core.events import GoalCreated
from governor.core.fold import project
from governor.core.history import validate_events
from governor.core.policy import Grants, Policy
from governor.core.pools import PoolEvent, PoolLimits
from governor.core.rules.decide import decide
from tests.e2e.cli import Project

MODEL = Model(outage_rate_per_h=0.0, missing_binary=0.0, planner_s=30.0, worker_s=120.0)
HOURLY = PoolLimits(usd=2.0, period="every", every_s=3600.0)


def _fleet(limits: PoolLimits, goals: int = 20, seed: int = 5) -> FleetRun:
    settings = FleetSettings(goals=goals, spread_s=30.0, pool=limits)
    return simulate_fleet(MODEL, Policy(), seed=seed, settings=settings)


@pytest.fixture(scope="module")
def hourly() -> FleetRun:
    return _fleet(HOURLY)


def _over_by_at_most_in_flight(events: list[PoolEvent]) -> tuple[int, float]:
    """Fold the pool's own events: at every settlement, what the period spent is at most
    the limit (with the grants open when the last call was let in) plus what the calls in
    flight at that admission cost beyond their reservations. (settlements, the most over)"""
    actual = {e.call: e.figure.usd for e in events if e.type == "pool.settled"}
    limit = 0.0
    spent, in_flight = 0.0, {}
    grants: list[tuple[datetime, datetime | None, float]] = []
    admitted: tuple[float, dict[str, float]] = (0.0, {})
    settled, most_over = 0, 0.0
    for e in events:
        if e.type == "pool.set":
            limit = e.limits.usd or math.inf
        elif e.type == "pool.renewed":
            spent, start = 0.0, e.period_start
            grants = [g for g in grants if g[0] >= start]
        elif e.type == "pool.granted":
            grants.append((e.at, e.expires_at, e.figure.usd))
        elif e.type == "pool.reserved":
            in_flight[e.call] = e.figure.usd
            room = limit + sum(u for _, exp, u in grants if exp is None or e.at < exp)
            admitted = (room, dict(in_flight))
        elif e.type == "pool.released":
            in_flight.pop(e.call)
        elif e.type == "pool.settled":
            in_flight.pop(e.call)
            spent += e.figure.usd
            room, then = admitted
            excess = sum(max(0.0, actual.get(c, 0.0) - r) for c, r in then.items())
            assert spent <= room + excess + 1e-9, (e, spent, room, excess)
            settled += 1
            most_over = max(most_over, spent - room)
    return settled, most_over


def test_the_fleets_goals_name_the_pool_and_their_histories_validate(hourly: FleetRun) -> None:
    for history in hourly.histories:
        validate_events(history)
        created = history[0]
        assert isinstance(created, GoalCreated)
        assert created.pools == (POOL,)


def test_spend_passes_the_limit_only_by_what_was_in_flight(hourly: FleetRun) -> None:
    assert hourly.pool is not None
    settled, most_over = _over_by_at_most_in_flight(hourly.pool.pool.events)
    calls = sum(
        e.type in ("plan.proposed", "plan.failed", "attempt.finished")
        for h in hourly.histories
        for e in h
    )
    assert settled == calls  # every call was reserved and settled
    assert most_over > 0  # reservations sized before a goal's first cost do run over


def test_the_pool_spends_what_the_goals_ledgers_spend(hourly: FleetRun) -> None:
    assert hourly.pool is not None
    recorded = math.fsum(getattr(e, "cost_usd", None) or 0.0 for h in hourly.histories for e in h)
    assert math.fsum(p.spent["usd"] for p in hourly.pool.periods) == pytest.approx(recorded)
    starts = [p.start for p in hourly.pool.periods]
    assert all(b - a >= timedelta(hours=1) for a, b in itertools.pairwise(starts) if a and b)


def test_parked_goals_go_on_by_themselves_at_the_renewal(hourly: FleetRun) -> None:
    assert hourly.pool is not None
    tally = hourly.pool
    assert len(tally.parked_goals) >= 3
    assert tally.parked_s > 0
    assert not tally.stopped
    resumed = 0
    for history in hourly.histories:
        asked = [e for e in history if e.type == "budget.requested"]
        for request in asked:
            assert request.budget == f"pool:{POOL}"
            assert request.renews_at is not None
            later = [
                e.at
                for e in history
                if e.type in ("plan.requested", "attempt.started") and e.at > request.at
            ]
            if later:
                assert min(later) >= request.renews_at  # no call while parked
                resumed += 1
    assert resumed >= len(tally.parked_goals)
    ends: Counter[str | None] = Counter()
    for history in hourly.histories:
        view = project(history)
        assert view.last_at is not None
        ends[decide(view, view.last_at, with_ledger=False).blocked_on] += 1
    assert ends["budget"] == ends["operator"] == 0  # none ended waiting on the pool


def test_a_total_pool_without_a_rule_leaves_goals_waiting_for_a_person() -> None:
    run = _fleet(PoolLimits(usd=1.0), goals=8)
    assert run.pool is not None
    assert run.pool.stopped
    assert run.pool.grants == 0
    for index in run.pool.stopped:
        view = project(run.histories[index])
        assert view.last_at is not None
        decision = decide(view, view.last_at, with_ledger=False)
        assert (decision.status, decision.blocked_on) == ("blocked", "operator")
    _over_by_at_most_in_flight(run.pool.pool.events)


def test_the_pools_rule_grants_small_requests_by_itself() -> None:
    limits = PoolLimits(usd=1.0, grants=Grants(auto_usd=0.3, expires_s=600.0))
    run = _fleet(limits, goals=8)
    assert run.pool is not None
    granted = [e for h in run.histories for e in h if e.type == "budget.granted"]
    pool_grants = [e for e in run.pool.pool.events if e.type == "pool.granted"]
    assert granted
    assert len(granted) == len(pool_grants) == run.pool.grants
    assert {(g.actor, g.rule) for g in granted} == {("policy", f"pool {POOL} grants.auto_usd")}
    assert all(g.expires_at == g.at + timedelta(seconds=600) for g in pool_grants)
    assert not run.pool.stopped
    _over_by_at_most_in_flight(run.pool.pool.events)


def test_simulate_fleet_with_a_pool_reports_it(tmp_path: object) -> None:
    project = Project(tmp_path)  # type: ignore[arg-type]
    result = project.gov(
        "simulate", "--goals", "12", "--seed", "2", "--out", "corpus", "--fleet", "aware",
        "--spread-s", "600", "--pool-usd", "2", "--pool-per", "1h", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    pool = orjson.loads(result.stdout)["fleet"]["pool"]
    assert list(pool) == [
        "limit", "grants", "spend_per_period", "parks", "parked_goals", "parked_s",
        "stopped_goals", "granted", "events",
    ]  # fmt: skip
    assert pool["limit"]["every_s"] == 3600
    assert pool["grants"] is None
    assert pool["parked_goals"] > 0
    assert pool["parked_s"] > 0
    starts = [datetime.fromisoformat(p["start"]) for p in pool["spend_per_period"]]
    assert starts == sorted(starts)
    assert all(s.minute == 0 for s in starts)
    text = project.gov(
        "simulate", "--goals", "4", "--out", "text", "--fleet", "aware", "--pool-usd", "0.5"
    )
    assert text.returncode == 0, text.stderr
    assert "pool fleet ($0.5 in total):" in text.stdout


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--pool-usd", "1"], "error: the --pool-* options model a pool shared by a fleet"),
        (["--fleet", "aware", "--pool-usd", "-2"], "error: pool usd: Input should be greater"),
        (["--fleet", "aware", "--pool-usd", "1,2"], "error: --pool-usd 1,2: a fleet has one pool"),
        (["--fleet", "aware", "--pool-per", "day"], "error: a fleet's pool needs --pool-usd"),
        (
            ["--fleet", "aware", "--pool-usd", "1", "--pool-tz", "Nowhere/Else"],
            "error: unknown time zone",
        ),
        (
            ["--fleet", "aware", "--pool-usd", "1", "--pool-auto-usd", "nan"],
            "error: pool grants auto_usd: Input should be a finite",
        ),
    ],
)
def test_a_bad_fleet_pool_is_one_line_exit_3_and_nothing_written(
    tmp_path: object, options: list[str], says: str
) -> None:
    project = Project(tmp_path)  # type: ignore[arg-type]
    result = project.gov("simulate", "--goals", "3", "--out", "corpus", *options)
    assert result.returncode == 3
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(says), result.stderr
    assert not (project.root / "corpus").exists()
