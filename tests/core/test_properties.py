"""Properties of the core, checked by hypothesis over histories a random driver records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governor.core import record, record_work
from governor.core.decision import Decision, WorkDecision
from governor.core.fold import fold, project
from governor.core.history import validate_events
from governor.core.rules.decide import decide
from governor.core.wire.codec import decode, encode
from tests.core.driver import drive
from tests.story import Story

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

policies = st.fixed_dictionaries(
    {},
    optional={
        "max_replans": st.integers(0, 4),
        "max_uncharged_replans": st.integers(0, 4),
        "max_attempts": st.integers(1, 3),
        "max_uncharged_attempts": st.integers(0, 3),
        "max_continuations": st.integers(0, 2),
        "max_total_attempts": st.integers(1, 12),
        "max_parallel_work": st.integers(1, 3),
        "auto_apply": st.booleans(),
        "accept_passing": st.booleans(),
        "retry_blocked": st.booleans(),
        "max_plan_records": st.integers(1, 12),
        "max_same_failures": st.none() | st.integers(1, 4),
    },
)


def chooser(data: st.DataObject):  # type: ignore[no-untyped-def]
    def choose(options: Sequence[Any]) -> Any:
        return data.draw(st.sampled_from(list(options)))

    return choose


def recorded(data: st.DataObject, policy: dict[str, Any], **kwargs: Any) -> Story:
    story = Story(**policy)
    drive(story, chooser(data), operator=True, **kwargs)
    return story


@SETTINGS
@given(data=st.data(), policy=policies)
def test_driven_histories_validate_and_project_the_same_twice(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    story = recorded(data, policy)
    assert validate_events(story.events) == story.view
    assert project(story.events) == project(story.events)


@SETTINGS
@given(data=st.data(), policy=policies)
def test_folding_a_suffix_onto_a_prefix_equals_projecting_the_whole(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    story = recorded(data, policy)
    whole = project(story.events)
    for k in range(len(story.events) + 1):
        assert fold(project(story.events[:k]), story.events[k:]) == whole


@SETTINGS
@given(data=st.data(), policy=policies)
def test_every_event_round_trips_through_the_codec(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    for event in recorded(data, policy).events:
        assert decode(encode(event)) == event


@SETTINGS
@given(data=st.data(), policy=policies)
def test_whenever_the_decision_is_plan_a_plan_request_is_accepted(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    def check(story: Story, d: Decision) -> None:
        if d.next_action == "plan":
            record.request_plan(
                story.view, plan_id="probe", trigger=d.trigger or "initial", at=story.now
            )
        if d.next_action == "run":
            for work_id in d.work_ids:
                record_work.start_attempt(story.view, work_id=work_id, run_id="probe", at=story.now)

    drive(Story(**policy), chooser(data), operator=True, on_decision=check)


@SETTINGS
@given(data=st.data(), policy=policies)
def test_planner_failures_alone_never_plan_without_end(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    story = Story(**policy)
    last = drive(story, chooser(data), allow_success=False, max_steps=500)
    p = story.policy
    assert last.is_stopped
    assert (
        story.view.plans_used
        <= p.max_replans * (p.max_uncharged_replans + 1) + p.max_uncharged_replans
    )


@SETTINGS
@given(data=st.data(), policy=policies)
def test_worker_failures_alone_never_attempt_an_item_without_end(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    story = Story(**{**policy, "max_replans": 1})
    story.plan("a")
    last = drive(story, chooser(data), allow_success=False, max_steps=500)
    item = story.view.work["p1-a"]
    assert last.is_stopped
    bound = item.max_attempts * (item.max_uncharged_attempts + 1) + item.max_uncharged_attempts
    assert item.attempts_used <= bound


@SETTINGS
@given(data=st.data(), policy=policies)
def test_the_ledger_never_charges_past_a_limit_without_a_raise(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    story = recorded(data, {**policy}, max_steps=200)
    view = story.view
    d = decide(view, story.now)
    raised = any(e.type == "budget.raised" for e in story.events)
    if not raised:
        assert d.ledger.replans.charged <= view.policy.max_replans
        assert d.ledger.attempts.charged <= view.policy.max_total_attempts
    for w in d.ledger.work.values():
        assert w.charged_attempts <= w.limit
        assert w.attempts_used == w.charged_attempts + (w.attempts_used - w.charged_attempts)


_NO_BLOCKER = frozenset({"ready", "running", "succeeded", "cancelled", "budget_exhausted"})


@SETTINGS
@given(data=st.data(), policy=policies)
def test_every_decision_carries_blocked_on_not_before_and_exhausted_as_its_status_says(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    """SPEC §6: ``not_before`` is null unless the status is ``waiting`` (then ``blocked_on``
    is ``upstream``); ``blocked_on`` is ``operator`` for ``awaiting_review`` and null for
    ready, running, succeeded, cancelled and budget_exhausted; ``exhausted`` names a ledger
    exactly when the status is ``budget_exhausted``; ``remaining = max(0, limit - charged)``
    and the ledger lists every work item ever created. For the goal and each item."""

    def check(story: Story, d: Decision) -> None:
        shown: list[Decision | WorkDecision] = [d, *d.items]
        for x in shown:
            cooling = x.status == "waiting" and x.next_action == "wait"
            assert (x.not_before is not None) == cooling, x
            if cooling:
                assert x.blocked_on == "upstream", x
            if x.status in _NO_BLOCKER:
                assert x.blocked_on is None, x
            if x.status == "awaiting_review":
                assert x.blocked_on == "operator", x
            assert (x.exhausted is not None) == (x.status == "budget_exhausted"), x
        replans, attempts = d.ledger.replans, d.ledger.attempts
        assert replans.charged == replans.used - replans.uncharged
        assert replans.remaining == max(0, replans.limit - replans.charged)
        assert attempts.remaining == max(0, attempts.limit - attempts.charged)
        for w in d.ledger.work.values():
            assert w.remaining == max(0, w.limit - w.charged_attempts)
        assert list(d.ledger.work) == list(story.view.work)

    drive(Story(**policy), chooser(data), operator=True, on_decision=check)


@SETTINGS
@given(data=st.data(), policy=policies)
def test_a_decision_without_its_ledger_decides_the_same(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    def check(story: Story, d: Decision) -> None:
        lean = decide(story.view, story.now, with_ledger=False)
        fields = (
            "status",
            "next_action",
            "reason",
            "rule",
            "blocked_on",
            "not_before",
            "exhausted",
            "trigger",
            "plan_id",
            "work_ids",
            "items",
        )
        assert [getattr(lean, f) for f in fields] == [getattr(d, f) for f in fields]

    drive(Story(**policy), chooser(data), operator=True, on_decision=check)


@SETTINGS
@given(data=st.data(), policy=policies)
def test_a_copied_view_is_equal_and_independent(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    story = recorded(data, policy)
    snapshot = story.view.copy()
    assert snapshot == story.view
    before = project(story.events)
    fold(snapshot, story.events[1:2])  # folding into the copy must not touch the original
    assert story.view == before
