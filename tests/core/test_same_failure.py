"""SPEC §12.10: the same failure again stops an item early, or the goal when the planner
repeats itself — one table per rule, with its reset points (decision record 0017)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from governor.core import record, record_work
from governor.core.decision import Decision, WorkDecision
from governor.core.evidence import UNKNOWN
from governor.core.rules.work import decide_work
from governor.errors import CommandRefusedError
from tests.story import ABSENT, Story

TESTS = (
    "FAILED tests/test_login.py - assert 401 == 403\n/tmp/run-{}/app/login.py:41\n1 failed in {}s"
)
"""One failing test, run after run: the folder and the timing differ, the signature not."""
OTHER = "ImportError: cannot import name 'hash_password'"


def fails(s: Story, work_id: str = "p1-a", text: str = TESTS, outcome: str = "failed") -> Story:
    n = s.view.work[work_id].attempts_used
    return s.attempt(work_id, outcome, error=text.format(f"x{n}a9", 3 + n / 10))


def refused(s: Story, work_id: str = "p1-a") -> Story:
    return s.attempt(work_id, failure_class="upstream", evidence=ABSENT, error="HTTP 503")


def item(**policy: Any) -> Story:
    s = Story(**{"max_attempts": 5, **policy})
    s.plan("a")
    return s


def _lost(s: Story) -> Story:
    s.start("p1-a")
    for _ in range(4):
        s.continue_("p1-a")
    return s


def _timeouts(s: Story) -> Story:
    for _ in range(3):
        fails(s, outcome="timed_out")
    return s


def _without_signatures(s: Story) -> Story:
    """As a history recorded before SPEC §12.10: the same failures, no signature."""
    for _ in range(3):
        s.start("p1-a")
        (event,) = record_work.finish_attempt(
            s.view,
            work_id="p1-a",
            run_id=s.view.work["p1-a"].run_id or "",
            at=s.tick().now,
            outcome="failed",
            error="same",
            evidence=UNKNOWN,
        )  # fmt: skip - one call
        s.add([event.model_copy(update={"signature": None})])
    return s


ITEM_CASES: dict[str, tuple[Callable[[], Story], str, str, str | None]] = {
    "three charged failures alike stop an item early, its attempts left": (
        lambda: fails(fails(fails(item()))),
        "budget_exhausted",
        "work.same_failure",
        "same_failures",
    ),
    "two are not enough": (lambda: fails(fails(item())), "blocked", "work.9", None),
    "another failure between breaks the run": (
        lambda: fails(fails(fails(item()), text=OTHER)),
        "blocked",
        "work.9",
        None,
    ),
    "an uncharged failure between neither counts nor breaks it": (
        lambda: fails(fails(refused(fails(item())))),
        "budget_exhausted",
        "work.same_failure",
        "same_failures",
    ),
    "three timeouts alike stop it too": (
        lambda: fails(
            fails(fails(item(), outcome="timed_out"), outcome="timed_out"), outcome="timed_out"
        ),
        "budget_exhausted",
        "work.same_failure",
        "same_failures",
    ),
    "a lost run has no signature: it breaks the run": (
        lambda: fails(_lost(fails(fails(item())))),
        "blocked",
        "work.9",
        None,
    ),
    "work.retried starts the run over": (
        lambda: fails(
            fails(fails(fails(item()))).op("retry_work", work_id="p1-a", reason="fixed the fixture")
        ),
        "blocked",
        "work.9",
        None,
    ),
    "work.reopened starts the run over": (
        lambda: fails(
            fails(fails(item())).op("cancel_work", work_id="p1-a").op("reopen_work", work_id="p1-a")
        ),
        "blocked",
        "work.9",
        None,
    ),
    "a limit of 1 stops at the first charged failure": (
        lambda: fails(item(max_same_failures=1)),
        "budget_exhausted",
        "work.same_failure",
        "same_failures",
    ),
    "a larger limit waits for more": (
        lambda: fails(fails(fails(item(max_same_failures=4)))),
        "blocked",
        "work.9",
        None,
    ),
    "its spent attempts are named when both run out (SPEC §6.1 rule 9)": (
        lambda: fails(fails(fails(item(max_attempts=3)))),
        "budget_exhausted",
        "work.9",
        "attempts",
    ),
    "a recorded policy without the field has no limit": (
        lambda: fails(fails(fails(item(max_same_failures=None)))),
        "blocked",
        "work.9",
        None,
    ),
    "failures recorded without a signature never count": (
        lambda: _without_signatures(item()),
        "blocked",
        "work.9",
        None,
    ),
}


@pytest.mark.parametrize(
    ("build", "status", "rule", "exhausted"), ITEM_CASES.values(), ids=ITEM_CASES.keys()
)
def test_the_item_rule(
    build: Callable[[], Story], status: str, rule: str, exhausted: str | None
) -> None:
    s = build()
    d: WorkDecision = decide_work(s.view, s.view.work["p1-a"], s.now)
    assert (d.status, d.rule, d.exhausted) == (status, rule, exhausted), d.reason
    if rule == "work.same_failure":
        assert d.reason.startswith("failed the same way ")
        assert " times in a row: “1 failed in " in d.reason


def test_the_goal_replans_around_an_item_that_repeats_itself() -> None:
    d = fails(fails(fails(item()))).decision()
    assert (d.status, d.next_action, d.trigger, d.rule) == ("ready", "plan", "replan", "goal.11")
    assert "p1-a failed the same way 3 times in a row" in d.reason


def test_work_retry_clears_an_item_stop_and_its_reason_reaches_the_item() -> None:
    s = fails(fails(fails(item()))).op("retry_work", work_id="p1-a", reason="the fixture is fixed")
    d = s.decision()
    assert (d.status, d.next_action, d.work_ids) == ("ready", "run", ("p1-a",))
    assert s.view.work["p1-a"].guidance == "the fixture is fixed"


# --- the planner ---------------------------------------------------------------------------

NO_JSON = "the reply could not be used: no JSON object found in {} characters"


def planner_fails(s: Story, text: str = NO_JSON) -> Story:
    s.plan_fails(None, error=text.format(1800 + s.view.plans_used))
    return s


def planner_refused(s: Story) -> Story:
    s.plan_fails("upstream", error="HTTP 503")
    s.tick(3600)  # past its cooldown
    return s


def _proposal_between(s: Story) -> Story:
    planner_fails(planner_fails(s))
    s.plan("a")
    s.attempt("p3-a")  # its only attempt: the goal replans around it
    return planner_fails(s)


def _lost_plan(s: Story) -> Story:
    plan_id = s.request()
    for _ in range(4):
        s.tick().add(record.continue_plan(s.view, plan_id=plan_id, at=s.now))
    return s


PLANNER_CASES: dict[str, tuple[Callable[[], Story], str, str]] = {
    "three charged failures alike stop the goal, replans left": (
        lambda: planner_fails(planner_fails(planner_fails(Story()))),
        "blocked",
        "goal.same_failure",
    ),
    "two are not enough": (lambda: planner_fails(planner_fails(Story())), "ready", "goal.3"),
    "an uncharged failure between neither counts nor breaks it": (
        lambda: planner_fails(planner_fails(planner_refused(planner_fails(Story())))),
        "blocked",
        "goal.same_failure",
    ),
    "another failure between breaks it": (
        lambda: planner_fails(planner_fails(planner_fails(Story(), "a crash after {} s"))),
        "ready",
        "goal.3",
    ),
    "a usable proposal breaks it": (
        lambda: _proposal_between(Story(max_attempts=1)),
        "ready",
        "goal.3",
    ),
    "a lost planner run has no signature: it breaks it": (
        lambda: planner_fails(_lost_plan(planner_fails(planner_fails(Story())))),
        "ready",
        "goal.3",
    ),
    "it is a stop of its own when the replans are spent too": (
        lambda: planner_fails(planner_fails(planner_fails(Story(max_replans=3)))),
        "blocked",
        "goal.same_failure",
    ),
    "a recorded policy without the field has no limit": (
        lambda: planner_fails(planner_fails(planner_fails(Story(max_same_failures=None)))),
        "ready",
        "goal.3",
    ),
}


@pytest.mark.parametrize(
    ("build", "status", "rule"), PLANNER_CASES.values(), ids=PLANNER_CASES.keys()
)
def test_the_planner_rule(build: Callable[[], Story], status: str, rule: str) -> None:
    d: Decision = build().decision()
    assert (d.status, d.rule) == (status, rule), d.reason
    if rule == "goal.same_failure":
        assert d.blocked_on == "work"
        assert d.reason.startswith("the planner failed the same way 3 times in a row: “")
        assert "no JSON object" in d.reason


def _stopped() -> Story:
    return planner_fails(planner_fails(planner_fails(Story())))


def test_raise_does_not_clear_the_planner_stop() -> None:
    s = _stopped().op("raise_budget", ledger="replans", to=9, reason="more")
    assert s.decision().rule == "goal.same_failure"


def test_resume_clears_it_and_its_reason_reaches_the_planner_once() -> None:
    s = _stopped().op("resume_goal", reason="the prompt now ends with the schema")
    d = s.decision()
    assert (d.status, d.next_action, d.trigger) == ("ready", "plan", "retry")
    assert s.view.guidance == "the prompt now ends with the schema"
    with pytest.raises(CommandRefusedError, match="no planner stop to clear"):
        s.op("resume_goal", reason="again")
    planner_fails(s)  # the run starts over: one failure is no stop
    assert s.decision().rule == "goal.3"


def test_resume_is_still_refused_after_a_charged_failure_that_stops_nothing() -> None:
    with pytest.raises(CommandRefusedError, match="no planner stop to clear"):
        planner_fails(Story()).op("resume_goal", reason="why")


def test_signatures_are_recorded_on_what_the_agent_failed_and_nothing_else() -> None:
    s = item()
    fails(s)
    fails(s, outcome="timed_out")
    s.attempt("p1-a", "abandoned", error="enough")
    _lost(s)
    finished = [e for e in s.events if e.type == "attempt.finished"]
    assert [e.outcome for e in finished] == ["failed", "timed_out", "abandoned", "lost"]
    assert [e.signature is not None for e in finished] == [True, True, False, False]
    p = planner_fails(Story())
    _lost_plan(p)
    failed = [e for e in p.events if e.type == "plan.failed"]
    assert [e.signature is not None for e in failed] == [True, False]
