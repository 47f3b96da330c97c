"""The store contract, part 8: pools (SPEC §13.6) — each pool's append-only stream and
its folded state, written in one transaction; a reservation over several pools lands in
all of them or in none."""

from __future__ import annotations

from datetime import timedelta

import pytest

from governor.core.pools import Figure, PoolLimits, project_pool
from governor.drive import pools
from governor.errors import (
    CommandRefusedError,
    ConcurrencyConflictError,
    InputError,
    LeaseError,
    NotFoundError,
    StoreError,
)
from tests.store.streams import Backend, resumed, story
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

    # --- a goal's append that carries pool events (issue 33: one transaction per call) ---

    def test_a_reservation_riding_an_append_lands_with_it(self, store):
        pools.set_pool(store, "a", DAY, at=T0, actor="ops", reason=None)
        pools.set_pool(store, "b", DAY, at=T0, actor="ops", reason=None)
        store.append("g1", story().events[:1], expected_seq=0)
        ask = Figure(usd=0.1, attempts=1)
        write = pools.reservation(["b", "a"], "g1", "c1", ask, now=T0)
        assert store.append("g1", [resumed("g1", 2)], expected_seq=1, pools=write) == 2
        for name in ("a", "b"):
            assert [e.type for e in store.pool_events(name)] == [
                "pool.set",
                "pool.renewed",
                "pool.reserved",
            ]
        spent = Figure(usd=0.25, attempts=1, run_time_s=3)
        write = pools.settlement(["a", "b"], "g1", "c1", spent, now=T0)
        store.append("g1", [resumed("g1", 3)], expected_seq=2, pools=write)
        state = store.pool_state("a")
        assert state is not None
        assert state.in_flight == {}
        assert state.spent == {"usd": 0.25, "attempts": 1.0, "run_time_s": 3.0}
        assert store.pool_state("a") == project_pool(store.pool_events("a"))
        assert store.last_seq("g1") == 3

    def test_a_pool_without_room_refuses_the_whole_append(self, store):
        pools.set_pool(store, "a", DAY, at=T0, actor="ops", reason=None)
        pools.set_pool(
            store, "b", DAY.model_copy(update={"usd": 0.05}), at=T0, actor="ops", reason=None
        )
        store.append("g1", story().events[:1], expected_seq=0)
        write = pools.reservation(["a", "b"], "g1", "c1", Figure(usd=0.1, attempts=1), now=T0)
        with pytest.raises(pools.ReservationRefused) as refused:
            store.append("g1", [resumed("g1", 2)], expected_seq=1, pools=write)
        assert (refused.value.refusal.pool, refused.value.refusal.unit) == ("b", "usd")
        assert store.last_seq("g1") == 1  # the start is not recorded either
        assert [e.type for e in store.pool_events("a")] == ["pool.set"]
        assert [e.type for e in store.pool_events("b")] == ["pool.set"]

    def test_an_append_refused_by_its_checks_reserves_nothing(self, store):
        pools.set_pool(store, "a", DAY, at=T0, actor="ops", reason=None)
        store.append("g1", story().events[:1], expected_seq=0)
        lease = store.acquire_lease("g1", "r1", ttl_s=60)
        write = pools.reservation(["a"], "g1", "c1", Figure(usd=0.1, attempts=1), now=T0)
        with pytest.raises(ConcurrencyConflictError):
            store.append("g1", [resumed("g1", 3)], expected_seq=2, lease=lease, pools=write)
        store.release_lease(lease)
        store.acquire_lease("g1", "r2", ttl_s=60)  # a takeover fences r1 out
        with pytest.raises(LeaseError):
            store.append("g1", [resumed("g1", 2)], expected_seq=1, lease=lease, pools=write)
        assert store.last_seq("g1") == 1
        assert [e.type for e in store.pool_events("a")] == ["pool.set"]


class PooledAppendFailureCases(Backend):
    """A backend whose transaction can fail after its first write (a real database: a
    trigger refuses a row) rolls back a goal's append and the pool events it carried
    together (issue 33). The backend's class provides ``refuse_rows``."""

    def refuse_rows(self, store, table: str, event_type: str) -> None:
        """Make the database refuse every row of ``table`` whose type is ``event_type``."""
        raise NotImplementedError

    def _start(self, store):
        pools.set_pool(store, "a", DAY, at=T0, actor="ops", reason=None)
        store.append("g1", story().events[:1], expected_seq=0)
        return pools.reservation(["a"], "g1", "c1", Figure(usd=0.1, attempts=1), now=T0)

    def test_a_pool_event_the_database_refuses_takes_the_goals_events_with_it(self, store):
        write = self._start(store)
        self.refuse_rows(store, "pool_events", "pool.reserved")
        with pytest.raises(StoreError, match="refused by the test"):
            store.append("g1", [resumed("g1", 2)], expected_seq=1, pools=write)
        assert store.last_seq("g1") == 1
        assert [e.type for e in store.pool_events("a")] == ["pool.set"]
        assert list(store.check()) == []

    def test_a_goal_event_the_database_refuses_takes_the_reservation_with_it(self, store):
        write = self._start(store)
        self.refuse_rows(store, "events", "goal.resumed")
        with pytest.raises(StoreError, match="refused by the test"):
            store.append("g1", [resumed("g1", 2)], expected_seq=1, pools=write)
        assert store.last_seq("g1") == 1
        assert [e.type for e in store.pool_events("a")] == ["pool.set"]
        state = store.pool_state("a")
        assert state is not None
        assert state.in_flight == {}
        assert list(store.check()) == []
