"""A runner's calls against its goal's pools (issue 33): each call's reservation rides in
the append that records its start and its settlement in the one that records its finish —
one transaction each, on a real SQLite file, with the scripted harness's real agent
subprocesses. A database that refuses either half records neither."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from governor.core.pools import PoolLimits, PoolState
from governor.drive import goals, pools
from governor.drive.act import follow
from governor.drive.goalfile import goal_from_mapping
from governor.drive.runner import RunnerSettings
from governor.errors import StoreError
from governor.store.sqlite import SqliteEventStore

GOAL = {
    "id": "g",
    "title": "Pooled calls",
    "objective": "o",
    "acceptance": ["a"],
    "planner": "p",
    "worker": "p",
    "profiles": {"p": {"harness": "scripted", "reserve_usd": 0.01}},
}


class CountingStore(SqliteEventStore):
    """The SQLite store, counting the pool transactions made apart from a goal's append."""

    pool_transactions = 0

    def change_pools(
        self,
        names: Sequence[str],
        change: Callable[[Mapping[str, PoolState]], Mapping[str, Sequence[dict[str, Any]]]],
    ) -> dict[str, PoolState]:
        self.pool_transactions += 1
        return super().change_pools(names, change)


def pooled(tmp_path: Path, names: list[str]) -> CountingStore:
    tmp_path.mkdir(exist_ok=True)
    store = CountingStore(tmp_path / "g.db")
    at = datetime.now(UTC)
    for name in names:
        pools.set_pool(store, name, PoolLimits(usd=100.0), at=at, actor="t", reason=None)
    spec = {**GOAL, "pools": names} if names else GOAL
    goals.create_from(store, goal_from_mapping(spec, base=Path.cwd(), where="goal", at=at))
    store.pool_transactions = 0
    return store


def drive(store: SqliteEventStore, tmp_path: Path) -> str:
    settings = RunnerSettings(
        workdir=tmp_path, env=dict(os.environ), state_dir=tmp_path / "state", max_wait_s=0
    )
    runner = goals.runner(store, "g", settings)
    runner.acquire()
    try:
        decision, _ = follow(runner, runner.decide, max_steps=50)
    finally:
        runner.release()
    return decision.status


def test_every_call_reserves_and_settles_in_its_own_appends(tmp_path: Path) -> None:
    store = pooled(tmp_path, ["team", "night"])
    assert drive(store, tmp_path) == "succeeded"
    assert store.pool_transactions == 0  # no pool write of its own: all rode in appends
    history = list(store.load("g"))
    calls = sum(e.type in ("plan.requested", "attempt.started") for e in history)
    for name in ("team", "night"):
        events = store.pool_events(name)
        reserved = [e for e in events if e.type == "pool.reserved"]
        settled = [e for e in events if e.type == "pool.settled"]
        assert len(reserved) == len(settled) == calls
        state = store.pool_state(name)
        assert state is not None
        assert state.in_flight == {}
        assert state.spent["attempts"] == calls
    store.close()


def test_the_goals_own_events_are_those_of_the_same_goal_without_pools(tmp_path: Path) -> None:
    with_pools = pooled(tmp_path / "a", ["team"])
    without = pooled(tmp_path / "b", [])
    assert drive(with_pools, tmp_path / "a") == drive(without, tmp_path / "b") == "succeeded"
    assert [e.type for e in with_pools.load("g")] == [e.type for e in without.load("g")]
    with_pools.close()
    without.close()


def refuse(store: SqliteEventStore, table: str, event_type: str) -> None:
    with closing(sqlite3.connect(store.path)) as raw, raw:
        raw.execute(
            f"CREATE TRIGGER refuse BEFORE INSERT ON {table} WHEN NEW.type = '{event_type}' "
            "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
        )


@pytest.mark.parametrize(
    ("table", "event_type"),
    [("events", "plan.requested"), ("pool_events", "pool.reserved")],
    ids=["the start refused", "the reservation refused"],
)
def test_a_start_or_reservation_the_database_refuses_records_neither(
    tmp_path: Path, table: str, event_type: str
) -> None:
    store = pooled(tmp_path, ["team"])
    before = store.last_seq("g")
    refuse(store, table, event_type)
    with pytest.raises(StoreError, match="refused by the test"):
        drive(store, tmp_path)
    assert store.last_seq("g") == before
    assert [e.type for e in store.pool_events("team")] == ["pool.set"]
    store.close()


def test_a_finish_the_database_refuses_is_not_settled_with_it(tmp_path: Path) -> None:
    """The planner's finish cannot be recorded: its settlement is not either; the call
    stays in flight on the goal (lost, continued by the next run) and its reservation is
    released by a transaction of its own, as a call that never ran."""
    store = pooled(tmp_path, ["team"])
    refuse(store, "events", "plan.proposed")
    with pytest.raises(StoreError, match="refused by the test"):
        drive(store, tmp_path)
    assert [e.type for e in store.load("g")][-1] == "plan.requested"
    assert [e.type for e in store.pool_events("team")] == [
        "pool.set",
        "pool.reserved",
        "pool.released",
    ]
    assert store.pool_transactions == 1  # the release alone
    store.close()
