"""Fleet outages in the core (SPEC §11.10): the health record's transitions, and what the
shared health does to a goal's decision — park, wait parked, resume — recorded so a
replay explains it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from governor.core import record, record_park
from governor.core.decision import Decision
from governor.core.event_fields import WorkSpec
from governor.core.history import validate_events
from governor.core.policy import UpstreamBackoff
from governor.core.route import Park, Resume, Wait, route
from governor.core.rules.decide import decide
from governor.core.upstream import (
    Outage,
    Seen,
    Upstream,
    UpstreamHealth,
    claimed,
    model_family,
    observed,
    probed,
)
from governor.core.wire.codec import decode, encode
from governor.errors import HistoryError
from tests.story import T0, Story

CODEX = Upstream("codex", "http://127.0.0.1:9/v1", "gpt-5-codex")
BACKOFF = UpstreamBackoff(initial_s=30, factor=2, max_s=900)
REFUSED = Seen("refused", status=503)
ANSWERED = Seen("answered")


def at(seconds: float):
    return T0 + timedelta(seconds=seconds)


def failing(since_s: float = 0, **fields) -> UpstreamHealth:
    record = observed(None, CODEX, REFUSED, at(since_s), BACKOFF)
    assert record is not None
    return replace(record, **fields)


def back(record: UpstreamHealth, when_s: float) -> UpstreamHealth:
    return probed(record, ANSWERED, at(when_s))


def healthy_record() -> UpstreamHealth:
    record = observed(None, CODEX, ANSWERED, at(0), BACKOFF)
    assert record is not None
    return record


def outage_of(d: Decision) -> Outage:
    action = route(d)
    assert isinstance(action, Park | Resume)
    return action.outage


def active_items(s: Story) -> tuple[str, ...]:
    assert s.view.active_plan is not None
    return s.view.active_plan.work_ids


# --- the record ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "family"),
    [
        (None, "default"),
        ("gpt-5-codex", "gpt-5-codex"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("Claude-Opus-4-1-latest", "claude-opus-4-1"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
    ],
)
def test_a_model_family_drops_a_trailing_date(model, family):
    assert model_family(model) == family


def test_a_first_refusal_marks_the_upstream_failing_with_a_probe_one_step_later():
    record = failing(10)
    assert (record.healthy, record.failing_since, record.last_status) == (False, at(10), 503)
    assert record.next_probe_at == at(40)
    assert (record.probes, record.refusals) == (0, 1)
    assert record.upstream == "codex http://127.0.0.1:9/v1 gpt-5-codex"


def test_a_retry_after_longer_than_the_step_pushes_the_probe_back():
    record = observed(None, CODEX, Seen("refused", 429, 120.0), at(0), BACKOFF)
    assert record is not None
    assert record.next_probe_at == at(120)


def test_an_answer_on_a_healthy_upstream_changes_nothing_so_nothing_is_written():
    healthy = observed(None, CODEX, ANSWERED, at(0), BACKOFF)
    assert healthy is not None
    assert healthy.healthy
    assert observed(healthy, CODEX, ANSWERED, at(5), BACKOFF) is None
    assert observed(healthy, CODEX, Seen("none"), at(5), BACKOFF) is None


def test_more_refusals_while_failing_keep_the_outage_start_and_the_probe_time():
    first = failing(0)
    again = observed(first, CODEX, REFUSED, at(3), BACKOFF)
    assert again is not None
    assert (again.failing_since, again.next_probe_at, again.refusals) == (at(0), at(30), 2)


def test_one_claim_per_step_and_a_refused_probe_moves_the_next_one_a_step_further():
    record = failing(0)
    assert claimed(record, at(29), "w1", at(89)) is None  # not due yet
    mine = claimed(record, at(30), "w1", at(90))
    assert mine is not None
    assert mine.prober == "w1"
    assert claimed(mine, at(31), "w2", at(91)) is None  # the claim is live
    after = probed(mine, REFUSED, at(32))
    assert (after.probes, after.next_probe_at, after.probing_until) == (1, at(92), None)
    again = claimed(after, at(92), "w2", at(150))
    assert again is not None
    assert probed(again, REFUSED, at(93)).next_probe_at == at(93 + 120)


def test_an_expired_claim_may_be_taken_again():
    mine = claimed(failing(0), at(30), "w1", at(40))
    assert mine is not None
    assert claimed(mine, at(41), "w2", at(100)) is not None


def test_an_answered_probe_makes_it_healthy_and_remembers_the_outage_span():
    record = back(failing(0), 95)
    assert record.healthy
    assert record.next_probe_at is None
    assert (record.outage_started, record.recovered_at, record.recovered_by) == (
        at(0),
        at(95),
        "probe",
    )


def test_a_late_call_that_is_answered_ends_the_outage_too():
    record = observed(failing(0), CODEX, ANSWERED, at(7), BACKOFF)
    assert record is not None
    assert record.healthy
    assert record.recovered_by == "call"


# --- decisions ----------------------------------------------------------------------------


def ready_to_run() -> Story:
    s = Story()
    s.plan("build")
    return s


def test_a_goal_about_to_call_a_failing_upstream_parks_instead():
    s = ready_to_run()
    health = failing(0)
    d = decide(s.view, at(10), upstreams={"worker": health})
    assert (d.status, d.next_action, d.blocked_on, d.rule) == (
        "waiting",
        "park",
        "upstream",
        "fleet.4",
    )
    assert d.not_before == at(30)
    assert health.upstream in d.reason
    assert "next probe at 2026-01-01T00:00:30Z" in d.reason
    assert isinstance(route(d), Park)


def test_a_healthy_or_unrelated_upstream_changes_nothing():
    s = ready_to_run()
    plain = decide(s.view, at(10))
    assert decide(s.view, at(10), upstreams={"planner": failing(0)}) == plain
    assert decide(s.view, at(10), upstreams={"worker": healthy_record()}) == plain


def test_a_run_goes_on_with_the_items_whose_upstream_is_healthy():
    s = Story(max_parallel_work=2)
    plan_id = s.request()
    work = [
        WorkSpec(key="a", title="A", objective="a", acceptance=("a works",)),
        WorkSpec(key="b", title="B", objective="b", acceptance=("b works",), profile="planner"),
    ]
    s.tick().add(
        record.plan_proposed(
            s.view, plan_id=plan_id, at=s.now, decision="apply", rationale="r", work=work
        )
    )
    s.apply(plan_id)
    d = decide(s.view, at(10), upstreams={"worker": failing(0)})
    assert (d.next_action, d.work_ids) == ("run", (f"{plan_id}-b",))


def park(s: Story, health: UpstreamHealth, when_s: float) -> None:
    d = decide(s.view, at(when_s), upstreams={"worker": health})
    action = route(d)
    assert isinstance(action, Park)
    s.now = at(when_s)
    s.add(record_park.park_goal(s.view, outage_of(d), at=s.now))


def test_a_recorded_park_holds_in_a_replay_and_names_the_upstream_and_its_probe():
    s = ready_to_run()
    park(s, failing(0), 10)
    [event] = s.events[-1:]
    assert event.type == "goal.parked"
    assert decode(encode(event)) == event
    d = decide(s.view, at(11))  # no health given: the record alone decides
    assert (d.status, d.next_action, d.rule, d.not_before) == ("waiting", "wait", "fleet.3", at(30))
    assert "parked: codex http://127.0.0.1:9/v1 gpt-5-codex" in d.reason
    assert isinstance(route(d), Wait)
    validate_events(s.events)


def test_a_parked_goal_follows_the_probe_schedule_of_the_shared_record():
    s = ready_to_run()
    park(s, failing(0), 10)
    later = probed(failing(0), REFUSED, at(31))
    d = decide(s.view, at(40), upstreams={"worker": later})
    assert (d.status, d.not_before) == ("waiting", later.next_probe_at)


def test_a_parked_goal_resumes_when_its_upstream_is_back_naming_the_probe_and_the_span():
    s = ready_to_run()
    park(s, failing(0), 10)
    health = back(failing(0), 95)
    d = decide(s.view, at(96), upstreams={"worker": health})
    assert (d.status, d.next_action, d.rule) == ("ready", "resume", "fleet.1")
    action = route(d)
    assert isinstance(action, Resume)
    s.now = at(96)
    s.add(record_park.resume_goal(s.view, outage_of(d), at=s.now))
    resumed = s.events[-1]
    assert (resumed.type, resumed.actor) == ("goal.resumed", "governor")
    assert resumed.reason is not None
    assert "its probe at 2026-01-01T00:01:35Z was answered" in resumed.reason
    assert "from 2026-01-01T00:00:00Z to 2026-01-01T00:01:35Z" in resumed.reason
    assert s.view.parked is None
    assert s.view.outage_wait_s == 86
    assert decide(s.view, at(97), upstreams={"worker": health}).next_action == "run"
    validate_events(s.events)


def test_items_the_outage_refused_are_retried_with_their_window_reset():
    s = ready_to_run()
    work_id = active_items(s)[0]
    s.attempt(work_id, failure_class="upstream")  # an in-flight victim: uncharged
    health = failing(s.now.timestamp() - T0.timestamp())
    d = decide(s.view, s.now, upstreams={"worker": health})
    assert d.next_action == "park"
    s.add(record_park.park_goal(s.view, outage_of(d), at=s.now))
    recovered = back(health, 200)
    resume = decide(s.view, at(200), upstreams={"worker": recovered})
    s.now = at(200)
    s.add(record_park.resume_goal(s.view, outage_of(resume), at=s.now))
    assert [e.type for e in s.events[-2:]] == ["goal.resumed", "work.retried"]
    item = s.view.work[work_id]
    assert (item.consecutive_uncharged, item.charged_attempts, item.fresh) == (0, 0, True)
    validate_events(s.events)


def test_a_goal_stopped_on_the_upstream_bound_parks_while_the_upstream_fails():
    s = Story(max_uncharged_attempts=1)
    s.plan("build")
    work_id = active_items(s)[0]
    s.attempt(work_id, failure_class="upstream")
    assert (s.decision().status, s.decision().blocked_on) == ("blocked", "upstream")
    d = decide(s.view, s.now, upstreams={"worker": failing(0)})
    assert d.next_action == "park"


def test_a_goal_stopped_on_the_bound_before_the_fleet_knew_resumes_when_it_is_back():
    s = Story(max_uncharged_replans=1)
    s.plan_fails("upstream")
    stopped = s.now
    assert s.decision().status == "blocked"
    health = back(failing(0), (stopped - T0).total_seconds() + 60)
    d = decide(s.view, stopped + timedelta(seconds=61), upstreams={"planner": health})
    assert (d.next_action, d.rule) == ("resume", "fleet.5")
    s.now = stopped + timedelta(seconds=61)
    s.add(record_park.resume_goal(s.view, outage_of(d), at=s.now))
    assert s.events[-1].type == "goal.resumed"
    assert decide(s.view, s.now, upstreams={"planner": health}).next_action == "plan"


def test_an_outage_that_ended_before_the_stop_resumes_nothing():
    s = Story(max_uncharged_replans=1)
    health = back(failing(0), 0.5)
    s.plan_fails("upstream")
    d = decide(s.view, s.now, upstreams={"planner": health})
    assert (d.status, d.blocked_on) == ("blocked", "upstream")


def test_the_outage_wait_is_a_budget_past_which_the_goal_stops_with_a_named_reason():
    s = Story(max_outage_wait_s=100)
    s.plan("build")
    park(s, failing(0), 10)
    assert decide(s.view, at(110)).status == "waiting"
    d = decide(s.view, at(111), upstreams={"worker": failing(0)})
    assert (d.status, d.exhausted, d.rule) == ("budget_exhausted", "outage_wait", "fleet.2")
    assert "over its limit of 100s" in d.reason
    s.now = at(112)
    s.op("raise_budget", ledger="outage_wait", to=500, reason="the vendor says an hour")
    assert decide(s.view, at(113)).status == "waiting"


def test_cancelling_a_parked_goal_ends_it():
    s = ready_to_run()
    park(s, failing(0), 10)
    s.op("cancel_goal")
    assert decide(s.view, at(100), upstreams={"worker": failing(0)}).status == "cancelled"


def test_a_second_park_without_a_resume_is_refused_by_the_validator():
    s = ready_to_run()
    park(s, failing(0), 10)
    again = s.events[-1].model_copy(update={"seq": s.view.seq + 1})
    with pytest.raises(HistoryError, match="parked on 'codex"):
        validate_events([*s.events, again])
    outage = decide(s.view, at(11)).outage
    assert outage is not None
    assert record_park.park_goal(s.view, outage, at=at(11)) == []


def test_a_parked_goal_whose_upstream_has_no_record_any_more_resumes_but_a_replay_keeps_it():
    s = ready_to_run()
    park(s, failing(0), 10)
    assert decide(s.view, at(100)).status == "waiting"  # a replay: no health given
    d = decide(s.view, at(100), upstreams={})
    assert (d.next_action, d.rule) == ("resume", "fleet.1")
    assert "has no failing record any more" in d.reason


def test_an_answer_to_a_call_begun_before_the_outage_does_not_end_it():
    # a call in flight when the outage began answers late: its request went out while the
    # vendor still answered, so it says nothing of now and the gate stays shut
    record = failing(10)
    assert observed(record, CODEX, ANSWERED, at(12), BACKOFF, began=at(9)) is None
    # a call begun once the outage was seen, answered, is a recovery like a probe's
    after = observed(record, CODEX, ANSWERED, at(14), BACKOFF, began=at(11))
    assert after is not None
    assert (after.healthy, after.recovered_by, after.outage_started) == (True, "call", at(10))
    # and when the start is not known, an answer is taken as before
    unknown = observed(record, CODEX, ANSWERED, at(12), BACKOFF)
    assert unknown is not None
    assert unknown.healthy


# --- SPEC §12.7, §12.9, issue 24 item 10 ------------------------------------------------


def test_a_probe_that_made_no_contact_is_recorded_as_such_not_as_refused():
    """A probe killed at its timeout: the next probe moves a step further (the upstream
    has not been shown back), but no refusal is counted and the last status stays."""
    mine = claimed(failing(0), at(30), "w1", at(90))
    assert mine is not None
    after = probed(mine, Seen("none"), at(90))
    assert (after.probes, after.refusals, after.last_status) == (1, 1, 503)
    assert after.next_probe_at == at(90 + 60)
    assert not after.healthy
    refused = probed(mine, REFUSED, at(32))
    assert (refused.probes, refused.refusals) == (1, 2)


def test_a_record_remembers_whether_its_upstream_ever_answered():
    assert healthy_record().answered
    assert failing(0).answered  # a refusal with a status is an answer too
    never = observed(None, CODEX, Seen("none", unreachable=True), at(0), BACKOFF)
    assert never is not None
    assert (never.healthy, never.answered) == (True, False)  # shown, never parked on
    assert observed(never, CODEX, Seen("none", unreachable=True), at(5), BACKOFF) is None
    now_answered = observed(never, CODEX, ANSWERED, at(9), BACKOFF)
    assert now_answered is not None
    assert now_answered.answered
    assert observed(now_answered, CODEX, ANSWERED, at(10), BACKOFF) is None  # no write


def test_a_vendor_gone_after_it_answered_is_refused_and_the_record_fails():
    down = observed(healthy_record(), CODEX, Seen("refused", unreachable=True), at(5), BACKOFF)
    assert down is not None
    assert (down.healthy, down.answered, down.last_status) == (False, True, None)


def test_a_declared_upstream_is_named_by_its_declaration_alone():
    declared = Upstream("command", "plan.sh#0123456789", "default", declared="openai-main")
    assert declared.name == "openai-main"
    other = Upstream("python", "agents.py:plan#9876543210", "gpt-5", declared="openai-main")
    assert other.name == declared.name
    assert CODEX.name == "codex http://127.0.0.1:9/v1 gpt-5-codex"
