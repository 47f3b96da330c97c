"""A fleet in one pool under ``governor serve --workers 4`` (SPEC §13.6): real processes
throughout — the service, its four workers, a subprocess per agent call that reports its
cost — on SQLite and on PostgreSQL.

The pool's spend in each period never passes its limit by more than what the calls in
flight cost over their reservations; the goals it parks go on by themselves when the
(test-shortened) period renews; every goal's own ledger is what the same goal spends
alone; and ``/metrics`` shows the pool.
"""

from __future__ import annotations

import json
import time
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from governor.core.pools import (
    Figure,
    PoolReserved,
    PoolSettled,
    PoolState,
    evolve_pool,
    project_pool,
)
from governor.drive import goals
from governor.service.metrics import MetricsSnapshot, pool_gauges, render
from governor.store import open_store
from tests.e2e.cli import Project
from tests.e2e.test_pools import CALL, pooled_goal
from tests.service.fleet import metric, reaped, stop, wait_until_settled

pytest_plugins = ["tests.store.postgres_server"]  # store_url's PostgreSQL

LIMIT = 1.0
PERIOD_S = 6
GOALS = 30
"""Thirty goals of three $0.10 calls: $9 against $1 per 6 s (ten calls a period, fewer
than four workers make in 6 s even on a busy machine), so most of them park."""


def overshoot_bound(events: list) -> None:
    """At every event, each period's spend is within the limit plus what the calls settled
    so far in it cost over their reservations (a reservation keeps spent + reserved within
    the limit when it is made; only a call that costs more than it reserved goes past)."""
    state, asked, over = PoolState(), {}, 0.0
    for event in events:
        if event.type == "pool.renewed":
            over = 0.0
        evolve_pool(state, event)
        if isinstance(event, PoolReserved):
            asked[event.call] = event.figure.usd
            assert state.spent["usd"] + state.reserved("usd") <= LIMIT + over + 1e-9
        if isinstance(event, PoolSettled):
            over += max(event.figure.usd - asked[event.call], 0.0)
        assert state.spent["usd"] <= LIMIT + over + 1e-9, (event.seq, state.spent, over)


@pytest.mark.slow
def test_a_fleet_in_one_pool_never_overspends_and_resumes_by_itself(tmp_path: Path, store_url: str):
    project = Project(tmp_path)
    project.env["GOVERNOR_STORE"] = store_url
    set_pool = project.gov("pool", "set", "fleet", "--usd", str(LIMIT), "--per", f"{PERIOD_S}s")
    assert set_pool.returncode == 0, set_pool.stderr
    ids = [pooled_goal(project, f"g{i:02d}", ["fleet"]) for i in range(GOALS)]
    pooled_goal(project, "alone", [])
    # the log goes to a file: on a pipe nobody reads, thirty goals' lines fill it and stall
    serve = project.popen(
        "serve", "--workers", "4", "--poll-s", "0.05", "--lease-ttl", "10",
        "--metrics-file", "metrics.prom", "--metrics-interval", "0.5", "--log-file", "serve.log",
    )  # fmt: skip
    with reaped(serve):
        counts = wait_until_settled(store_url, timeout_s=120)
        time.sleep(1.0)  # one more refresh of the metrics file
        text = (tmp_path / "metrics.prom").read_text()
        assert stop(serve) == 0
    assert counts == {"succeeded": GOALS + 1}
    with closing(open_store(store_url)) as store:
        events = store.pool_events("fleet")
        state = project_pool(events)
        histories = {goal_id: list(store.load(goal_id)) for goal_id in ids}
        alone = goals.status(store, "alone")[1].ledger
        for goal_id in ids:  # pooling changes no goal's own ledger
            ledger = goals.status(store, goal_id)[1].ledger
            assert (ledger.replans.charged, ledger.attempts.charged) == (
                alone.replans.charged, alone.attempts.charged
            )  # fmt: skip
            assert ledger.cost_usd == pytest.approx(alone.cost_usd)
    overshoot_bound(events)
    assert state.in_flight == {}
    settled = [e for e in events if isinstance(e, PoolSettled)]
    assert len(settled) == 3 * GOALS
    assert sum(e.figure.usd for e in settled) == pytest.approx(3 * CALL * GOALS)
    assert len({e.goal_id for e in settled}) == GOALS  # 'alone' named no pool: never in it
    renewals = [e for e in events if e.type == "pool.renewed"]
    assert len(renewals) >= 8  # $9 at $1 a period
    parked = [g for g, h in histories.items() if any(e.type == "budget.requested" for e in h)]
    assert parked  # and each of them went on by itself after its pool renewed
    for goal_id in parked:
        kinds = [e.type for e in histories[goal_id]]
        assert kinds[-1] == "plan.completed"
        assert "budget.granted" not in kinds
    assert metric(text, "governor_pool_limit", pool="fleet", unit="usd") == LIMIT
    assert metric(text, "governor_pool_reserved", pool="fleet", unit="usd") == 0
    assert "governor_pool_spend{" in text
    assert metric(text, "governor_grants_total", by="policy") == 0


def test_the_metrics_show_each_pools_spend_limit_reservations_and_grants(tmp_path: Path):
    with closing(open_store(f"sqlite:///{tmp_path / 'g.db'}")) as store:
        project = Project(tmp_path)
        project.env["GOVERNOR_STORE"] = str(tmp_path / "g.db")
        assert project.gov("pool", "set", "a", "--usd", "2", "--attempts", "9").returncode == 0
        from governor.drive import pools

        now = datetime.now(UTC)
        pools.reserve(store, ["a"], "g1", "c1", Figure(usd=0.5, attempts=1), now=now)
        pools.reserve(store, ["a"], "g1", "c2", Figure(usd=0.5, attempts=1), now=now)
        pools.settle(store, ["a"], "g1", "c1", Figure(usd=0.75, attempts=1), now=now)
        pools.grant_pool(
            store, "a", Figure(usd=1), expires_s=None, at=now, actor="policy", reason="r"
        )
        gauges = pool_gauges(store.pool_states(), pools.zone, now)
    text = render(MetricsSnapshot({}, {}, 1, None, pools=gauges))
    assert metric(text, "governor_pool_spend", pool="a", unit="usd") == 0.75
    assert metric(text, "governor_pool_spend", pool="a", unit="attempts") == 1
    assert metric(text, "governor_pool_limit", pool="a", unit="usd") == 3.0
    assert metric(text, "governor_pool_reserved", pool="a", unit="usd") == 0.5
    assert metric(text, "governor_grants_total", by="policy") == 1
    assert metric(text, "governor_grants_total", by="person") == 0
    assert 'unit="run_time_s"' not in text  # a unit without a limit has no sample
    assert json.loads(project.gov("pool", "show", "a", "--json").stdout)["grants"] == {"policy": 1}
