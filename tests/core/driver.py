"""A random driver for property tests: it follows the core's decisions like a runner would.

Every choice (planner outcome, worker outcome, a crash, an operator verb) comes from a
``choose(options)`` function, so hypothesis can shrink failing runs to short stories.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TypeVar

from governor.core import record, record_work, verbs
from governor.core.decision import Decision
from governor.core.event_fields import WorkSpec
from governor.core.evidence import UNKNOWN, Evidence, nothing_happened
from tests.story import Story

T = TypeVar("T")
Choose = Callable[[Sequence[T]], T]

ABSENT = nothing_happened("driver:probe", "nothing happened")
OBSERVED = Evidence(effects="observed", output="observed", source="driver:probe", ref="tool")

FAILURES: tuple[tuple[str | None, Evidence | None], ...] = (
    (None, UNKNOWN),
    ("upstream", ABSENT),
    ("upstream", UNKNOWN),
    ("upstream", OBSERVED),
    ("environment", ABSENT),
    ("decision", None),
)


def plan_outcome(
    s: Story, plan_id: str, d_trigger: str | None, choose: Choose, *, allow_success: bool
) -> None:
    options = ["propose", "propose", "fail"] + (["complete"] if d_trigger == "milestone" else [])
    kind = choose(options if allow_success else ["fail"])
    if kind == "fail":
        cls, evidence = choose(FAILURES)
        retry_after = choose([None, None, 120.0])
        s.tick(choose([1, 5])).add(
            record.plan_failed(
                s.view,
                plan_id=plan_id,
                at=s.now,
                failure_class=cls,
                evidence=evidence,  # type: ignore[arg-type]
                error="HTTP/1.1 503" if cls == "upstream" else "boom",
                retry_after_s=retry_after,
            )
        )
        return
    keys = [] if kind == "complete" else [f"k{i}" for i in range(choose([1, 2, 3]))]
    work = [
        WorkSpec(
            key=k, title=k, objective=k, depends_on=tuple(keys[:i][-1:] if choose([0, 1]) else ())
        )
        for i, k in enumerate(keys)
    ]
    s.tick().add(
        record.plan_proposed(
            s.view,
            plan_id=plan_id,
            at=s.now,
            decision="apply" if work else "complete",
            rationale="r",
            work=work,
        )
    )


def attempt_outcome(s: Story, work_id: str, choose: Choose, *, allow_success: bool) -> None:
    item = s.view.work[work_id]
    options = ["succeed", "succeed", "fail", "timeout", "crash"]
    kind = choose(options if allow_success else options[2:])
    if kind == "crash":
        s._runs += 1
        s.tick().add(
            record_work.continue_attempt(s.view, work_id=work_id, run_id=f"r{s._runs}", at=s.now)
        )
        return
    if kind == "succeed":
        s.finish(work_id, "succeeded")
    elif kind == "timeout":
        s.finish(work_id, "timed_out")
    else:
        cls, evidence = choose(FAILURES)
        s.finish(
            work_id,
            "failed",
            failure_class=cls,
            evidence=evidence or UNKNOWN,  # type: ignore[arg-type]
            retry_after_s=choose([None, 300.0]),
        )
    del item


def operator_step(s: Story, d: Decision, choose: Choose) -> bool:
    """Try one operator verb on a stopped goal; False when the operator gives up."""
    verb = choose(["give_up", "resume", "retry", "raise", "cancel"])
    try:
        if verb == "resume":
            s.op("resume_goal", reason="fixed it")
        elif verb == "cancel":
            s.op("cancel_goal", reason="enough")
        elif verb == "retry" and d.work_ids:
            s.op("retry_work", work_id=d.work_ids[0], reason="try again")
        elif verb == "raise":
            ledger = d.exhausted or "replans"
            if ledger == "attempts":
                return False
            current = verbs.current_limit(s.view, ledger)  # type: ignore[arg-type]
            s.op("raise_budget", ledger=ledger, to=(current or 0) + 1, reason="more")
        else:
            return False
    except Exception:
        return False
    return True


def drive(
    s: Story,
    choose: Choose,
    *,
    max_steps: int = 150,
    operator: bool = False,
    allow_success: bool = True,
    on_decision: Callable[[Story, Decision], None] | None = None,
) -> Decision:
    """Follow the decisions until the goal stops (or max_steps); returns the last decision."""
    operator_turns = 3 if operator else 0
    d = s.decision()
    for _ in range(max_steps):
        d = s.decision()
        if on_decision:
            on_decision(s, d)
        if d.is_stopped:
            if (
                operator_turns
                and d.status != "succeeded"
                and d.status != "cancelled"
                and operator_step(s, d, choose)
            ):
                operator_turns -= 1
                continue
            return d
        step(s, d, choose, allow_success=allow_success)
    return d


def step(s: Story, d: Decision, choose: Choose, *, allow_success: bool) -> None:
    match d.next_action:
        case "plan":
            s._plans += 1
            plan_id = f"p{s._plans}"
            s.tick().add(
                record.request_plan(
                    s.view, plan_id=plan_id, trigger=d.trigger or "initial", at=s.now
                )
            )
            plan_outcome(s, plan_id, d.trigger, choose, allow_success=allow_success)
        case "apply":
            assert d.plan_id is not None
            s.tick().add(record.apply_plan(s.view, plan_id=d.plan_id, at=s.now))
        case "review_plan":
            assert d.plan_id is not None
            if choose(["approve", "reject"]) == "reject":
                s.op("reject_plan", plan_id=d.plan_id, reason="not like this")
            else:
                s.tick().add(
                    record.apply_plan(s.view, plan_id=d.plan_id, at=s.now, actor="operator:test")
                )
        case "run":
            for work_id in d.work_ids:
                s.start(work_id)
                attempt_outcome(s, work_id, choose, allow_success=allow_success)
        case "accept" | "review_work":
            for work_id in d.work_ids:
                verb = (
                    "accept"
                    if d.next_action == "accept"
                    else choose(["accept", "cancel", "reopen"])
                )
                if verb == "accept":
                    s.accept(work_id)
                elif verb == "cancel":
                    s.op("cancel_work", work_id=work_id)
                else:
                    s.op("accept_work", work_id=work_id).op("reopen_work", work_id=work_id)
        case "wait":
            running = [w for w, item in s.view.work.items() if item.running]
            if running and choose(["finish", "finish", "abandon"]) == "abandon":
                s.op("abandon_attempt", work_id=running[0], reason="operator gave up on it")
            elif running:
                attempt_outcome(s, running[0], choose, allow_success=allow_success)
            elif s.view.latest_plan is not None and s.view.latest_plan.status == "requested":
                plan_outcome(
                    s, s.view.latest_plan.plan_id, None, choose, allow_success=allow_success
                )
            else:
                assert d.not_before is not None
                s.now = d.not_before + timedelta(seconds=choose([0, 1]))
        case _:
            raise AssertionError(f"unexpected action {d.next_action} in {d}")
