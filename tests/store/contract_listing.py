"""The store contract, part 7: listings for people — by attention, filtered, searched, counted.

``goals(order="attention")`` puts the goals that wait on a person first (blocked on
anything, a review), then the ones whose budget is spent, then the active ones, then the
ended ones; within
each, the most recent change first (then goal id). ``count_goals`` counts what ``goals``
lists under the same conditions.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.store.streams import Backend, story, summary

FLEET = (
    # goal id, title, status, blocked_on, updated (s after T0)
    ("g-done-old", "Ship the docs", "succeeded", None, 10),
    ("g-done-new", "Ship the API", "succeeded", None, 90),
    ("g-cancelled", "Old idea", "cancelled", None, 95),
    ("g-run", "Build the UI", "running", None, 50),
    ("g-wait", "Wait for OpenAI", "waiting", "upstream", 70),
    ("g-ready", "Start the DB", "ready", None, 20),
    ("g-env", "Needs codex", "blocked", "environment", 40),
    ("g-spent", "Out of budget", "budget_exhausted", None, 60),
    ("g-ask-old", "Which database?", "blocked", "decision", 30),
    ("g-ask-new", "Which UI kit?", "blocked", "decision", 80),
    ("g-review", "Review 100%_done", "awaiting_review", "operator", 55),
)
COMBINATIONS = [
    (status, blocked_on)
    for status in ("ready", "running", "waiting", "blocked", "awaiting_review", "budget_exhausted",
                   "succeeded", "cancelled")
    for blocked_on in (None, "environment", "upstream", "decision", "work", "operator")
]  # fmt: skip
"""Every status with every blocked_on, for the migrations that rank the rows they find."""
BY_ATTENTION = [
    "g-ask-new", "g-review", "g-env", "g-ask-old",  # a person: most recent first
    "g-spent",  # a budget spent
    "g-wait", "g-run", "g-ready",  # moving by themselves
    "g-cancelled", "g-done-new", "g-done-old",  # ended
]  # fmt: skip


class ListingCases(Backend):
    def fill_fleet(self, store):
        for goal_id, title, status, blocked_on, updated_s in FLEET:
            row = replace(
                summary(goal_id, status, updated_s=updated_s), title=title, blocked_on=blocked_on
            )
            store.append(goal_id, story(goal_id).events[:1], expected_seq=0, summary=row)

    def test_goals_by_attention_put_people_first_then_stopped_active_and_ended(self, store):
        self.fill_fleet(store)
        listed = store.goals(order="attention")
        assert [g.goal_id for g in listed] == BY_ATTENTION
        assert [g.attention for g in listed] == [0, 0, 0, 0, 1, 2, 2, 2, 3, 3, 3]
        assert [g.goal_id for g in store.goals()] == sorted(BY_ATTENTION)  # by id, as before

    def test_pages_of_the_attention_order_follow_each_other(self, store):
        self.fill_fleet(store)
        pages = [store.goals(order="attention", offset=k, limit=4) for k in (0, 4, 8)]
        assert [g.goal_id for page in pages for g in page] == BY_ATTENTION
        assert store.goals(order="attention", offset=11, limit=4) == []

    def test_only_the_goals_that_need_a_person_and_their_count(self, store):
        self.fill_fleet(store)
        people = store.goals(needs_person=True, order="attention")
        assert [g.goal_id for g in people] == BY_ATTENTION[:4]
        assert store.count_goals(needs_person=True) == 4
        assert [g.goal_id for g in store.goals(needs_person=True)] == sorted(BY_ATTENTION[:4])

    def test_one_status_in_the_attention_order(self, store):
        self.fill_fleet(store)
        blocked = store.goals(statuses=["blocked"], order="attention")
        assert [g.goal_id for g in blocked] == ["g-ask-new", "g-env", "g-ask-old"]
        assert store.count_goals(statuses="blocked") == 3
        both = store.goals(statuses=["succeeded", "running"], order="attention")
        assert [g.goal_id for g in both] == ["g-run", "g-done-new", "g-done-old"]
        assert store.count_goals(statuses=[]) == 0

    @pytest.mark.parametrize(
        ("text", "found"),
        [
            ("ship", ["g-done-new", "g-done-old"]),  # in titles, whatever the case
            ("G-ASK", ["g-ask-new", "g-ask-old"]),  # in ids
            ("  database?  ", ["g-ask-old"]),  # trimmed
            ("100%_", ["g-review"]),  # % and _ are letters, not patterns
            ("%", ["g-review"]),  # as a LIKE pattern, either would match every goal
            ("_", ["g-review"]),
            ("nothing like it", []),
            ("", BY_ATTENTION),  # no text: no search
        ],
        ids=lambda v: repr(v) if isinstance(v, str) else "",
    )
    def test_a_search_finds_the_text_in_ids_and_titles(self, store, text, found):
        self.fill_fleet(store)
        listed = store.goals(search=text, order="attention")
        assert [g.goal_id for g in listed] == found
        assert store.count_goals(search=text) == len(found)

    def test_every_condition_given_must_hold(self, store):
        self.fill_fleet(store)
        kept = store.goals(needs_person=True, statuses=["blocked"], search="UI", order="attention")
        assert [g.goal_id for g in kept] == ["g-ask-new"]
        assert store.count_goals(needs_person=True, statuses=["blocked"], search="UI") == 1
        assert store.count_goals() == len(FLEET)

    def test_a_search_ignores_case_of_ascii_letters_only(self, store):
        self.fill_fleet(store)
        row = replace(summary("g-accent", "ready"), title="Élan vital")
        store.append("g-accent", story("g-accent").events[:1], expected_seq=0, summary=row)
        assert [g.goal_id for g in store.goals(search="Élan")] == ["g-accent"]
        assert [g.goal_id for g in store.goals(search="élan")] == []  # as SQLite's lower()
        assert [g.goal_id for g in store.goals(search="ÉLAN")] == ["g-accent"]

    def test_an_update_moves_a_goal_to_its_new_place(self, store):
        self.fill_fleet(store)
        ended = replace(summary("g-ready", "ready", updated_s=20), status="cancelled")
        assert store.reschedule(ended)
        listed = [g.goal_id for g in store.goals(order="attention")]
        assert listed[-4:] == ["g-cancelled", "g-done-new", "g-ready", "g-done-old"]
        assert "g-ready" not in [g.goal_id for g in store.goals(statuses="ready")]

    def test_an_unknown_order_is_refused(self, store):
        with pytest.raises(ValueError, match="order must be"):
            store.goals(order="title")
