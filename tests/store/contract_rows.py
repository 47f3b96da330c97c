"""The store contract, part 7: ``check`` finds every difference and mends what is derived
(issue 24, item 9), on every backend (``CheckCases``); and, where rows are stored columns
(SQLite, PostgreSQL: ``DamagedRowCases``), a damaged row besides events is a
``DamagedRowError`` naming its table, key and column wherever it is read (item 8).

The damage is written behind the store's back with the backend's own SQL (``edit``)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from governor.errors import DamagedRowError
from governor.registry import AgentRecord, ServiceError
from governor.store.checks import REBUILD
from tests.store.contract_health import CODEX, refuse
from tests.store.contract_registry import beat
from tests.store.streams import Backend, export_bytes, resumed, story
from tests.story import T0

GOALS = ("g1", "g2", "g3")


class CheckCases(Backend):
    def fill(self, store):
        """Three goals, a released lease, an upstream record, a worker, an error, an agent."""
        for goal_id in GOALS:
            store.append(goal_id, story(goal_id).events, expected_seq=0)
        store.release_lease(store.acquire_lease("g1", "runner", ttl_s=60))
        store.change_upstream(CODEX.name, refuse())
        store.heartbeat(beat("w1"))
        store.add_service_error(ServiceError(T0, "w1", "g1", "lost the database"))
        store.add_agent(AgentRecord("g1", "elsewhere", "boot", 4242, 99, "p1", "runner", T0))
        return {s.goal_id: s for s in store.goals()}

    # --- the check ------------------------------------------------------------------------

    def test_a_sound_store_checks_clean(self, store):
        self.fill(store)
        assert list(store.check()) == []
        assert list(store.check(repair=True)) == []

    def test_a_deleted_summary_is_found_and_rebuilt_from_the_events(self, store):
        before = self.fill(store)
        self.forget_summary(store, "g2")
        assert [s.goal_id for s in store.goals()] == ["g1", "g3"]
        [found] = store.check()
        assert (found.table, found.key, found.fix, found.repaired) == (
            "goals",
            "'g2'",
            REBUILD,
            False,
        )
        assert found.detail == f"missing, though the goal has {len(story('g2').events)} events"
        [mended] = store.check(repair=True)
        assert mended.repaired
        after = {s.goal_id: s for s in store.goals()}
        assert after["g2"].status == before["g2"].status
        assert after["g2"].seq == before["g2"].seq
        assert list(store.check()) == []

    def test_damaged_events_are_found_and_never_changed(self, store):
        self.fill(store)
        self.damage(store, "g3", 4, "{", checksum=True)
        before = [export_bytes(store, g) for g in ("g1", "g2")]
        for repair in (False, True):
            [found] = store.check(repair=repair)
            assert (found.table, found.key, found.fix) == ("events", "'g3'", None)
            assert found.detail.startswith("event 4: not valid JSON")
        assert [export_bytes(store, g) for g in ("g1", "g2")] == before

    def test_a_check_beside_a_writer_finds_nothing(self, store):
        """Appends made while a goal is walked are not damage: the walk is read again (the
        store is shared by the two threads, as a service's worker and a check would share
        a database)."""
        self.fill(store)
        n = len(story("g1").events)
        done = threading.Event()

        def append() -> None:
            for seq in range(n + 1, n + 120):
                store.append("g1", [resumed("g1", seq)], expected_seq=seq - 1)
            done.set()

        thread = threading.Thread(target=append)
        thread.start()
        found = []
        while not done.is_set():
            found += store.check()
        thread.join()
        found += store.check()
        assert found == [], found

    def forget_summary(self, store, goal_id):
        """Delete the goal's summary row behind the store's back."""
        raise NotImplementedError


class DamagedRowCases(CheckCases):
    time_suffix = ""
    far_time = "NULL"
    """A time no ``datetime`` holds, as the backend's SQL writes it."""

    def edit(self, store, sql, *params):
        """Run SQL (``?`` marks) on the store's database behind its back."""
        raise NotImplementedError

    def forget_summary(self, store, goal_id):
        self.edit(store, "DELETE FROM goals WHERE goal_id = ?", goal_id)

    def test_an_edited_status_is_damage_when_unknown_and_a_difference_when_known(self, store):
        before = self.fill(store)
        self.edit(store, "UPDATE goals SET status = 'teleported' WHERE goal_id = 'g1'")
        with pytest.raises(
            DamagedRowError, match="goals row 'g1' is damaged: status holds 'teleported'"
        ):
            store.goals()
        self.edit(store, "UPDATE goals SET status = 'succeeded' WHERE goal_id = 'g1'")
        assert {s.goal_id: s.status for s in store.goals()}["g1"] == "succeeded"
        [found] = store.check(repair=True)
        assert found.detail == f"status is 'succeeded', its events say '{before['g1'].status}'"
        assert {s.goal_id: s for s in store.goals()}["g1"].status == before["g1"].status

    @pytest.mark.parametrize(
        ("table", "column", "value", "read"),
        [
            ("goals", "replans_used", "-1", lambda s: s.goals()),
            ("goals", "blocked_on", "'nowhere'", lambda s: s.goals()),
            ("goals", "chain", "-1", lambda s: list(s.load("g1"))),
            ("leases", "token", "0", lambda s: s.acquire_lease("g1", "x", ttl_s=5)),
            ("leases", "token", "0", lambda s: s.current_lease("g1")),
            ("upstreams", "probes", "-1", lambda s: s.upstreams()),
            ("upstreams", "backoff_factor", "0.5", lambda s: s.upstream_health([CODEX.name])),
            ("upstreams", "recovered_by", "'magic'", lambda s: s.upstreams()),
            ("upstreams", "next_probe_at", "FAR", lambda s: s.upstreams()),
            ("upstreams", "probing_until", "FAR", lambda s: s.upstreams()),
            ("workers", "pid", "0", lambda s: s.workers()),
            ("workers", "heartbeat_at", "FAR", lambda s: s.workers()),
            ("service_errors", "at", "FAR", lambda s: s.service_errors()),
            ("agents", "pid", "1", lambda s: s.agents("g1")),
        ],
        ids=lambda v: v if isinstance(v, str) else "",
    )
    def test_a_damaged_row_is_named_wherever_it_is_read_and_a_repair_mends_it(
        self, store, table, column, value, read
    ):
        self.fill(store)
        column = self.column(column)
        where = " WHERE goal_id = 'g1'" if table in ("goals", "leases", "agents") else ""
        self.edit(store, f"UPDATE {table} SET {column} = {self.literal(value)}{where}")
        with pytest.raises(DamagedRowError) as caught:
            read(store)
        assert (caught.value.table, caught.value.column) == (table, column)
        assert f"the store's {table} row " in str(caught.value)
        assert "`governor store check --repair`" in str(caught.value)
        found = list(store.check(repair=True))
        assert [(f.table, f.repaired) for f in found] == [(table, True)]
        assert column in found[0].detail
        read(store)  # mended
        assert list(store.check()) == []

    def test_a_repaired_lease_is_released_under_a_token_above_every_token_granted(self, store):
        self.fill(store)
        self.edit(store, "UPDATE leases SET token = -5")
        list(store.check(repair=True))
        assert store.current_lease("g1") is None
        taken = store.acquire_lease("g1", "next", ttl_s=5)
        epoch = datetime(1970, 1, 1, tzinfo=UTC)
        assert taken.token > (T0 - epoch) // timedelta(microseconds=1)

    def column(self, name: str) -> str:
        """The backend's name of a column (SQLite's time columns end in ``_us``)."""
        times = ("next_probe_at", "probing_until", "heartbeat_at", "at")
        return name + self.time_suffix if name in times else name

    def literal(self, value: str) -> str:
        """``FAR``: a time no ``datetime`` holds, as the backend's SQL writes it."""
        return self.far_time if value == "FAR" else value
