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
