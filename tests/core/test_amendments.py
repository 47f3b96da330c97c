"""SPEC §11.2-11.6, one table each: terminal goals, a first 'complete', replanning needs
attempts, milestones within replans, cancelled items hold no slot."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import orjson
import pytest

from governor.analysis.grid import candidates, split_grid
from governor.core import record, record_head, record_work, verbs
from governor.core.event_fields import WorkSpec
from governor.core.events import Event, PlanFailed, PlanProposed
from governor.core.history import check_history
from governor.core.policy import Policy, completion_problem
from governor.core.policy_input import policy_from, with_overrides
from governor.core.proposal import FIRST_COMPLETE
from governor.core.wire.codec import LineDecoder, decode, decode_upgraded, encode
from governor.errors import BudgetExhaustedError, CommandRefusedError, HistoryError, PolicyError
from governor.workflow.briefs import planner_prompt
from governor.workflow.reply import parse_planner_reply
from tests.story import Story

# --- §11.2 terminal goals ----------------------------------------------------------------


def _completed() -> Story:
    s = Story()
    s.plan("a")
    s.succeed("p1-a")
    s.apply(s.propose())
    return s


def _cancelled() -> Story:
    s = Story()
    s.plan("a")
    s.start("p1-a")
    return s.op("cancel_goal", reason="enough")


ENDS = {"plan.completed": _completed, "goal.cancelled": _cancelled}

AFTER_THE_END: dict[str, Callable[[Story], list[Event]]] = {
    "a plan request": lambda s: record.request_plan(
        s.view, plan_id="p9", trigger="replan", at=s.now
    ),
    "an attempt start": lambda s: record_work.start_attempt(
        s.view, work_id="p1-a", run_id="r9", at=s.now
    ),
    "a resume": lambda s: verbs.resume_goal(s.view, reason="go", at=s.now, actor="op"),
    "a raise": lambda s: verbs.raise_budget(
        s.view, ledger="replans", to=9, reason="more", at=s.now, actor="op"
    ),
    "a reopen": lambda s: verbs.reopen_work(s.view, work_id="p1-a", at=s.now, actor="op"),
    "a cancel": lambda s: verbs.cancel_goal(s.view, at=s.now, actor="op"),
    "an abandon": lambda s: verbs.abandon_attempt(
        s.view, work_id="p1-a", reason="gone", at=s.now, actor="op"
    ),
}


@pytest.mark.parametrize("end", ENDS, ids=lambda e: f"after {e}")
@pytest.mark.parametrize("verb", AFTER_THE_END, ids=lambda v: f"{v} is refused")
def test_nothing_is_recorded_after_the_end(end: str, verb: str) -> None:
    story = ENDS[end]()
    with pytest.raises(CommandRefusedError, match=r"the goal is cancelled|the goal has succeeded"):
        AFTER_THE_END[verb](story)


@pytest.mark.parametrize("end", ENDS, ids=lambda e: f"after {e}")
def test_the_validator_refuses_any_event_after_the_end_naming_its_line(end: str) -> None:
    story = ENDS[end]()
    last = story.events[-1]
    extra = last.model_copy(update={"seq": last.seq + 1, "at": last.at + timedelta(seconds=1)})
    lines = list(enumerate([*story.events, extra], start=1))
    with pytest.raises(HistoryError) as caught:
        list(check_history(lines))
    assert caught.value.line == len(lines)
    assert f"after {end}: the goal has ended" in caught.value.detail


# --- §11.3 a first plan that says complete ------------------------------------------------


def _first_complete(s: Story) -> list[Event]:
    plan_id = s.request()
    return record.plan_proposed(
        s.view, plan_id=plan_id, at=s.now, decision="complete", rationale="done", work=[]
    )


def test_a_first_complete_is_recorded_as_a_charged_failure_whose_error_reaches_the_planner() -> (
    None
):
    s = Story()
    events = _first_complete(s)
    (failed,) = events
    assert failed.type == "plan.failed"
    assert failed.failure_class is None  # charged
    assert failed.error == f"the proposal is invalid: {FIRST_COMPLETE}"
    s.add(events)
    d = s.decision()
    assert (d.status, d.next_action, d.trigger, d.rule) == ("ready", "plan", "retry", "goal.3")
    assert d.ledger.replans.charged == 1
    s.request("retry")
    assert f"Plan p1 failed: the proposal is invalid: {FIRST_COMPLETE}" in planner_prompt(
        s.view, "retry", s.now
    )


def _recorded_first_complete() -> tuple[Story, str]:
    """A history recorded before §11.3 (or imported): its first proposal says ``complete``."""
    s = Story()
    plan_id = s.request()
    s.tick().add(
        [
            PlanProposed(
                **record_head.event_head(s.view, s.now, "governor"),
                plan_id=plan_id,
                decision="complete",
                rationale="nothing to do",
                work=(),
            )
        ]
    )
    return s, plan_id


@pytest.mark.parametrize("actor", ["governor", "operator:alice"], ids=["auto", "approve"])
def test_a_recorded_first_complete_is_never_applied(actor: str) -> None:
    """SPEC §11.3: a first ``complete`` is not a valid proposal. A recorded one stays
    readable, but applying it (the runner's auto-apply, ``plan approve``) used to record
    ``plan.completed``: the goal succeeded before any work was done."""
    s, plan_id = _recorded_first_complete()
    with pytest.raises(CommandRefusedError, match=FIRST_COMPLETE):
        record.apply_plan(s.view, plan_id=plan_id, at=s.now, actor=actor)


def _planned_and_done() -> Story:
    s = Story()
    s.plan("a")
    return s.succeed("p1-a")


def _with_failure(s: Story) -> Story:
    s.plan_fails()
    return s


REPLIES = {
    "complete before any plan was applied is refused": (Story, False),
    "complete after a plan was applied is a proposal": (_planned_and_done, True),
    "complete after every earlier plan failed is still refused": (
        lambda: _with_failure(Story()),
        False,
    ),
}


@pytest.mark.parametrize(("build", "ok"), REPLIES.values(), ids=REPLIES.keys())
def test_a_planner_reply_of_complete(build: Callable[[], Story], ok: bool) -> None:
    answer = parse_planner_reply('{"decision": "complete", "rationale": "done"}', build().view)
    if ok:
        assert not isinstance(answer, list)
    else:
        assert answer == [FIRST_COMPLETE]


# --- §11.4 replanning needs attempts ------------------------------------------------------


def _exhausted_item(**policy: Any) -> Story:
    s = Story(max_attempts=1, **policy)
    s.plan("a")
    return s.attempt("p1-a")


def _accepted(**policy: Any) -> Story:
    s = Story(**policy)
    s.plan("a")
    return s.succeed("p1-a")


def _charged_plan_failure(**policy: Any) -> Story:
    s = Story(**policy)
    s.plan("a")
    s.succeed("p1-a")
    s.plan_fails()  # the milestone plan failed, charged: retry
    return s


CASES = {
    "11: a replan with attempts left plans": (_exhausted_item, "ready", "goal.11", None),
    "11: a replan without attempts stops on total_attempts": (
        lambda: _exhausted_item(max_total_attempts=1),
        "budget_exhausted",
        "goal.11",
        "total_attempts",
    ),
    "11: total_attempts is named before replans when both are spent": (
        lambda: _exhausted_item(max_total_attempts=1, max_replans=1),
        "budget_exhausted",
        "goal.11",
        "total_attempts",
    ),
    "6: a milestone without attempts stops on total_attempts": (
        lambda: _accepted(max_total_attempts=1),
        "budget_exhausted",
        "goal.6",
        "total_attempts",
    ),
    "3: a retry of a failed plan needs no attempts": (
        lambda: _charged_plan_failure(max_total_attempts=1),
        "ready",
        "goal.3",
        None,
    ),
    "5: a first plan needs no attempts": (
        lambda: Story(max_total_attempts=0),
        "ready",
        "goal.5",
        None,
    ),
}


@pytest.mark.parametrize(("build", "status", "rule", "exhausted"), CASES.values(), ids=CASES.keys())
def test_replanning_needs_attempts(
    build: Callable[[], Story], status: str, rule: str, exhausted: str | None
) -> None:
    d = build().decision()
    assert (d.status, d.rule, d.exhausted) == (status, rule, exhausted), d.reason


def test_a_replan_request_without_attempts_creates_nothing() -> None:
    s = _exhausted_item(max_total_attempts=1)
    with pytest.raises(BudgetExhaustedError) as caught:
        record.request_plan(s.view, plan_id="p2", trigger="replan", at=s.now)
    assert caught.value.ledger == "total_attempts"


# --- §11.5 milestones within replans ------------------------------------------------------

POLICIES: dict[str, tuple[dict[str, Any], int | str]] = {
    "the default is 4": ({}, 4),
    "an omitted value follows fewer replans down, one below them (SPEC §12.1)": (
        {"max_replans": 3},
        2,
    ),
    "an omitted value stays 4 with more replans": ({"max_replans": 9}, 4),
    "equal to the replans is a value a recorded policy may hold": (
        {"max_replans": 3, "max_milestones": 3},
        3,
    ),
    "zero milestones with zero replans": ({"max_replans": 0}, 0),
    "an omitted value follows replans written as a whole float": ({"max_replans": 3.0}, 2),
    "above the replans is refused with SPEC §12.1's line": (
        {"max_replans": 2, "max_milestones": 3},
        "max_milestones 3 leaves no planner call for the completion review under "
        "max_replans 2: use max_milestones ≤ 1 or max_replans ≥ 4",
    ),
    "above the default replans is refused": ({"max_milestones": 10}, "leaves no planner call"),
}


@pytest.mark.parametrize(("values", "want"), POLICIES.values(), ids=POLICIES.keys())
def test_milestones_within_replans(values: dict[str, Any], want: int | str) -> None:
    if isinstance(want, str):
        with pytest.raises(PolicyError, match=re.escape(want)):
            policy_from(values)
        with pytest.raises(ValueError, match=re.escape(want)):
            Policy(**values)
    else:
        assert policy_from(values).max_milestones == want


OVERRIDES: dict[str, tuple[dict[str, Any], int | None]] = {
    "lowering the replans lowers the milestones below them": ({"max_replans": 2}, 1),
    "lowering them written as a whole float too": ({"max_replans": 2.0}, 1),
    "lowering the replans a little keeps the milestones below them": ({"max_replans": 4}, 3),
    "raising the replans keeps them": ({"max_replans": 9}, 4),
    "naming both keeps both": ({"max_replans": 9, "max_milestones": 7}, 7),
    "naming milestones above the replans is refused": ({"max_milestones": 6}, None),
}


@pytest.mark.parametrize(("overrides", "want"), OVERRIDES.values(), ids=OVERRIDES.keys())
def test_overrides_keep_milestones_within_replans(
    overrides: dict[str, Any], want: int | None
) -> None:
    if want is None:
        with pytest.raises(PolicyError, match="leaves no planner call"):
            with_overrides(Policy(), overrides)
    else:
        assert with_overrides(Policy(), overrides).max_milestones == want


RAISES: dict[str, tuple[dict[str, Any], int, int]] = {
    "a default max_milestones follows the replans up": ({"max_replans": 2}, 4, 3),
    "up to its ceiling of 4": ({"max_replans": 3}, 9, 4),
    "a recorded policy without room follows them too": ({"max_replans": 1}, 3, 2),
    "a max_milestones named below the default stays": (
        {"max_replans": 4, "max_milestones": 1},
        8,
        1,
    ),
}


@pytest.mark.parametrize(("policy", "to", "milestones"), RAISES.values(), ids=RAISES.keys())
def test_raising_the_replans_keeps_the_invariant(
    policy: dict[str, Any], to: int, milestones: int
) -> None:
    """SPEC §12.1: ``budget.raised`` on replans keeps the rule; raising them also lifts a
    default ``max_milestones`` (one equal to ``min(4, max_replans - 1)``)."""
    s = Story(**policy)
    s.op("raise_budget", ledger="replans", to=to, reason="more")
    assert (s.policy.max_replans, s.policy.max_milestones) == (to, milestones)
    assert completion_problem(s.policy) is None


def test_a_tune_grid_lists_the_policies_without_a_completion_call_as_infeasible() -> None:
    """SPEC §12.1: a grid point that leaves no planner call for the completion review is
    listed as infeasible (with why), never estimated."""
    feasible, infeasible = split_grid({"max_replans": [1, 3], "max_milestones": [1, 2, 3]})
    assert feasible == [
        {"max_replans": 3, "max_milestones": 1},
        {"max_replans": 3, "max_milestones": 2},
    ]
    assert infeasible == [
        (
            {"max_replans": 1, "max_milestones": 1},
            "max_replans 1 leaves no planner call for the completion review: use max_replans ≥ 2",
        ),
        (
            {"max_replans": 1, "max_milestones": 2},
            "max_replans 1 leaves no planner call for the completion review: use max_replans ≥ 3",
        ),
        (
            {"max_replans": 1, "max_milestones": 3},
            "max_replans 1 leaves no planner call for the completion review: use max_replans ≥ 4",
        ),
        (
            {"max_replans": 3, "max_milestones": 3},
            "max_milestones 3 leaves no planner call for the completion review under "
            "max_replans 3: use max_milestones ≤ 2 or max_replans ≥ 4",
        ),
    ]
    feasible, infeasible = split_grid({"max_replans": list(range(0, 7))})
    assert [o["max_replans"] for o in feasible] == [2, 3, 4, 5, 6]
    assert [o["max_replans"] for o, _ in infeasible] == [0, 1]
    assert candidates({"max_replans": [1, 2]}) == [{"max_replans": 2}]
    with pytest.raises(PolicyError, match="needs a --grid max_replans"):
        candidates({"max_milestones": [1, 2]})
    with pytest.raises(PolicyError, match="no policy of the grid can succeed"):
        candidates({"max_replans": [1], "max_milestones": [5]})


def test_max_milestones_counts_only_plans_that_completed() -> None:
    """SPEC §5 ``max_milestones``: plans of decision ``apply`` that *complete*. A plan whose
    items were all cancelled achieved nothing (decision record 0002): it uses no milestone,
    so the next milestone plan may still propose work."""
    s = Story(max_attempts=1, max_milestones=2)
    s.plan("a")
    s.attempt("p1-a")  # p1-a exhausted: the goal replans around it
    s.plan("b")
    s.op("cancel_work", work_id="p1-a", reason="not needed after all")
    assert s.view.milestones == 0
    s.succeed("p2-b")
    assert s.view.milestones == 1
    d = s.decision()
    assert (d.status, d.next_action, d.trigger) == ("ready", "plan", "milestone")
    plan_id = s.request("milestone")
    work = [WorkSpec(key="c", title="C", objective="do c")]
    (event,) = record.plan_proposed(
        s.view, plan_id=plan_id, at=s.now, decision="apply", rationale="next", work=work
    )
    assert event.type == "plan.proposed"


def _propose(s: Story, trigger: str, decision: str) -> PlanProposed | PlanFailed:
    plan_id = s.request(trigger)  # type: ignore[arg-type]
    work = [WorkSpec(key=f"k{s.view.plans_used}", title="K", objective="do k")]
    (event,) = record.plan_proposed(
        s.view,
        plan_id=plan_id,
        at=s.now,
        decision=decision,
        rationale="r",
        work=work if decision == "apply" else [],
    )
    assert isinstance(event, PlanProposed | PlanFailed)
    return event


def test_only_the_milestone_prompt_must_say_complete() -> None:
    """SPEC §5: "once max_milestones plans of decision apply have completed, the milestone
    prompt allows only complete". With max_milestones 0 the first plan (no milestone
    prompt) still applies and the next one completes; a first 'complete' was refused
    (SPEC §11.3) and so was 'apply', so such a goal could never succeed."""
    s = Story(max_replans=3, max_milestones=0)
    first = _propose(s, "initial", "apply")
    assert first.type == "plan.proposed"
    assert "used all its milestones" not in planner_prompt(s.view, "initial", s.now)
    s.add([first]).apply(first.plan_id)
    s.succeed(f"{first.plan_id}-k1")
    assert s.decision().trigger == "milestone"
    assert "used all its milestones" in planner_prompt(s.view, "milestone", s.now)
    refused = _propose(s, "milestone", "apply")
    assert isinstance(refused, PlanFailed)
    assert "the decision must be 'complete'" in (refused.error or "")
    s.add([refused])
    done = _propose(s, "retry", "complete")
    assert done.type == "plan.proposed"
    s.add([done]).apply(done.plan_id)
    assert s.decision().status == "succeeded"


def test_a_replan_around_exhausted_items_is_no_milestone_prompt() -> None:
    s = Story(max_replans=3, max_milestones=0, max_attempts=1)
    first = _propose(s, "initial", "apply")
    s.add([first]).apply(first.plan_id)
    s.attempt(f"{first.plan_id}-k1")
    assert s.decision().trigger == "replan"
    assert _propose(s, "replan", "apply").type == "plan.proposed"


def _round_one_goal_created() -> bytes:
    """A goal.created as round 1 wrote it: the whole policy, max_milestones 10 over 5."""
    line = orjson.loads(encode(Story().events[0]))
    line["policy"] = {**line["policy"], "max_replans": 5, "max_milestones": 10}
    return orjson.dumps(line)


def test_a_round_one_policy_is_read_lowered_with_a_note() -> None:
    decoder = LineDecoder("old.jsonl")
    event = decoder.decode(_round_one_goal_created(), 1)
    assert event.type == "goal.created"
    assert (event.policy.max_replans, event.policy.max_milestones) == (5, 5)
    assert decoder.notes == [
        "line 1: goal.created: max_milestones 10 is above max_replans 5, which a policy may "
        "no longer be (SPEC §11.5); read as 5"
    ]


def test_a_round_one_row_of_a_store_is_read_lowered() -> None:
    body = _round_one_goal_created()
    with pytest.raises(ValueError, match="leaves no planner call"):
        decode(body)
    upgraded = decode_upgraded(body)
    assert upgraded is not None
    assert upgraded.type == "goal.created"
    assert upgraded.policy.max_milestones == 5


# --- §11.6 a cancelled item never holds a parallel slot -----------------------------------


def _cancelled_while_running(**policy: Any) -> Story:
    """An imported history: an item cancelled while its attempt never finished."""
    s = Story(**policy)
    s.plan("a", "b")
    s.start("p1-a")
    s.tick().add([_cancel(s, "p1-a")])
    return s


def _cancel(s: Story, work_id: str) -> Event:
    # work.cancelled of a running item: the verb refuses it, an imported history may hold it
    from governor.core.work_events import WorkCancelled

    return WorkCancelled(
        goal_id="g", seq=s.view.seq + 1, at=s.now, actor="operator:test", work_id=work_id
    )


SLOTS = {
    "the other item runs": (_cancelled_while_running, ("ready", "run", ("p1-b",))),
    "reopened, it takes its slot back and its attempt in flight goes on": (
        lambda: _cancelled_while_running().op("reopen_work", work_id="p1-a"),
        ("running", "wait", ("p1-a",)),
    ),
}


@pytest.mark.parametrize(("build", "want"), SLOTS.values(), ids=SLOTS.keys())
def test_a_cancelled_item_holds_no_slot(
    build: Callable[[], Story], want: tuple[str, str, tuple[str, ...]]
) -> None:
    s = build()
    d = s.decision()
    assert (d.status, d.next_action, d.work_ids) == want, d.reason
    assert s.view.running_items == (0 if want[1] == "run" else 1)


def test_proposals_of_work_are_unchanged_by_the_amendments() -> None:
    s = Story()
    plan_id = s.request()
    (proposed,) = record.plan_proposed(
        s.view,
        plan_id=plan_id,
        at=s.now,
        decision="apply",
        rationale="r",
        work=[WorkSpec(key="a", title="A", objective="a")],
    )
    assert proposed.type == "plan.proposed"


# --- §12.2 milestone wording, §12.3 which budget is named -----------------------------------


def _items(*outcomes: str) -> Story:
    """A plan of one item per outcome: ``accepted``, ``cancelled``, ``open`` (never run)."""
    keys = [chr(ord("a") + i) for i in range(len(outcomes))]
    s = Story(max_attempts=1)
    s.plan(*keys)
    for key, outcome in zip(keys, outcomes, strict=True):
        if outcome == "accepted":
            s.succeed(f"p1-{key}")
        elif outcome == "cancelled":
            s.op("cancel_work", work_id=f"p1-{key}")
    return s


MILESTONES: dict[str, tuple[tuple[str, ...], str, int]] = {
    "every item accepted is a milestone": (("accepted", "accepted"), "goal.6", 1),
    "accepted or cancelled, one at least accepted, is a milestone": (
        ("accepted", "cancelled"),
        "goal.6",
        1,
    ),
    "every item cancelled is none: nothing was achieved": (
        ("cancelled", "cancelled"),
        "goal.12",
        0,
    ),
    "an item neither accepted nor cancelled is none": (("accepted", "open"), "goal.8", 0),
}


@pytest.mark.parametrize(("outcomes", "rule", "milestones"), MILESTONES.values(), ids=MILESTONES)
def test_a_milestone_is_every_item_accepted_or_cancelled_one_at_least_accepted(
    outcomes: tuple[str, ...], rule: str, milestones: int
) -> None:
    """SPEC §12.2 (settles §11.6): "every item of the active plan settled" means each item
    accepted or cancelled, at least one accepted — for goal rule 6 and for
    ``max_milestones`` alike."""
    s = _items(*outcomes)
    d = s.decision()
    assert d.rule == rule, d.reason
    assert (d.trigger == "milestone") == (rule == "goal.6")
    assert s.view.milestones == milestones


def _replans_spent(*, accepted: bool) -> Story:
    """Two charged replans (a failed plan, then one applied) and the goal's one attempt spent
    by its item: accepted (a milestone is due) or failed (a replan is due)."""
    s = Story(max_replans=2, max_total_attempts=1, max_attempts=1)
    s.plan_fails()
    s.plan("a")
    if accepted:
        s.succeed("p2-a")
    else:
        s.attempt("p2-a")
    return s


@pytest.mark.parametrize("accepted", [True, False], ids=["at a milestone", "to replan"])
def test_with_replans_and_goal_attempts_both_spent_the_stop_names_total_attempts(
    accepted: bool,
) -> None:
    """SPEC §12.3: when a replan is needed and both charged replans and charged goal
    attempts are spent, the stop names ``total_attempts`` (§11.4 first)."""
    s = _replans_spent(accepted=accepted)
    assert s.view.plans_used - s.view.plans_uncharged == s.policy.max_replans
    d = s.decision()
    assert (d.status, d.exhausted) == ("budget_exhausted", "total_attempts"), d.reason
    assert d.rule == ("goal.6" if accepted else "goal.11")
