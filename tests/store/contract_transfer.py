"""The store contract, part 3: export and import of histories (SPEC §3)."""

from __future__ import annotations

import pytest

from governor.errors import CommandRefusedError, HistoryError, NotFoundError
from governor.store import import_history
from tests.store.streams import GOLDEN, VALID_GOLDEN, Backend, export_bytes, resumed


class TransferCases(Backend):
    # --- export and import ---------------------------------------------------------------

    def test_export_import_export_is_byte_for_byte_the_same(self, store, make_store, tmp_path):
        self.seed(store)
        first = export_bytes(store, "g1")
        path = tmp_path / "g1.jsonl"
        path.write_bytes(first)
        other = make_store()
        result = import_history(other, path)
        assert (result.goal_id, result.events) == ("g1", 9)
        assert export_bytes(other, "g1") == first
        assert list(other.load("g1")) == list(store.load("g1"))
        other.close()

    def test_every_golden_history_round_trips(self, make_store, tmp_path):
        one, two = make_store(), make_store()
        for path in VALID_GOLDEN:
            result = import_history(one, path)
            first = export_bytes(one, result.goal_id)
            copy = tmp_path / path.name
            copy.write_bytes(first)
            import_history(two, copy)
            assert export_bytes(two, result.goal_id) == first, path.name
        assert len(one.goals()) == len(VALID_GOLDEN)
        one.close()
        two.close()

    def test_import_writes_the_summary_decided_at_the_last_event(self, store):
        path = GOLDEN / "planner_upstream_bound.jsonl"
        result = import_history(store, path)
        assert store.goals() == [result.summary]
        assert (result.summary.status, result.summary.blocked_on) == ("blocked", "upstream")

    def test_import_upcasts_legacy_lines_with_notes(self, store):
        result = import_history(store, GOLDEN / "legacy_attempt_less.jsonl")
        assert result.notes
        assert "read as attempt 2" in " ".join(result.notes)
        starts = [e.attempt for e in store.load(result.goal_id) if e.type == "attempt.started"]
        assert starts == [1, 2]

    def test_import_of_an_existing_goal_is_refused_and_writes_nothing(self, store, tmp_path):
        events = self.seed(store)
        path = tmp_path / "g1.jsonl"
        path.write_bytes(export_bytes(store, "g1"))
        store.append("g1", [resumed("g1", len(events) + 1)], expected_seq=len(events))
        with pytest.raises(CommandRefusedError, match="already in the store"):
            import_history(store, path)
        assert store.last_seq("g1") == len(events) + 1

    @pytest.mark.parametrize(
        "name", ["corrupt_torn_line", "corrupt_seq_gap", "corrupt_unknown_field"]
    )
    def test_an_invalid_history_is_refused_and_writes_nothing(self, store, name):
        with pytest.raises(HistoryError):
            import_history(store, GOLDEN / f"{name}.jsonl")
        assert store.goals() == []

    def test_export_of_an_unknown_goal_raises_not_found(self, store):
        with pytest.raises(NotFoundError):
            export_bytes(store, "nope")
