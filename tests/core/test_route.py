"""``route``: every decision becomes exactly one action of a closed set, never by its rule id."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from governor.core.route import (
    Accept,
    Action,
    Apply,
    Ask,
    Dispatch,
    Plan,
    Stop,
    Wait,
    acts,
    name_of,
    route,
)
from tests.story import T0, Story, planned, proposed, requested, started


def _milestone() -> Story:
    s = planned("a", "b")
    return s.succeed("p1-a").succeed("p1-b")


def _cooling() -> Story:
    s = Story()
    s.plan("a")  # requested at 1 s, proposed at 2 s, applied at 3 s
    return s.attempt("p1-a", failure_class="upstream")  # started at 4 s, refused at 5 s


CASES: dict[str, tuple[Callable[[], Story], Action]] = {
    "a new goal plans (initial)": (Story, Plan("initial")),
    "a proposal is applied": (proposed, Apply("p1")),
    "a proposal under review stops for the operator": (
        lambda: proposed("a", auto_apply=False),
        Stop("review"),
    ),
    "ready work is dispatched": (lambda: planned("a", "b"), Dispatch(("p1-a",))),
    "parallel room dispatches several items": (
        lambda: planned("a", "b", max_parallel_work=2),
        Dispatch(("p1-a", "p1-b")),
    ),
    "a passing attempt is accepted": (
        lambda: planned("a", "b").attempt("p1-a", "succeeded"),
        Accept(("p1-a",)),
    ),
    "passing work under review stops for the operator": (
        lambda: planned("a", "b", accept_passing=False).attempt("p1-a", "succeeded"),
        Stop("review"),
    ),
    "a finished milestone plans (milestone)": (_milestone, Plan("milestone")),
    "a cooldown is waited out until not_before": (
        _cooling,
        Wait(T0 + timedelta(seconds=5 + 30)),  # the first back-off is 30 s
    ),
    "a plan in flight is continued": (requested, Plan(None, "p1")),
    "an attempt in flight is continued": (started, Dispatch(("p1-a",))),
    "a cancelled goal stops": (lambda: planned("a", "b").op("cancel_goal"), Stop("stopped")),
    "a planner environment stop stops": (
        lambda: _with(Story(), lambda s: s.plan_fails("environment")),
        Stop("stopped"),
    ),
    "a planner's question is put to a person": (
        lambda: _with(Story(), lambda s: s.plan_fails("decision", error="Which store?")),
        Ask(None, "the planner needs a person to decide: “Which store?”"),
    ),
    "a worker's question is put to a person": (
        lambda: planned("a").attempt("p1-a", failure_class="decision", error="Which database?"),
        Ask("p1-a", "p1-a: attempt 1 needs a person to decide: “Which database?”"),
    ),
}


def _with(story: Story, change: Callable[[Story], object]) -> Story:
    change(story)
    return story


@pytest.mark.parametrize(("build", "action"), CASES.values(), ids=CASES.keys())
def test_route(build: Callable[[], Story], action: Action) -> None:
    assert route(build().decision()) == action


@pytest.mark.parametrize(("build", "action"), CASES.values(), ids=CASES.keys())
def test_route_never_reads_the_rule(build: Callable[[], Story], action: Action) -> None:
    decision = build().decision()._replace(rule="no such rule")
    assert route(decision) == action


def test_the_action_set_is_closed_and_named_once() -> None:
    names = {name_of(a) for _, a in CASES.values()}
    assert names == {"plan", "apply", "dispatch", "accept", "wait", "ask", "stop"}
    assert [acts(a) for a in (Plan("initial"), Apply("p"), Dispatch(()), Accept(()))] == [True] * 4
    assert not acts(Wait(None))
    assert not acts(Stop("stopped"))
    assert not acts(Ask(None, "?"))  # the answer is an operator's event, not the driver's
