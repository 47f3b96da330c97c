"""Usage windows in the core (SPEC §13.2): an account's record, the park on it, and the
stop when its window reopens too far away (``max_quota_wait_s``, rule fleet.6)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from governor.core import record, record_park, record_work
from governor.core.accounts import account_name, reopened, window_shut
from governor.core.history import validate_events
from governor.core.observation import Window
from governor.core.route import Park, Resume, Wait, route
from governor.core.rules.decide import decide
from governor.core.upstream import UpstreamHealth
from governor.core.wire.codec import decode, encode
from tests.story import ABSENT, T0, Story


def at(seconds: float):
    return T0 + timedelta(seconds=seconds)


def shut(until_s: float, since_s: float = 0) -> UpstreamHealth:
    record_ = window_shut(None, "acct-a", at(until_s), at(since_s), status=429)
    assert record_ is not None
    return record_


# --- the record ---------------------------------------------------------------------------


def test_a_spent_window_fails_the_account_until_its_reset_and_is_never_probed() -> None:
    r = shut(600)
    assert (r.upstream, r.harness, r.endpoint) == ("account acct-a", "account", "acct-a")
    assert r.upstream == account_name("acct-a")
    assert r.is_account
    assert not r.healthy
    assert (r.failing_since, r.next_probe_at, r.last_status) == (at(0), at(600), 429)
    assert r.probe_due_at == at(600)
    assert not r.probe_claimable(at(10_000))  # no probe, before the reset or after


def test_a_later_reset_pushes_the_window_back_and_an_earlier_one_changes_nothing() -> None:
    r = shut(600)
    later = window_shut(r, "acct-a", at(900), at(5))
    assert later is not None
    assert (later.next_probe_at, later.refusals, later.failing_since) == (at(900), 2, at(0))
    assert window_shut(r, "acct-a", at(300), at(5)) is None


def test_the_window_reopens_at_its_reset_by_itself() -> None:
    r = shut(600)
    assert reopened(r, at(599)) is None
    back = reopened(r, at(600))
    assert back is not None
    assert back.healthy
    assert (back.recovered_by, back.outage_started, back.recovered_at) == ("reset", at(0), at(600))
    assert reopened(back, at(700)) is None  # already open


# --- the goal ------------------------------------------------------------------------------


def refused_item(s: Story, resets_s: float) -> Story:
    """``p1-a``'s attempt refused by acct-a's spent window (uncharged: nothing happened)."""
    s.start("p1-a")
    item = s.view.work["p1-a"]
    assert item.run_id is not None
    return s.tick().add(
        record_work.finish_attempt(
            s.view,
            work_id="p1-a",
            run_id=item.run_id,
            at=s.now,
            outcome="failed",
            failure_class="upstream",
            evidence=ABSENT,
            error="usage limit reached",
            window=Window("acct-a", s.now + timedelta(seconds=resets_s)),
        )
    )


def test_goals_of_the_account_park_on_it_until_the_reset_then_resume() -> None:
    s = Story()
    s.plan("a")
    window = shut(3600, since_s=3)
    d = decide(s.view, at(5), upstreams={"worker": window})
    action = route(d)
    assert isinstance(action, Park)
    assert (d.status, d.blocked_on, d.rule, d.not_before) == (
        "waiting",
        "upstream",
        "fleet.4",
        at(3600),
    )
    assert d.reason.startswith("parked: the usage window of account acct-a is spent until")
    s.tick(4).add(record_park.park_goal(s.view, action.outage, at=s.now))
    parked = s.view.parked
    assert parked is not None
    assert (parked.upstream, parked.until) == ("account acct-a", at(3600))
    # no probe is due while it waits; once the record reopens, the goal resumes by itself
    assert isinstance(route(decide(s.view, at(1800), upstreams={"worker": window})), Wait)
    back = reopened(window, at(3600))
    assert back is not None
    d = decide(s.view, at(3600), upstreams={"worker": back})
    assert (d.next_action, d.rule) == ("resume", "fleet.1")
    assert d.reason.startswith("the usage window of account acct-a reopened at")
    # a replay, which knows no records, says why the goal waited
    replayed = decide(s.view, at(1800))
    assert replayed.reason.startswith("parked: the usage window of account acct-a is spent")


def test_the_refusal_is_recorded_with_its_account_and_reset_and_reads_back() -> None:
    s = planned_story()
    refused_item(s, 120)
    finished = s.events[-1]
    assert finished.type == "attempt.finished"
    assert (finished.account, finished.resets_at) == ("acct-a", s.now + timedelta(seconds=120))  # type: ignore[union-attr]
    assert decode(encode(finished)) == finished
    validate_events(s.events)
    assert s.view.windows == frozenset({"p1-a"})
    d = decide(s.view, s.now)
    assert d.rule != "fleet.6"  # a window within max_quota_wait_s only waits


def planned_story(**policy: Any) -> Story:
    s = Story(**policy)
    s.plan("a")
    return s


def test_a_reset_further_than_max_quota_wait_s_stops_the_goal_on_environment() -> None:
    s = planned_story(max_quota_wait_s=3600)
    refused_item(s, 7200)
    d = decide(s.view, s.now)
    assert (d.status, d.blocked_on, d.rule) == ("blocked", "environment", "fleet.6")
    assert "the usage window of account acct-a is spent until" in d.reason
    assert "over the policy's max_quota_wait_s of 3600s" in d.reason
    assert "`governor work retry`" in d.reason
    # a person retries the item: the stop is cleared
    s.op("retry_work", work_id="p1-a", reason="the window reopened")
    assert decide(s.view, s.now).rule != "fleet.6"
    assert s.view.windows == frozenset({"p1-a"})  # until its next attempt finishes
    s.attempt("p1-a", "succeeded")
    assert s.view.windows == frozenset()


def test_the_default_limit_is_a_day_and_a_recorded_policy_without_it_has_none() -> None:
    s = planned_story()
    assert s.policy.max_quota_wait_s == 86_400
    refused_item(s, 86_401)
    assert decide(s.view, s.now).rule == "fleet.6"
    old = planned_story(max_quota_wait_s=None)
    assert old.policy.max_quota_wait_s is None
    refused_item(old, 10 * 86_400)
    assert decide(old.view, old.now).rule != "fleet.6"


def test_a_planner_refused_by_a_long_window_stops_until_resumed() -> None:
    s = Story(max_quota_wait_s=60)
    plan_id = s.request()
    s.tick().add(
        record.plan_failed(
            s.view,
            plan_id=plan_id,
            at=s.now,
            failure_class="upstream",
            evidence=ABSENT,
            error="usage limit reached",
            window=Window("acct-a", s.now + timedelta(hours=5)),
        )
    )
    d = decide(s.view, s.now)
    assert (d.status, d.blocked_on, d.rule) == ("blocked", "environment", "fleet.6")
    s.op("resume_goal", reason="waited")
    assert decide(s.view, s.now).rule != "fleet.6"


def test_a_goal_about_to_park_on_a_window_too_far_away_stops_instead() -> None:
    s = planned_story(max_quota_wait_s=600)
    d = decide(s.view, at(10), upstreams={"worker": shut(5000)})
    assert (d.status, d.blocked_on, d.rule) == ("blocked", "environment", "fleet.6")
    assert not isinstance(route(d), Park | Wait | Resume)


def test_a_window_is_recorded_only_on_an_upstream_refusal() -> None:
    s = Story()
    plan_id = s.request()
    [failed] = record.plan_failed(
        s.view,
        plan_id=plan_id,
        at=s.now,
        failure_class=None,
        evidence=None,
        error="broke",
        window=Window("acct-a", s.now),
    )
    assert (failed.account, failed.resets_at) == (None, None)  # type: ignore[union-attr]
