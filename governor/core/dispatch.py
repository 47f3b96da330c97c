"""Goal rules 8-12 (SPEC §6.2): running the active plan's items, waiting on them, replanning.

Rules (first match wins, after rules 1-7 of ``governor.core.goal_rules``):
    goal.8  dispatchable items and a free slot -> run (budget_exhausted at the total)
    goal.9  items running -> running/wait; items cooling down -> waiting/wait
    goal.10 an item stopped on environment, decision or the upstream bound -> blocked
    goal.11 items out of budget -> plan (replan)
    goal.12 fallback -> blocked on work: no legal progress action

Rule 8's head (``dispatch_head``) and rule 9's wait (``running_on``) are also taken
without the rules' context by ``governor.core.decide`` (one decision after every event).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from typing import Any, Final

from governor.core.decision import Action, Decision, Exhausted, Status, WorkDecision
from governor.core.goal_rules import Ctx
from governor.core.headroom import (
    total_attempts_left,
    total_attempts_remaining,
)
from governor.core.ledger import Ledger
from governor.core.text import stamp
from governor.core.view import GoalView

Head = tuple[Status, Action, str, None, None, Exhausted | None]
"""A decision's head as ``replay --json`` prints it: status, next action, reason,
blocked_on, not_before and exhausted (in ``Decision``'s order of these fields)."""


_RUNNABLE_OR_HELD: Final = frozenset({("ready", "run"), ("blocked", "retry")})


def _dispatch(ctx: Ctx) -> Decision | None:
    return dispatch_on(ctx.view, ctx.ledger, ctx.items, ctx.statuses)


def dispatch_on(
    view: GoalView, ledger: Ledger, items: tuple[WorkDecision, ...], statuses: frozenset[str]
) -> Decision | None:
    """Rule 8 (``_dispatch``) on its inputs; the decision is made whole (``Ctx.out``)."""
    taken = dispatch_head(view, statuses, runnable, items)
    if taken is None:
        return None
    (status, action, why, _, _, exhausted), ids = taken
    return Decision(
        status=status,
        next_action=action,
        reason=why,
        rule="goal.8",
        ledger=ledger,
        exhausted=exhausted,
        work_ids=ids,
        items=items,
    )


def runnable(items: tuple[WorkDecision, ...], held: bool, most: int | None = None) -> list[str]:
    """The items rule 8 may run, in order: ready ones, and blocked ones to retry when
    ``held`` (``retry_blocked``); the first ``most`` of them (every one: ``None``). Rule 8
    offers only as many runs as there are free slots, so it reads a large plan's items only
    until it has them."""
    if held:
        ids = (d.work_id for d in items if (d.status, d.next_action) in _RUNNABLE_OR_HELD)
    else:
        ids = (d.work_id for d in items if d.status == "ready" and d.next_action == "run")
    return list(islice(ids, most))


def dispatch_head(
    view: GoalView,
    statuses: frozenset[str],
    runnable: Callable[[Any, bool, int], list[str]],
    items: Any,
    kept: dict[tuple[bool, int], tuple[Head, tuple[str, ...]]] | None = None,
) -> tuple[Head, tuple[str, ...]] | None:
    """Rule 8 on its inputs: the decision's head (``Head``) and its work ids.
    ``runnable(items, held, most)`` lists the first ``most`` items it may run
    (``runnable``, or a scan the lean steps kept); ``kept`` holds the runs offered from those same items, by
    ``retry_blocked`` and how many (a scan's ``runs``)."""
    policy = view.policy
    free = policy.max_parallel_work - view.running_items
    held = policy.retry_blocked
    if free <= 0 or not ("ready" in statuses or (held and "blocked" in statuses)):
        return None
    ready = runnable(items, held, free)  # no more than the free slots can take
    if not ready:
        return None
    if not total_attempts_left(view):
        why = (
            f"the goal's charged attempts are spent ({view.charged_attempts} of "
            f"{policy.max_total_attempts})"
        )
        return ("budget_exhausted", "none", why, None, None, "total_attempts"), ()
    # never offer more runs than the goal's total budget can start
    most = min(free, total_attempts_remaining(view))
    if kept is not None and (offered := kept.get((held, most))) is not None:
        return offered
    ids = tuple(ready[:most])
    run: tuple[Head, tuple[str, ...]] = (
        ("ready", "run", f"run {', '.join(ids)}", None, None, None),
        ids,
    )
    if kept is not None:
        kept[held, most] = run
    return run


def running_on(ledger: Ledger, items: tuple[WorkDecision, ...]) -> Decision:
    """Rule 9 with items running (``_in_flight``): wait on them."""
    running = running_ids(items)
    why = f"{', '.join(running)} running"
    return Decision(
        status="running",
        next_action="wait",
        reason=why,
        rule="goal.9",
        ledger=ledger,
        work_ids=running,
        items=items,
    )


def running_ids(items: tuple[WorkDecision, ...]) -> tuple[str, ...]:
    return tuple([d.work_id for d in items if d.status == "running"])


def _in_flight(ctx: Ctx) -> Decision | None:
    if "running" in ctx.statuses:
        return running_on(ctx.ledger, ctx.items)
    if "waiting" not in ctx.statuses:
        return None
    # the first item of the earliest cooldown
    first, until = None, None
    for d in ctx.items:
        if (
            d.status == "waiting"
            and (when := d.not_before) is not None
            and (until is None or when < until)
        ):
            first, until = d, when
    if first is None or until is None:
        return None
    why = f"{first.work_id} is waiting on an outside service until {stamp(until)}"
    return ctx.out(
        "waiting",
        "wait",
        why,
        "goal.9",
        blocked_on="upstream",
        not_before=until,
        work_ids=(first.work_id,),
    )


def _stopped_item(ctx: Ctx) -> Decision | None:
    if "blocked" not in ctx.statuses:
        return None
    for d in ctx.items:
        if (d.status, d.next_action) == ("blocked", "none") and d.blocked_on != "work":
            why = f"{d.work_id}: {d.reason}"
            return ctx.out(
                "blocked", "none", why, "goal.10", blocked_on=d.blocked_on, work_ids=(d.work_id,)
            )
    return None


def _replan(ctx: Ctx) -> Decision | None:
    if "budget_exhausted" not in ctx.statuses:
        return None
    stopped = [d for d in ctx.items if d.status == "budget_exhausted"]
    if not stopped:
        return None
    spent = [d.work_id for d in stopped if d.exhausted != "same_failures"]
    same = [d.work_id for d in stopped if d.exhausted == "same_failures"]
    whys = []
    if spent:
        whose = "its" if len(spent) == 1 else "their"
        limits = sorted({ctx.view.work[w].max_attempts for w in spent})
        # SPEC §6.1 rule 9's words for every N, "1 attempts" too (``work.exhausted_its``)
        what = f"{limits[0]} attempts" if len(limits) == 1 else "attempts"
        whys.append(f"{', '.join(spent)} exhausted {whose} {what}")
    for work_id in same:  # SPEC §12.10: more tries would not help it
        n = ctx.view.work[work_id].same_failures
        whys.append(f"{work_id} failed the same way {n} times in a row")
    return ctx.plan("replan", "; ".join(whys), "goal.11")


def _fallback(ctx: Ctx) -> Decision | None:
    view, hints = ctx.view, []
    held = [d.work_id for d in ctx.items if (d.status, d.next_action) == ("blocked", "retry")]
    if held:
        hints.append(f"{', '.join(held)} await an operator's retry (retry_blocked is off)")
    for d in ctx.items:
        dead = [
            w
            for w in view.work[d.work_id].spec.depends_on
            if w in view.work and view.work[w].cancelled
        ]
        if d.next_action == "wait_for_dependencies" and dead:
            hints.append(f"{d.work_id} waits for cancelled {', '.join(dead)}")
    why = "; ".join(["no legal progress action", *hints])
    return ctx.out("blocked", "none", why, "goal.12", blocked_on="work")


RULES_8_TO_12: Final[tuple[Callable[[Ctx], Decision | None], ...]] = (
    _dispatch,
    _in_flight,
    _stopped_item,
    _replan,
    _fallback,
)
"""Goal rules 8-12, in order."""
