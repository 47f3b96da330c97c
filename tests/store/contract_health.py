"""The store contract, part 5: upstream health (SPEC §11.10) — one record per upstream,
changed only when a transition changes it, the goals parked on it moved with it, and a
summary rescheduled without an event."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

from governor.core.policy import UpstreamBackoff
from governor.core.upstream import Seen, Upstream, claimed, observed, probed
from tests.store.streams import Backend, story, summary
from tests.story import T0

CODEX = Upstream("codex", "http://127.0.0.1:9/v1", "gpt-5-codex")
CLAUDE = Upstream("claude", "https://api.anthropic.com", "claude-sonnet-4-5")
BACKOFF = UpstreamBackoff(initial_s=30, factor=2, max_s=900)


def refuse(upstream: Upstream = CODEX, at_s: float = 0, status: int = 503):
    return lambda r: observed(
        r, upstream, Seen("refused", status), T0 + timedelta(seconds=at_s), BACKOFF
    )


def answer(upstream: Upstream = CODEX, at_s: float = 0):
    return lambda r: observed(r, upstream, Seen("answered"), T0 + timedelta(seconds=at_s), BACKOFF)


def parked(goal_id: str, upstream: str, *, not_before_s: float = 30, status: str = "waiting"):
    return replace(summary(goal_id, status, not_before_s=not_before_s), upstream=upstream)


class HealthCases(Backend):
    def put(self, store, *rows):
        for row in rows:
            store.append(row.goal_id, story(row.goal_id).events[:1], expected_seq=0, summary=row)

    def test_a_record_round_trips_every_field(self, store):
        assert store.upstreams() == []
        failing = store.change_upstream(CODEX.name, refuse(status=429))
        assert failing is not None
        mine = store.change_upstream(
            CODEX.name,
            lambda r: claimed(r, T0 + timedelta(seconds=30), "w1", T0 + timedelta(seconds=90)),
        )
        assert mine is not None
        [stored] = store.upstreams()
        assert stored == replace(mine, parked=0)
        assert (stored.last_status, stored.prober, stored.backoff) == (429, "w1", BACKOFF)
        after = store.change_upstream(
            CODEX.name, lambda r: probed(r, Seen("answered"), T0 + timedelta(seconds=31))
        )
        assert store.upstream_health([CODEX.name]) == {CODEX.name: after}
        assert after is not None
        assert (after.healthy, after.outage_started, after.recovered_by) == (True, T0, "probe")

    def test_whether_an_upstream_ever_answered_round_trips(self, store):
        """SPEC §12.7: a vendor never reached gets a record that says so; an answer sets it."""
        unreached = Seen("none", unreachable=True)
        never = store.change_upstream(
            CLAUDE.name, lambda r: observed(r, CLAUDE, unreached, T0, BACKOFF)
        )
        assert never is not None
        assert store.upstream_health([CLAUDE.name])[CLAUDE.name].answered is False
        store.change_upstream(CLAUDE.name, answer(CLAUDE, at_s=5))
        assert store.upstream_health([CLAUDE.name])[CLAUDE.name].answered is True

    def test_records_are_listed_by_name_and_looked_up_by_name(self, store):
        store.change_upstream(CODEX.name, answer())
        store.change_upstream(CLAUDE.name, refuse(CLAUDE))
        assert [r.upstream for r in store.upstreams()] == sorted([CODEX.name, CLAUDE.name])
        assert set(store.upstream_health([CLAUDE.name, "nobody"])) == {CLAUDE.name}
        assert store.upstream_health([]) == {}

    def test_a_transition_that_changes_nothing_writes_nothing(self, store, clock):
        first = store.change_upstream(CODEX.name, answer())
        assert first is not None
        assert store.change_upstream(CODEX.name, answer(at_s=60)) is None
        assert store.upstreams()[0].updated_at == first.updated_at

    def test_the_goals_parked_on_an_upstream_move_with_its_next_probe(self, store):
        store.change_upstream(CODEX.name, refuse())
        self.put(
            store,
            parked("a", CODEX.name),
            parked("b", CLAUDE.name),
            parked("c", CODEX.name, status="ready"),
        )
        store.change_upstream(
            CODEX.name,
            lambda r: claimed(r, T0 + timedelta(seconds=30), "w1", T0 + timedelta(seconds=90)),
        )
        rows = {s.goal_id: s for s in store.goals()}
        assert rows["a"].not_before == T0 + timedelta(seconds=90)  # the claim's deadline
        assert "parked: codex" in (rows["a"].reason or "")
        assert rows["b"].not_before == T0 + timedelta(seconds=30)  # another upstream
        assert rows["c"].not_before == T0 + timedelta(seconds=30)  # not waiting
        assert [s.goal_id for s in store.due(T0 + timedelta(seconds=60))] == ["c", "b"]
        assert {r.upstream: r.parked for r in store.upstreams()} == {CODEX.name: 1}

    def test_the_goals_parked_on_an_upstream_that_is_back_are_due_at_once(self, store, clock):
        store.change_upstream(CODEX.name, refuse())
        self.put(store, parked("a", CODEX.name, not_before_s=3600))
        clock.advance(45)
        store.change_upstream(CODEX.name, answer(at_s=45))
        [row] = store.goals()
        assert row.not_before == clock.now
        assert "is back" in (row.reason or "")
        assert [s.goal_id for s in store.due(clock.now)] == ["a"]

    def test_one_claim_per_step_among_racing_writers(self, store):
        store.change_upstream(CODEX.name, refuse())
        due, deadline = T0 + timedelta(seconds=30), T0 + timedelta(seconds=90)
        racers = 6
        won: list[str] = []
        barrier = threading.Barrier(racers)

        def race(index: int) -> None:
            barrier.wait()
            mine = store.change_upstream(
                CODEX.name, lambda r: claimed(r, due, f"w{index}", deadline)
            )
            if mine is not None:
                won.append(mine.prober or "")

        threads = [threading.Thread(target=race, args=(i,)) for i in range(racers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(won) == 1
        assert store.upstreams()[0].prober == won[0]

    def test_a_summary_is_rescheduled_without_an_event_while_the_goal_has_not_moved_on(self, store):
        self.put(store, parked("a", CODEX.name, not_before_s=30))
        later = replace(parked("a", CODEX.name, not_before_s=300))
        assert store.reschedule(later)
        assert store.goals()[0].not_before == T0 + timedelta(seconds=300)
        assert store.last_seq("a") == 1
        assert not store.reschedule(replace(later, seq=7))
        assert store.goals()[0].seq == 1
