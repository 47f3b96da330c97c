"""Every cost counts (SPEC §12.5): planner calls record what they cost like worker runs do,
and the cost ledger and ``max_cost_usd`` sum every recorded call, charged or not."""

from __future__ import annotations

from governor.core import record
from governor.core.event_fields import WorkSpec
from governor.core.events import PlanFailed
from governor.core.evidence import nothing_happened
from governor.core.fold import project
from governor.core.observation import Cost, Usage, add_usage
from governor.core.wire.codec import decode, encode
from tests.story import Story

USAGE = Usage(input_tokens=120, output_tokens=0, cached_input_tokens=0)


def failed_planner(s: Story, cost: float) -> PlanFailed:
    plan_id = s.request()
    [event] = record.plan_failed(
        s.view,
        plan_id=plan_id,
        at=s.tick().now,
        failure_class="upstream",
        evidence=nothing_happened("claude:stream", "HTTP 200, error before content"),
        error="API Error: Overloaded",
        cost=Cost(cost, USAGE),
    )
    s.add([event])
    assert isinstance(event, PlanFailed)
    return event


def test_an_uncharged_planner_failure_and_a_proposal_both_reach_the_cost_ledger() -> None:
    s = Story(max_cost_usd=0.6)
    failed = failed_planner(s, 0.5)
    assert (failed.cost_usd, failed.usage) == (0.5, USAGE)
    assert s.view.consecutive_uncharged_plans == 1  # uncharged: not against a count of tries
    assert s.view.cost_usd == 0.5
    plan_id = s.request()
    s.tick().add(
        record.plan_proposed(
            s.view,
            plan_id=plan_id,
            at=s.now,
            decision="apply",
            rationale="r",
            work=[WorkSpec(key="a", title="A", objective="do a")],
            cost=Cost(0.25, USAGE),
        )
    )
    assert s.view.cost_usd == 0.75
    decision = s.decision()
    assert (decision.status, decision.exhausted) == ("budget_exhausted", "cost")
    assert "cumulative cost $0.75" in (decision.reason or "")


def test_an_invalid_proposal_keeps_the_cost_of_the_call_that_made_it() -> None:
    s = Story()
    plan_id = s.request()
    [event] = record.plan_proposed(
        s.view,
        plan_id=plan_id,
        at=s.tick().now,
        decision="complete",  # a first plan that says complete is refused (SPEC §11.3)
        rationale="r",
        work=[],
        cost=Cost(0.1, None),
    )
    assert isinstance(event, PlanFailed)
    assert event.cost_usd == 0.1


def test_the_fields_round_trip_and_old_events_are_written_as_before() -> None:
    s = Story()
    failed = failed_planner(s, 0.002)
    assert decode(encode(failed)) == failed
    assert b'"usage":{"input_tokens":120,"output_tokens":0,"cached_input_tokens":0}' in encode(
        failed
    )
    bare = failed.model_copy(update={"cost_usd": None, "usage": None})
    assert b"cost_usd" not in encode(bare)
    assert b"usage" not in encode(bare)
    assert project([*s.events[:-1], bare]).cost_usd == 0.0


def test_a_hostile_reported_cost_is_made_storable() -> None:
    assert Cost(float("nan"), None).fields()["cost_usd"] is None
    assert Cost(-1.0, None).fields()["cost_usd"] is None
    assert Cost(float("inf"), None).fields()["cost_usd"] == 1_000_000_000


def test_usage_adds_up_over_tries() -> None:
    assert add_usage(None, USAGE) == USAGE
    total = add_usage(USAGE, Usage(input_tokens=5, output_tokens=3))
    assert total == Usage(input_tokens=125, output_tokens=3, cached_input_tokens=0)
    assert add_usage(Usage(), Usage()) == Usage()


def test_a_completion_with_a_cost_counts_it_and_governor_writes_none() -> None:
    s = Story()
    s.plan("a")
    s.succeed("p1-a")
    plan_id = s.propose()
    [completed] = record.apply_plan(s.view, plan_id=plan_id, at=s.tick().now)
    assert completed.type == "plan.completed"
    assert b"cost_usd" not in encode(completed)  # the call's cost is on its plan.proposed
    costly = completed.model_copy(update={"cost_usd": 0.3})
    assert project([*s.events, costly]).cost_usd == project(s.events).cost_usd + 0.3
