"""The store contract, part 8: pools (SPEC §13.6) — each pool's append-only stream and
its folded state, written in one transaction; a reservation over several pools lands in
all of them or in none."""

from __future__ import annotations

from datetime import timedelta

import pytest

from governor.core.pools import Figure, PoolLimits, project_pool
from governor.drive import pools
from governor.errors import CommandRefusedError, InputError, NotFoundError
from tests.store.streams import Backend
from tests.story import T0

DAY = PoolLimits(usd=1.0, attempts=10, period="day", tz="Europe/Berlin")


class PoolCases(Backend):
    def test_a_pool_set_then_changed_keeps_both_events_and_its_latest_limits(self, store):
        pools.set_pool(store, "team-a", DAY, at=T0, actor="operator:ana", reason="new team")
        changed = DAY.model_copy(update={"usd": 2.0})
        state = pools.set_pool(
            store, "team-a", changed, at=T0 + timedelta(seconds=1), actor="ops", reason=None
        )
        assert state.limits == changed
        events = store.pool_events("team-a")
        assert [(e.type, e.seq) for e in events] == [("pool.set", 1), ("pool.set", 2)]
        assert events[0].reason == "new team"
        assert store.pool_state("team-a") == project_pool(events)
        assert [s.name for s in store.pool_states()] == ["team-a"]
        assert store.pool_state("nobody") is None

    def test_a_reservation_lands_in_every_pool_of_the_goal_or_in_none(self, store):
        pools.set_pool(store, "a", DAY, at=T0, actor="ops", reason=None)
        pools.set_pool(
            store, "b", DAY.model_copy(update={"usd": 0.15}), at=T0, actor="ops", reason=None
        )
        ask = Figure(usd=0.1, attempts=1)
        assert pools.reserve(store, ["a", "b"], "g1", "c1", ask, now=T0) is None
        refused = pools.reserve(store, ["a", "b"], "g1", "c2", ask, now=T0)
        assert refused is not None
        assert (refused.pool, refused.unit) == ("b", "usd")
        a = store.pool_state("a")
        assert a is not None
        assert list(a.in_flight) == ["c1"]
        assert [e.type for e in store.pool_events("a")] == [
            "pool.set",
            "pool.renewed",
            "pool.reserved",
        ]

    def test_settling_moves_the_reservation_into_the_spend_and_releasing_drops_it(self, store):
        pools.set_pool(store, "a", DAY, at=T0, actor="ops", reason=None)
        pools.reserve(store, ["a"], "g1", "c1", Figure(usd=0.1, attempts=1), now=T0)
        pools.reserve(store, ["a"], "g1", "c2", Figure(usd=0.1, attempts=1), now=T0)
        pools.settle(store, ["a"], "g1", "c1", Figure(usd=0.3, attempts=1, run_time_s=4), now=T0)
        pools.settle(store, ["a"], "g1", "c2", None, now=T0)
        state = store.pool_state("a")
        assert state is not None
        assert state.in_flight == {}
        assert state.spent == {"usd": 0.3, "attempts": 1.0, "run_time_s": 4.0}

    def test_a_new_period_renews_the_spend_at_the_first_reservation_after_it(self, store):
        pools.set_pool(store, "a", DAY, at=T0, actor="ops", reason=None)
        pools.reserve(store, ["a"], "g1", "c1", Figure(usd=1.0, attempts=1), now=T0)
        pools.settle(store, ["a"], "g1", "c1", Figure(usd=1.0, attempts=1), now=T0)
        assert pools.reserve(store, ["a"], "g1", "c2", Figure(usd=0.1), now=T0) is not None
        tomorrow = T0 + timedelta(days=1)
        assert pools.reserve(store, ["a"], "g1", "c3", Figure(usd=0.1), now=tomorrow) is None
        state = store.pool_state("a")
        assert state is not None
        assert state.spent["usd"] == 0.0
        assert "c3" in state.in_flight

    def test_bad_input_writes_nothing(self, store):
        with pytest.raises(InputError, match="unknown time zone 'Mars/Olympus'"):
            pools.set_pool(
                store,
                "a",
                DAY.model_copy(update={"tz": "Mars/Olympus"}),
                at=T0,
                actor="o",
                reason=None,
            )
        for fields in (
            {"usd": -1},
            {"usd": float("nan")},
            {"usd": float("inf")},
            {"usd": 1e12},
            {},
        ):
            with pytest.raises(InputError):
                pools.limits_of(fields)
        with pytest.raises(NotFoundError, match="no pool 'ghost'"):
            pools.delete_pool(store, "ghost", [], at=T0, actor="o")
        pools.set_pool(store, "a", DAY, at=T0, actor="ops", reason=None)
        with pytest.raises(CommandRefusedError, match="named by 1 goal"):
            pools.delete_pool(store, "a", ["g1"], at=T0, actor="o")
        assert [e.type for e in store.pool_events("a")] == ["pool.set"]
        assert store.pool_events("ghost") == []

    def test_a_deleted_pool_is_gone_for_new_goals_and_its_history_stays(self, store):
        pools.set_pool(store, "a", DAY, at=T0, actor="ops", reason=None)
        pools.delete_pool(store, "a", [], at=T0, actor="ops")
        with pytest.raises(NotFoundError):
            pools.check_pools_exist(store, ["a"])
        assert [e.type for e in store.pool_events("a")] == ["pool.set", "pool.deleted"]
