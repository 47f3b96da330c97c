"""SPEC §6.2, one table: every numbered goal rule, with the reason a person reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from governor.core.evidence import UNKNOWN, Evidence, FailureClass
from tests.story import ABSENT, Story


@dataclass(frozen=True)
class Case:
    story: Callable[[], Story]
    status: str
    next_action: str
    blocked_on: str | None
    reason: str
    rule: str
    exhausted: str | None = None
    trigger: str | None = None
    seconds_later: float = 0.0


def planned(*keys: str, **policy: Any) -> Story:
    story = Story(**policy)
    story.plan(*keys or ("a",))
    return story


def planner_fails(*classes: FailureClass | None, **policy: Any) -> Story:
    story = Story(**policy)
    for failure_class in classes:
        story.plan_fails(
            failure_class,
            error="HTTP/1.1 503 Service Unavailable" if failure_class == "upstream" else "no",
        )  # type: ignore[arg-type]
    return story


def env_planner() -> Story:
    s = Story()
    s.plan_fails("environment", error="codex: not found on PATH")
    return s


def resumed() -> Story:
    return env_planner().op("resume_goal", reason="installed codex")


def rejected() -> Story:
    s = Story(auto_apply=False)
    plan_id = s.propose("a")
    return s.op("reject_plan", plan_id=plan_id, reason="too big")


def requested() -> Story:
    s = Story()
    s.request()
    return s


def proposed(**policy: Any) -> Story:
    s = Story(**policy)
    s.propose("a")
    return s


def completed() -> Story:
    s = planned("a").succeed("p1-a")
    s.apply(s.propose())
    return s


def cancelled() -> Story:
    return planned("a").op("cancel_goal")


def milestone(**policy: Any) -> Story:
    return planned("a", **policy).succeed("p1-a")


def item_blocked_on(failure_class: str) -> Callable[[], Story]:
    def build() -> Story:
        s = Story()
        s.plan("a", "b", deps={"b": ("a",)})
        if failure_class == "upstream":
            for _ in range(3):
                s.attempt("p1-a", failure_class="upstream").tick(1000)
            return s
        return s.attempt(
            "p1-a",
            failure_class=failure_class,
            evidence=UNKNOWN if failure_class == "decision" else ABSENT,  # type: ignore[arg-type]
            error="Which database?" if failure_class == "decision" else "make: not found",
        )

    return build


def exhausted_item(**policy: Any) -> Story:
    return planned("a", **policy).attempt("p1-a").attempt("p1-a").attempt("p1-a")


def held_for_operator() -> Story:
    return planned("a", retry_blocked=False).attempt("p1-a")


def started() -> Story:
    s = planned("a")
    s.start("p1-a")
    return s


def _upstream_observed() -> Story:
    s = Story()
    s.plan_fails(
        "upstream",
        evidence=Evidence(
            effects="absent", output="observed", refusal="absent", source="a:b", ref="c"
        ),
    )
    return s


def _accepted_and_cancelled() -> Story:
    return planned("a", "b").succeed("p1-a").op("cancel_work", work_id="p1-b")


def _planner_decision() -> Story:
    s = Story()
    s.plan_fails("decision", evidence=UNKNOWN, error="Which cloud?")
    return s


CASES = {
    "1 a cancelled goal is cancelled": Case(
        cancelled, "cancelled", "none", None, "cancelled", "goal.1"
    ),
    "1 a completed plan means the goal succeeded": Case(
        completed, "succeeded", "none", None, "complete", "goal.1"
    ),
    "2 cumulative runtime over its limit exhausts the goal": Case(
        lambda: planned("a", max_runtime_s=10).attempt("p1-a", run_s=11),
        "budget_exhausted",
        "none",
        None,
        "runtime 12s is over its limit of 10s",
        "goal.2",
        exhausted="runtime",
    ),
    "2 cumulative cost over its limit exhausts the goal": Case(
        lambda: planned("a", max_cost_usd=1.0).attempt("p1-a", cost_usd=1.5),
        "budget_exhausted",
        "none",
        None,
        "cost $1.50 is over its limit of $1.00",
        "goal.2",
        exhausted="cost",
    ),
    "3 a proposed plan is applied automatically": Case(
        proposed, "ready", "apply", None, "plan p1 was proposed", "goal.3"
    ),
    "3 a proposed plan awaits review without auto_apply": Case(
        lambda: proposed(auto_apply=False),
        "awaiting_review",
        "review_plan",
        "operator",
        "awaiting an operator",
        "goal.3",
    ),
    "3 a rejected plan is retried, charged": Case(
        rejected,
        "ready",
        "plan",
        None,
        "plan p1 was rejected; plan (retry, charged 1 of 5 used)",
        "goal.3",
        trigger="retry",
    ),
    "3 a charged planner failure is retried": Case(
        lambda: planner_fails(None),
        "ready",
        "plan",
        None,
        "plan p1 failed (charged): “no",
        "goal.3",
        trigger="retry",
    ),
    "3 a charged planner failure with no replans left exhausts the goal": Case(
        lambda: planner_fails(None, None, max_replans=2),
        "budget_exhausted",
        "none",
        None,
        "charged plans are spent (2 of 2)",
        "goal.3",
        exhausted="replans",
    ),
    "3 an upstream planner failure without positive evidence is charged": Case(
        _upstream_observed,
        "ready",
        "plan",
        None,
        "failed (charged)",
        "goal.3",
        trigger="retry",
    ),
    "3 a requested plan without an outcome is running": Case(
        requested, "running", "wait", None, "plan p1 was requested and is running", "goal.3"
    ),
    "3 a retry beyond the plan records exhausts them": Case(
        lambda: planner_fails("upstream", "upstream", max_plan_records=2, max_uncharged_replans=5),
        "budget_exhausted",
        "none",
        None,
        "its limit of plan records",
        "goal.5",
        exhausted="plan_records",
        seconds_later=1000,
    ),
    "4 an environment planner failure stops the goal and names the precondition": Case(
        env_planner,
        "blocked",
        "none",
        "environment",
        "planning could not start; a required precondition is missing: “codex: not found on PATH”",
        "goal.4",
    ),
    "4 a planner decision stops the goal": Case(
        _planner_decision, "blocked", "none", "decision", "Which cloud?", "goal.4"
    ),
    "4 three consecutive upstream planner failures stop the goal": Case(
        lambda: planner_fails("upstream", "upstream", "upstream"),
        "blocked",
        "none",
        "upstream",
        "blocked waiting on an outside service after 3 consecutive uncharged planner failures",
        "goal.4",
    ),
    "4 an upstream planner failure waits out its cooldown": Case(
        lambda: planner_fails("upstream"),
        "waiting",
        "wait",
        "upstream",
        "waiting until 2026-01-01T00:00:32Z",
        "goal.4",
    ),
    "4 after the cooldown an upstream planner failure falls through to planning": Case(
        lambda: planner_fails("upstream"),
        "ready",
        "plan",
        None,
        "plan (initial, charged 0 of 5 used)",
        "goal.5",
        trigger="initial",
        seconds_later=31,
    ),
    "4 a resumed environment stop plans again with the budget intact": Case(
        resumed, "ready", "plan", None, "charged 0 of 5 used", "goal.5", trigger="initial"
    ),
    "5 a new goal plans first": Case(
        Story, "ready", "plan", None, "no plan has been applied yet", "goal.5", trigger="initial"
    ),
    "5 a goal without replans cannot plan": Case(
        lambda: Story(max_replans=0),
        "budget_exhausted",
        "none",
        None,
        "charged plans are spent (0 of 0)",
        "goal.5",
        exhausted="replans",
    ),
    "6 a plan whose items are all accepted calls for the next milestone": Case(
        milestone,
        "ready",
        "plan",
        None,
        "every item of plan p1 is accepted",
        "goal.6",
        trigger="milestone",
    ),
    "6 accepted and cancelled items settle a plan: the next milestone": Case(
        _accepted_and_cancelled,
        "ready",
        "plan",
        None,
        "every item of plan p1 is settled (1 accepted, 1 cancelled)",
        "goal.6",
        trigger="milestone",
    ),
    "6 a milestone with no replans left exhausts the goal": Case(
        lambda: milestone(max_replans=1),
        "budget_exhausted",
        "none",
        None,
        "charged plans are spent (1 of 1)",
        "goal.6",
        exhausted="replans",
    ),
    "7 passing items are accepted": Case(
        lambda: planned("a").attempt("p1-a", "succeeded"),
        "ready",
        "accept",
        None,
        "p1-a passed; accept",
        "goal.7",
    ),
    "7 passing items await review without accept_passing": Case(
        lambda: planned("a", accept_passing=False).attempt("p1-a", "succeeded"),
        "awaiting_review",
        "review_work",
        "operator",
        "p1-a passed; awaiting an operator",
        "goal.7",
    ),
    "8 ready items are dispatched": Case(
        lambda: planned("a", "b"), "ready", "run", None, "run p1-a", "goal.8"
    ),
    "8 failed items with budget are retried": Case(
        lambda: planned("a").attempt("p1-a"), "ready", "run", None, "run p1-a", "goal.8"
    ),
    "8 the goal's total attempts stop dispatch": Case(
        lambda: planned("a", "b", max_total_attempts=2).attempt("p1-a").attempt("p1-a"),
        "budget_exhausted",
        "none",
        None,
        "the goal's charged attempts are spent (2 of 2)",
        "goal.8",
        exhausted="total_attempts",
    ),
    "9 running items are waited for": Case(
        started, "running", "wait", None, "p1-a running", "goal.9"
    ),
    "9 an item cooling down after an upstream refusal is waited for": Case(
        lambda: planned("a").attempt("p1-a", failure_class="upstream"),
        "waiting",
        "wait",
        "upstream",
        "p1-a is waiting on an outside service until 2026-01-01T00:00:35Z",
        "goal.9",
    ),
    "10 an item stopped on the environment stops the goal": Case(
        item_blocked_on("environment"),
        "blocked",
        "none",
        "environment",
        "p1-a: attempt 1 could not start",
        "goal.10",
    ),
    "10 an item stopped on a decision stops the goal": Case(
        item_blocked_on("decision"), "blocked", "none", "decision", "Which database?", "goal.10"
    ),
    "10 an item stopped at the upstream bound stops the goal": Case(
        item_blocked_on("upstream"),
        "blocked",
        "none",
        "upstream",
        "after 3 consecutive uncharged attempts",
        "goal.10",
    ),
    "11 an item out of attempts is replanned around": Case(
        exhausted_item,
        "ready",
        "plan",
        None,
        "p1-a exhausted its 3 attempts; plan (replan",
        "goal.11",
        trigger="replan",
    ),
    "11 an item out of its single attempt is replanned around, in the spec's words": Case(
        lambda: planned("a", max_attempts=1).attempt("p1-a"),
        "ready",
        "plan",
        None,
        "p1-a exhausted its 1 attempts; plan (replan",
        "goal.11",
        trigger="replan",
    ),
    "10 an item stopped at an upstream bound of 1 stops the goal in the spec's words": Case(
        lambda: planned("a", max_uncharged_attempts=1).attempt("p1-a", failure_class="upstream"),
        "blocked",
        "none",
        "upstream",
        "after 1 consecutive uncharged attempts",
        "goal.10",
    ),
    "11 an item out of attempts with no replans left exhausts the goal": Case(
        lambda: exhausted_item(max_replans=1),
        "budget_exhausted",
        "none",
        None,
        "charged plans are spent (1 of 1)",
        "goal.11",
        exhausted="replans",
    ),
    "12 with no legal progress action the goal is blocked on the work": Case(
        held_for_operator, "blocked", "none", "work", "no legal progress action", "goal.12"
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_goal_rule(case: Case) -> None:
    story = case.story()
    d = story.decision(story.now + timedelta(seconds=case.seconds_later))
    assert (d.status, d.next_action, d.blocked_on) == (
        case.status,
        case.next_action,
        case.blocked_on,
    ), d.reason
    assert case.reason in d.reason
    assert d.rule == case.rule
    assert d.exhausted == case.exhausted
    assert d.trigger == case.trigger
    assert (d.not_before is not None) == (d.status == "waiting")
