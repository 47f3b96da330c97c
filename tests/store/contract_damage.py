"""The store contract, part 4: damaged rows are reported naming goal and seq."""

from __future__ import annotations

import pytest

from governor.errors import StoreError
from governor.store import CorruptEventError
from tests.store.streams import Backend, resumed, resumed_json


class DamageCases(Backend):
    # --- damaged rows --------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("body", "detail"),
        [
            ('{"schema_version": 1, "goal_id": "g1", "se', "not valid JSON"),
            ("", "not valid JSON"),
            ("[1, 2]", "must be a JSON object"),
            (resumed_json(color="red"), "unknown field 'color'"),
            (resumed_json(reason=None), "a reason is required"),
            (resumed_json(attempt_type="plan.teleported"), "unknown event type"),
            (resumed_json(seq=5), "holds event 5 of goal g1"),
            (resumed_json(goal_id="g9"), "holds event 4 of goal g9"),
            (None, "the row is missing"),
        ],
        ids=[
            "a torn body",
            "an empty body",
            "a list",
            "an unknown field",
            "a broken rule",
            "an unknown type",
            "another seq",
            "another goal",
            "a deleted row",
        ],
    )
    @pytest.mark.parametrize("checksum", [True, False], ids=["checksum updated", "checksum stale"])
    def test_a_damaged_row_is_reported_naming_goal_and_seq(self, store, body, detail, checksum):
        events = self.seed(store)
        self.damage(store, "g1", 4, body, checksum=checksum)
        loading = store.load("g1")
        assert [next(loading) for _ in range(3)] == events[:3]
        if not checksum and body is not None and detail.startswith("holds"):
            detail = "the body does not match its checksum"
        with pytest.raises(
            CorruptEventError, match=f"goal g1: event 4 in the store is corrupt: .*{detail}"
        ) as caught:
            next(loading)
        assert isinstance(caught.value, StoreError)
        assert (caught.value.goal_id, caught.value.seq) == ("g1", 4)

    def test_a_valid_body_with_a_stale_checksum_is_reported(self, store):
        self.seed(store)
        self.damage(store, "g1", 4, resumed_json(), checksum=False)
        with pytest.raises(CorruptEventError, match=r"event 4 .* does not match its checksum"):
            list(store.load("g1"))

    def test_a_damaged_row_blocks_a_derived_summary_and_writes_nothing(self, store):
        events = self.seed(store)
        self.damage(store, "g1", 2, "{", checksum=True)
        with pytest.raises(CorruptEventError):
            store.append("g1", [resumed("g1", len(events) + 1)], expected_seq=len(events))
        assert store.last_seq("g1") == len(events)

    # --- a stream never rewinds (issue 9, item 9) -------------------------------------------

    @pytest.mark.parametrize("deleted", [1, 3], ids=["the last row", "the last three rows"])
    def test_deleting_the_last_rows_is_reported_not_taken_for_a_shorter_stream(
        self, store, deleted
    ):
        events = self.seed(store)
        n = len(events)
        for seq in range(n, n - deleted, -1):
            self.damage(store, "g1", seq, None, checksum=True)
        first_missing = n - deleted + 1
        detail = f"the stream ends at event {n - deleted}, but the store recorded {n}"
        for read in (
            lambda: list(store.load("g1")),
            lambda: list(store.load("g1", after_seq=2)),
            lambda: store.last_seq("g1"),
        ):
            with pytest.raises(CorruptEventError, match=detail) as caught:
                read()
            assert (caught.value.goal_id, caught.value.seq) == ("g1", first_missing)
        for expected in (n, n - deleted):  # neither the old end nor the new one takes a write
            with pytest.raises(CorruptEventError, match="were deleted"):
                store.append("g1", [resumed("g1", expected + 1)], expected_seq=expected)

    def test_deleting_every_row_of_a_goal_is_reported_and_its_id_stays_taken(self, store):
        events = self.seed(store)
        for seq in range(len(events), 0, -1):
            self.damage(store, "g1", seq, None, checksum=True)
        with pytest.raises(CorruptEventError, match="the stream ends at event 0"):
            store.last_seq("g1")
        with pytest.raises(CorruptEventError, match="the stream ends at event 0"):
            store.append("g1", events[:1], expected_seq=0)

    def test_a_last_row_replaced_by_another_valid_one_breaks_the_chain(self, store):
        events = self.seed(store)
        n = len(events)
        self.damage(store, "g1", n, resumed_json(seq=n, reason="another"), checksum=True)
        loading = store.load("g1")
        assert [next(loading) for _ in range(n - 1)] == events[:-1]
        with pytest.raises(CorruptEventError, match="does not match the checksum chain") as caught:
            next(loading)
        assert caught.value.seq == n
        # an incremental read cannot check the chain; it still reads what is there
        assert [e.seq for e in store.load("g1", after_seq=n - 1)] == [n]

    def test_the_chain_goes_on_across_appends_and_pages(self, store, monkeypatch):
        monkeypatch.setattr(type(store), "page_size", 2)
        events = self.seed(store)
        n = len(events)
        more = [resumed("g1", n + 1), resumed("g1", n + 2)]
        store.append("g1", more[:1], expected_seq=n)
        store.append("g1", more[1:], expected_seq=n + 1)
        assert list(store.load("g1")) == [*events, *more]
