"""The store contract, part 4: the service registry — goal counts, the soonest wake-up,
worker heartbeat rows and the bounded list of recent errors."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from governor.errors import LeaseError
from governor.registry import ERRORS_KEPT, AgentRecord, ServiceError, WorkerBeat
from tests.store.streams import Backend, story, summary
from tests.story import T0


def beat(worker_id: str, *, goal_id: str | None = None, beat_s: float = 0) -> WorkerBeat:
    return WorkerBeat(
        worker_id=worker_id,
        host="host-1",
        pid=4242,
        started_at=T0,
        heartbeat_at=T0 + timedelta(seconds=beat_s),
        goal_id=goal_id,
        step_started_at=None if goal_id is None else T0 + timedelta(seconds=beat_s),
    )


class RegistryCases(Backend):
    def put(self, store, *rows):
        for row in rows:
            store.append(row.goal_id, story(row.goal_id).events[:1], expected_seq=0, summary=row)

    def test_goal_counts_count_each_status_that_occurs(self, store):
        assert store.goal_counts() == {}
        self.put(
            store,
            summary("a", "ready"),
            summary("b", "ready"),
            summary("c", "waiting", not_before_s=40),
            summary("d", "succeeded"),
        )
        assert store.goal_counts() == {"ready": 2, "waiting": 1, "succeeded": 1}

    def test_the_soonest_wakeup_is_the_earliest_not_before_of_a_waiting_goal(self, store):
        assert store.soonest_wakeup() is None
        self.put(store, summary("a", "ready", updated_s=1), summary("b", "blocked"))
        assert store.soonest_wakeup() is None
        self.put(
            store,
            summary("c", "waiting", not_before_s=90, updated_s=5),
            summary("d", "waiting", not_before_s=30, updated_s=50),
        )
        assert store.soonest_wakeup() == T0 + timedelta(seconds=30)

    def test_a_heartbeat_inserts_then_replaces_the_worker_row(self, store):
        assert store.workers() == []
        store.heartbeat(beat("w2"))
        store.heartbeat(beat("w1"))
        store.heartbeat(beat("w2", goal_id="g7", beat_s=5))
        assert store.workers() == [beat("w1"), beat("w2", goal_id="g7", beat_s=5)]

    def test_a_removed_worker_is_gone_and_removing_twice_is_harmless(self, store):
        store.heartbeat(beat("w1"))
        store.remove_worker("w1")
        store.remove_worker("w1")
        assert store.workers() == []

    def test_recent_errors_come_newest_first_and_only_the_last_ones_are_kept(self, store):
        assert store.service_errors() == []
        for i in range(ERRORS_KEPT + 5):
            store.add_service_error(
                ServiceError(T0 + timedelta(seconds=i), "w1", f"g{i}" if i % 2 else None, f"e{i}")
            )
        newest = store.service_errors(limit=3)
        assert [e.error for e in newest] == [
            f"e{ERRORS_KEPT + 4}",
            f"e{ERRORS_KEPT + 3}",
            f"e{ERRORS_KEPT + 2}",
        ]
        last = ERRORS_KEPT + 4
        assert newest[0] == ServiceError(T0 + timedelta(seconds=last), "w1", None, f"e{last}")
        assert newest[1].goal_id == f"g{last - 1}"
        kept = store.service_errors(limit=1000)
        assert len(kept) == ERRORS_KEPT
        assert kept[-1].error == "e5"
        assert store.service_errors(limit=0) == []

    # --- agent processes (SPEC §11.11) ----------------------------------------------------

    def test_agents_are_recorded_per_goal_oldest_first_and_removed(self, store):
        one, two = agent("g1", 101, seconds=0), agent("g1", 102, seconds=5)
        other = agent("g2", 103, seconds=1)
        for row in (two, other, one):
            store.add_agent(row)
        assert store.agents("g1") == [one, two]
        assert store.agents("g2") == [other]
        store.remove_agent(one)
        store.remove_agent(one)  # removing twice is harmless
        assert store.agents("g1") == [two]
        assert store.agents("g3") == []

    def test_an_agent_is_named_by_pid_and_start_time(self, store):
        first, reused = agent("g1", 101, ticks=7), agent("g1", 101, ticks=9)
        store.add_agent(first)
        store.add_agent(reused)
        store.remove_agent(first)
        assert store.agents("g1") == [reused]

    def test_recording_an_agent_is_fenced_by_the_lease(self, store, clock):
        stale = store.acquire_lease("g1", "runner-a", ttl_s=30)
        store.add_agent(agent("g1", 101), lease=stale)
        clock.advance(31)
        current = store.acquire_lease("g1", "runner-b", ttl_s=30)
        with pytest.raises(LeaseError, match="the agent was not recorded"):
            store.add_agent(agent("g1", 102), lease=stale)
        store.add_agent(agent("g1", 103), lease=current)
        assert [a.pid for a in store.agents("g1")] == [101, 103]

    def test_an_agents_last_line_is_rewritten_in_place_and_kept_with_its_row(self, store):
        lease = store.acquire_lease("g1", "runner-a", ttl_s=30)
        quiet = agent("g1", 101)
        store.add_agent(quiet, lease=lease)
        assert store.agents("g1")[0].last_line is None
        for line in ("warming up", "FAILED tests/x.py::t — “ß” `x`"):
            store.add_agent(replace(quiet, last_line=line), lease=lease)
            assert store.agents("g1") == [replace(quiet, last_line=line)]
        store.remove_agent(quiet)
        assert store.agents("g1") == []


def agent(goal_id: str, pid: int, *, ticks: int = 1, seconds: float = 0) -> AgentRecord:
    return AgentRecord(
        goal_id, "host-1", "boot-1", pid, ticks, "r-1", "runner-a", T0 + timedelta(seconds=seconds)
    )
