"""Budget stops that ask (SPEC §13.6 parking on a spent pool, §13.7 grants): what an open
request does to the decision, how grants lift and expiries lower a goal's own limit, and
the incremental Decider deciding such histories as ``decide`` does from scratch."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from governor.core.policy import Grants
from governor.core.record_budget import (
    auto_grant_rule,
    decline_budget,
    expire_grants,
    grant_budget,
    request_budget,
)
from governor.errors import CommandRefusedError
from tests.core.test_decider import (
    EVERY_TIME,
    assert_incremental_is_fresh,
    assert_structs_fold_alike,
)
from tests.story import Story


def pool_request(story: Story, renews_in_s: float | None = 60.0) -> Story:
    renews = story.now + timedelta(seconds=renews_in_s) if renews_in_s is not None else None
    return story.add(
        request_budget(
            story.view, budget="pool:team", usd=0.1, attempts=None, renews_at=renews,
            reason="pool 'team' is spent this day", at=story.now,
        )
    )  # fmt: skip


def test_a_spent_pool_that_renews_parks_the_goal_until_then_and_no_longer():
    story = Story()
    story.plan("a")
    pool_request(story)
    parked = story.decision()
    assert (parked.status, parked.next_action, parked.blocked_on, parked.rule) == (
        "waiting", "wait", "budget", "budget.2"
    )  # fmt: skip
    assert parked.not_before == story.now + timedelta(seconds=60)
    assert "governor grant g --usd 0.1" in parked.reason
    renewed = story.decision(story.now + timedelta(seconds=60))
    assert (renewed.status, renewed.next_action) == ("ready", "run")


def test_a_pool_that_never_renews_waits_for_a_person_and_a_grant_moves_it():
    story = Story()
    story.plan("a")
    pool_request(story, renews_in_s=None)
    asked = story.decision()
    assert (asked.status, asked.blocked_on, asked.rule) == ("blocked", "operator", "budget.3")
    story.tick().add(decline_budget(story.view, reason="not now", at=story.now, actor="ana"))
    assert story.decision().blocked_on == "operator"
    story.tick().add(
        grant_budget(
            story.view,
            usd=None,
            attempts=None,
            expires_s=None,
            reason="ok",
            at=story.now,
            actor="ana",
        )
    )
    assert (story.decision().status, story.decision().next_action) == ("ready", "run")
    with pytest.raises(CommandRefusedError, match="not waiting for more budget"):
        grant_budget(story.view, usd=1.0, attempts=None, expires_s=None, reason="x",
                     at=story.now, actor="ana")  # fmt: skip


def test_a_running_call_finishes_while_its_pool_is_spent():
    story = Story()
    story.plan("a")
    story.start("p1-a")
    pool_request(story)
    assert story.decision().status == "running"


def test_a_grant_on_the_goals_own_cost_lifts_it_until_it_expires():
    story = Story(max_cost_usd=0.15, grants={"auto_usd": 0.2})
    story.plan("a", "b")
    story.attempt("p1-a", outcome="succeeded", cost_usd=0.2)
    spent = story.decision()
    assert (spent.status, spent.exhausted) == ("budget_exhausted", "cost")
    story.add(request_budget(story.view, budget="cost", usd=0.1, attempts=None, renews_at=None,
                             reason="the goal's own cost budget is spent", at=story.now))  # fmt: skip
    assert (story.decision().status, story.decision().blocked_on) == ("blocked", "operator")
    story.tick().add(
        grant_budget(
            story.view,
            usd=0.1,
            attempts=None,
            expires_s=30,
            reason="small",
            at=story.now,
            actor="policy",
            rule="policy grants.auto_usd",
        )
    )
    assert story.policy.max_cost_usd == pytest.approx(0.25)
    assert story.decision().status != "budget_exhausted"
    assert expire_grants(story.view, at=story.now) == []
    story.tick(30).add(expire_grants(story.view, at=story.now))
    assert story.policy.max_cost_usd == pytest.approx(0.15)
    assert story.view.open_grants == ()
    assert story.decision().status == "budget_exhausted"  # what it bought stays counted


@pytest.mark.parametrize(
    ("grants", "usd", "attempts", "rule"),
    [
        (None, 0.1, None, None),
        (Grants(auto_usd=0.5), 0.1, None, "grants.auto_usd"),
        (Grants(auto_usd=0.5), 0.6, None, None),
        (Grants(auto_attempts=2), None, 1, "grants.auto_attempts"),
        (Grants(auto_attempts=2), None, 3, None),
        (Grants(auto_usd=1), None, None, None),
    ],
    ids=["no rule: a person", "under auto_usd", "over auto_usd", "under auto_attempts",
         "over auto_attempts", "no amount asked"],
)  # fmt: skip
def test_governor_grants_by_itself_only_at_or_under_the_rule(grants, usd, attempts, rule):
    assert auto_grant_rule(grants, usd, attempts) == rule


def test_histories_with_budget_events_decide_incrementally_as_afresh_and_fold_from_structs():
    story = Story(max_cost_usd=0.15, grants={"auto_usd": 0.2})
    story.plan("a", "b")
    pool_request(story)
    story.tick(61)
    story.attempt("p1-a", outcome="succeeded", cost_usd=0.2)
    story.add(request_budget(story.view, budget="cost", usd=0.1, attempts=None, renews_at=None,
                             reason="spent", at=story.now))  # fmt: skip
    story.tick().add(decline_budget(story.view, reason="no", at=story.now, actor="ana"))
    story.tick().add(
        grant_budget(
            story.view, usd=0.1, attempts=None, expires_s=5, reason="ok", at=story.now, actor="ana"
        )
    )
    story.tick(5).add(expire_grants(story.view, at=story.now))
    types = [e.type for e in story.events]
    assert {"budget.requested", "budget.declined", "budget.granted", "budget.expired"} <= set(types)
    assert_incremental_is_fresh(story.events, EVERY_TIME)
    assert_structs_fold_alike(story.events)


def test_the_validator_refuses_an_answer_to_no_request_and_an_expiry_of_no_grant():
    from governor.core.budget_events import BudgetExpired, BudgetGranted
    from governor.core.history import validate_events
    from governor.errors import HistoryError

    story = Story()
    head: dict[str, Any] = {"goal_id": "g", "seq": 2, "at": story.now, "reason": "r"}
    with pytest.raises(HistoryError, match="answers no open request on 'pool:team'"):
        validate_events([*story.events, BudgetGranted(**head, budget="pool:team", usd=1.0)])
    with pytest.raises(HistoryError, match="no open grant on 'cost'"):
        validate_events([*story.events, BudgetExpired(**head, budget="cost", usd=1.0)])
    pool_request(story)
    story.add(grant_budget(story.view, usd=None, attempts=None, expires_s=None, reason="ok",
                           at=story.now, actor="ana"))  # fmt: skip
    validate_events(story.events)
