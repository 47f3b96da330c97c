"""The event store contract: one suite every backend subclasses (SPEC §8).

A backend's test module defines ``class TestXStore(StoreContract)`` and overrides
``make_store`` (a fixture returning a factory, so a test can open a second store) and
``damage`` (rewrite or delete one stored row behind the store's back); see
``tests/store/streams.py``. Everything else is asserted once, for all of them: here
streams, optimistic concurrency, summaries and scheduling; leases and fencing in
``contract_leases.py``; export and import in ``contract_transfer.py``; damaged rows in
``contract_damage.py``; the service registry in ``contract_registry.py``; upstream health
in ``contract_health.py``; ``check`` (and, where rows are stored columns, damaged rows
besides events) in ``contract_rows.py``; listings for people (attention, search) in
``contract_listing.py``.
"""

from __future__ import annotations

import math
import threading
from datetime import timedelta
from typing import Any

import pytest

from governor.core.events import BudgetRaised, Event, GoalCreated, GoalResumed
from governor.core.fold import project
from governor.core.summary import Usage
from governor.errors import ConcurrencyConflictError, InvalidEventError, NotFoundError
from governor.store import summarize
from tests.store.contract_damage import DamageCases
from tests.store.contract_health import HealthCases
from tests.store.contract_leases import LeaseCases
from tests.store.contract_listing import ListingCases
from tests.store.contract_pools import PoolCases
from tests.store.contract_registry import RegistryCases
from tests.store.contract_rows import CheckCases
from tests.store.contract_transfer import TransferCases
from tests.store.streams import Backend, resumed, story, summary
from tests.story import T0


class StoreContract(
    LeaseCases,
    TransferCases,
    DamageCases,
    RegistryCases,
    HealthCases,
    PoolCases,
    CheckCases,
    ListingCases,
    Backend,
):
    """The behaviour every ``EventStore`` backend must show."""

    # --- append and load --------------------------------------------------------------

    def test_append_returns_the_new_last_seq_and_load_gives_the_events_in_order(self, store):
        events = story().events
        assert store.append("g1", events, expected_seq=0) == len(events)
        assert list(store.load("g1")) == events
        assert store.last_seq("g1") == len(events)

    def test_appends_in_batches_continue_the_stream(self, store):
        events = story().events
        store.append("g1", events[:3], expected_seq=0)
        store.append("g1", events[3:4], expected_seq=3)
        assert store.append("g1", events[4:], expected_seq=4) == len(events)
        assert list(store.load("g1")) == events

    def test_load_after_seq_gives_only_later_events(self, store):
        events = self.seed(store)
        assert list(store.load("g1", after_seq=4)) == events[4:]
        assert list(store.load("g1", after_seq=len(events))) == []

    def test_load_pages_through_a_long_stream(self, store, monkeypatch):
        monkeypatch.setattr(type(store), "page_size", 3)
        events = self.seed(store)
        assert list(store.load("g1")) == events
        assert list(store.load("g1", after_seq=2)) == events[2:]

    def test_load_stops_at_the_last_seq_of_the_call(self, store):
        events = self.seed(store)
        loading = store.load("g1")
        store.append("g1", [resumed("g1", len(events) + 1)], expected_seq=len(events))
        assert list(loading) == events

    def test_an_unknown_goal_has_last_seq_zero_and_load_raises_not_found(self, store):
        assert store.last_seq("nope") == 0
        with pytest.raises(NotFoundError, match="nope"):
            store.load("nope")

    def test_goals_are_kept_apart(self, store):
        one, two = self.seed(store, "g1"), self.seed(store, "g2")
        assert list(store.load("g1")) == one
        assert list(store.load("g2")) == two

    # --- optimistic concurrency and batch checks --------------------------------------

    def test_an_expected_seq_conflict_writes_nothing(self, store):
        events = self.seed(store)
        before = store.goals()
        late = [resumed("g1", 5), resumed("g1", 6)]
        with pytest.raises(ConcurrencyConflictError) as caught:
            store.append("g1", late, expected_seq=4)
        assert (caught.value.goal_id, caught.value.expected_seq, caught.value.actual_seq) == (
            "g1",
            4,
            len(events),
        )
        assert caught.value.retryable
        assert list(store.load("g1")) == events
        assert store.goals() == before

    def test_a_new_goal_needs_expected_seq_zero(self, store):
        events = story().events
        with pytest.raises(ConcurrencyConflictError):
            store.append("g1", [resumed("g1", 3)], expected_seq=2)
        assert store.last_seq("g1") == 0
        store.append("g1", events[:1], expected_seq=0)
        assert store.last_seq("g1") == 1

    @pytest.mark.parametrize(
        ("case", "pattern"),
        [
            ("gap", "has seq 11, expected 10"),
            ("other goal", "belongs to goal g2"),
            ("created again", "exactly once"),
            ("empty", "nothing to append"),
        ],
        ids=[
            "a gap in the numbering",
            "an event of another goal",
            "goal.created in the middle",
            "an empty batch",
        ],
    )
    def test_a_malformed_batch_is_refused_and_writes_nothing(self, store, case, pattern):
        n = len(self.seed(store))
        batch = {
            "gap": [resumed("g1", n + 2)],
            "other goal": [resumed("g2", n + 1)],
            "created again": [story().events[0].model_copy(update={"seq": n + 1})],
            "empty": [],
        }[case]
        with pytest.raises(ValueError, match=pattern):
            store.append("g1", batch, expected_seq=n)
        assert store.last_seq("g1") == n

    @pytest.mark.parametrize(
        "case",
        [
            "infinite raise",
            "policy factor 1e300",
            "milestones above replans",
            "unencodable reason",
            "a good event first",
        ],
        ids=[
            "a raise to infinity (written as null, unreadable)",
            "a goal whose back-off factor is 1e300",
            "a goal whose milestones exceed its replans (it would read back lowered)",
            "a reason with a lone surrogate (cannot be encoded)",
            "a good event followed by a bad one",
        ],
    )
    def test_an_event_that_would_not_read_back_is_refused_and_nothing_is_written(self, store, case):
        # model_construct skips validation, as a bug (or older code) would: the store is
        # the last line, and checks what it writes with the code that reads it.
        new_goal = case in ("policy factor 1e300", "milestones above replans")
        n = len(self.seed(store)) if not new_goal else 0
        head: dict[str, Any] = {"goal_id": "g1", "at": T0 + timedelta(hours=1), "schema_version": 1}
        batch: list[Event]
        if new_goal:
            created = story().events[0]
            assert isinstance(created, GoalCreated)
            if case == "policy factor 1e300":
                backoff = created.policy.upstream_backoff.model_copy(update={"factor": 1e300})
                policy = created.policy.model_copy(update={"upstream_backoff": backoff})
            else:
                replans = created.policy.max_replans
                policy = created.policy.model_copy(update={"max_milestones": replans + 1})
            batch = [created.model_copy(update={"policy": policy})]
        else:
            bad: Event = {
                "infinite raise": BudgetRaised.model_construct(
                    **head,
                    seq=n + 1,
                    actor="a",
                    reason="more",
                    ledger="runtime",
                    to=math.inf,
                    work_id=None,
                    type="budget.raised",
                ),
                "unencodable reason": GoalResumed.model_construct(
                    **head, seq=n + 1, actor="a", reason="x\udfff", type="goal.resumed"
                ),
                "a good event first": GoalResumed.model_construct(
                    **head, seq=n + 2, actor="a", reason="x\udfff", type="goal.resumed"
                ),
            }[case]  # type: ignore[assignment]  # the dict of two model_construct types
            batch = [resumed("g1", n + 1), bad] if case == "a good event first" else [bad]
        with pytest.raises(InvalidEventError) as caught:
            store.append("g1", batch, expected_seq=n)
        assert caught.value.seq == batch[-1].seq
        assert "nothing was written" in str(caught.value)
        assert store.last_seq("g1") == n
        if n:
            assert len(list(store.load("g1"))) == n

    @pytest.mark.parametrize(
        ("reason", "kind"),
        [
            ("the key is sk-proj-abcdefghijklmnop0123", "an sk-… API key"),
            ("token ghp_abcdefghijklmnopqrstuvwxyz0123", "a GitHub token"),
            ("id AKIAABCDEFGHIJKLMNOP", "an AWS access key id"),
        ],
        ids=["an API key", "a GitHub token", "an AWS key id"],
    )
    def test_an_event_holding_a_key_is_refused_and_nothing_is_written(self, store, reason, kind):
        events = self.seed(store)
        n = len(events)
        with pytest.raises(InvalidEventError, match=f"holds what looks like {kind}") as caught:
            store.append("g1", [resumed("g1", n + 1), resumed("g1", n + 2, reason)], expected_seq=n)
        assert caught.value.seq == n + 2
        assert store.last_seq("g1") == n

    @pytest.mark.parametrize(
        "reason",
        [
            "check the Authorization: header and Bearer authentication",
            "ask for the key in the task-abcdefghijklmnopqrstuvwxyz",
            "the key is [REDACTED]",
        ],
        ids=["header prose", "a word ending in sk-", "a redacted key"],
    )
    def test_prose_that_only_talks_about_keys_is_stored(self, store, reason):
        n = len(self.seed(store))
        assert store.append("g1", [resumed("g1", n + 1, reason)], expected_seq=n) == n + 1

    def test_a_new_stream_must_start_with_goal_created(self, store):
        with pytest.raises(ValueError, match=r"starts with goal\.created"):
            store.append("g1", [resumed("g1", 1)], expected_seq=0)
        assert store.last_seq("g1") == 0

    def test_threads_sharing_one_store_append_each_seq_exactly_once(self, store):
        self.seed(store)
        written: list[str] = []

        def writer(name: str) -> None:
            for i in range(15):
                while True:
                    seq = store.last_seq("g1")
                    try:
                        store.append(
                            "g1", [resumed("g1", seq + 1, f"{name}-{i}")], expected_seq=seq
                        )
                        break
                    except ConcurrencyConflictError:
                        continue
                written.append(f"{name}-{i}")

        threads = [threading.Thread(target=writer, args=(f"t{n}",)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        events = list(store.load("g1"))
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        reasons = [str(e.reason) for e in events if isinstance(e, GoalResumed)]
        assert sorted(reasons) == sorted(written)
        assert len(reasons) == 60

    # --- summaries ---------------------------------------------------------------------

    def test_the_summary_is_written_with_the_append(self, store):
        events = story().events
        given = summarize(project(events), T0 + timedelta(days=1))
        store.append("g1", events, expected_seq=0, summary=given)
        assert store.goals() == [given]

    def test_without_a_summary_the_store_derives_it_at_its_clock(self, store, clock):
        events = story().events
        store.append("g1", events[:4], expected_seq=0)
        store.append("g1", events[4:], expected_seq=4)
        assert store.goals() == [summarize(project(events), clock())]

    def test_a_summary_of_another_seq_is_refused(self, store):
        events = story().events
        wrong = summarize(project(events[:-1]), T0)
        with pytest.raises(ValueError, match="summary"):
            store.append("g1", events, expected_seq=0, summary=wrong)
        assert store.goals() == []

    def test_goals_are_listed_by_id_and_filtered_by_status(self, store):
        for goal_id, status in (
            ("b", "ready"),
            ("a", "blocked"),
            ("c", "succeeded"),
            ("d", "ready"),
        ):
            store.append(
                goal_id, story(goal_id).events[:1], expected_seq=0, summary=summary(goal_id, status)
            )
        assert [g.goal_id for g in store.goals()] == ["a", "b", "c", "d"]
        assert [g.goal_id for g in store.goals(statuses={"ready"})] == ["b", "d"]
        assert [g.goal_id for g in store.goals(statuses=["blocked", "succeeded"])] == ["a", "c"]
        assert store.goals(statuses=[]) == []
        assert [g.goal_id for g in store.goals(statuses="ready")] == ["b", "d"]

    def test_the_summary_carries_the_rule_the_reason_and_the_goal_wide_budgets(self, store):
        s = story()
        s.plan_fails("upstream", retry_after_s=5)  # uncharged
        s.plan_fails()  # charged
        s.start("p1-b")
        s.finish("p1-b", "failed", failure_class="upstream")  # uncharged
        store.append("g1", s.events, expected_seq=0)
        (found,) = store.goals()
        decision = s.decision(found.updated_at)
        assert (found.rule, found.reason) == (decision.rule, decision.reason)
        assert found.replans == Usage(used=3, charged=2, limit=5)
        assert found.attempts == Usage(used=2, charged=1, limit=100)

    def test_goals_come_in_pages_of_the_id_order_with_or_without_a_status(self, store):
        for goal_id in "edcba":
            status = "ready" if goal_id in "ace" else "blocked"
            store.append(
                goal_id, story(goal_id).events[:1], expected_seq=0, summary=summary(goal_id, status)
            )
        ids = lambda rows: "".join(g.goal_id for g in rows)  # noqa: E731
        assert ids(store.goals(limit=2)) == "ab"
        assert ids(store.goals(offset=2, limit=2)) == "cd"
        assert ids(store.goals(offset=4, limit=2)) == "e"
        assert ids(store.goals(offset=9)) == ""
        assert ids(store.goals(offset=3)) == "de"
        assert ids(store.goals(statuses={"ready"}, offset=1, limit=1)) == "c"
        assert ids(store.goals(statuses={"ready", "blocked"}, offset=1, limit=3)) == "bcd"
        assert store.goals(limit=0) == []
        with pytest.raises(ValueError, match="offset and limit"):
            store.goals(offset=-1)

    def test_due_lists_ready_running_and_waiting_goals_whose_time_has_come(self, store):
        rows = [
            summary("ready-late", "ready", updated_s=50),
            summary("ready-early", "ready", updated_s=10),
            summary("running", "running", updated_s=20),
            summary("waiting-past", "waiting", not_before_s=30, updated_s=5),
            summary("waiting-future", "waiting", not_before_s=500, updated_s=5),
            summary("blocked", "blocked"),
            summary("succeeded", "succeeded"),
            summary("awaiting", "awaiting_review"),
        ]
        for row in rows:
            store.append(row.goal_id, story(row.goal_id).events[:1], expected_seq=0, summary=row)
        now = T0 + timedelta(seconds=100)
        assert [g.goal_id for g in store.due(now)] == [
            "ready-early",
            "running",
            "waiting-past",
            "ready-late",
        ]
        assert [g.goal_id for g in store.due(now, limit=2)] == ["ready-early", "running"]
        later = [g.goal_id for g in store.due(T0 + timedelta(seconds=500))]
        assert later[-1] == "waiting-future"
        assert store.due(now)[0] == rows[1]
