"""Goal rules (SPEC §6.2): one ordered table, ``GOAL_RULES``, whose rows are the code that runs.

Rules (first match wins; ``governor.core.rules.decide.goal_decision`` asks them in order):
    goal.1  cancelled -> cancelled; plan completed -> succeeded
    goal.2  cumulative runtime or cost over its limit -> budget_exhausted
    goal.3  latest plan proposed -> apply (or review_plan); rejected or failed charged
            -> plan (retry); requested without outcome -> running/wait
            (goal.same_failure: failed charged, and the planner's last max_same_failures
            charged failures share one signature -> blocked on work, SPEC §12.10)
    goal.4  latest plan failed uncharged and not resumed -> blocked on environment or
            decision; upstream: blocked at the consecutive bound, waiting before
            not_before, else fall through
    goal.5  no applied plan -> plan (initial)
    goal.6  every item of the active plan settled, one at least accepted -> plan (milestone)
    goal.7  items in review -> accept, or awaiting_review/review_work
    goal.8  dispatchable items and a free slot -> run (budget_exhausted at the total)
    goal.9  items running -> running/wait; items cooling down -> waiting/wait
    goal.10 an item stopped on environment, decision or the upstream bound -> blocked
    goal.11 items out of budget -> plan (replan)
    goal.12 fallback -> blocked on work: no legal progress action

Rules 6-12 read the active plan's item decisions (the work item rules of
``governor.core.rules.work``). A rule reads its context (``Ctx``: the view, the time, the
ledger, those item decisions and the statuses among them) and makes its decision with
``Ctx.out`` (by keyword) or ``Ctx.plan``. A rule that looks for items of one status
skips its scan when ``Ctx.statuses`` has none (the data the rules read, not a shortcut
around them).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from itertools import islice
from typing import Any, Final, NamedTuple

from governor.core.decision import Action, BlockedOn, Decision, Exhausted, Status, WorkDecision
from governor.core.event_fields import PlanTrigger
from governor.core.headroom import (
    attempts_left_for,
    cost_over,
    plan_records_left,
    repeats_itself,
    replans_left,
    runtime_over,
    total_attempts_left,
    total_attempts_remaining,
    uncharged_window_full,
)
from governor.core.ledger import Ledger
from governor.core.text import count, said, same_way, stamp
from governor.core.view import GoalView, PlanState


class Ctx(NamedTuple):
    view: GoalView
    now: datetime
    ledger: Ledger
    items: tuple[WorkDecision, ...]
    statuses: frozenset[str]
    """The statuses among ``items``: a rule skips its scan when none it looks for is there."""

    def out(
        self,
        status: Status,
        action: Action,
        reason: str,
        rule: str,
        *,
        blocked_on: BlockedOn | None = None,
        not_before: datetime | None = None,
        exhausted: Exhausted | None = None,
        trigger: PlanTrigger | None = None,
        plan_id: str | None = None,
        work_ids: tuple[str, ...] = (),
    ) -> Decision:
        return Decision(
            status=status,
            next_action=action,
            reason=reason,
            rule=rule,
            ledger=self.ledger,
            blocked_on=blocked_on,
            not_before=not_before,
            exhausted=exhausted,
            trigger=trigger,
            plan_id=plan_id,
            work_ids=work_ids,
            items=self.items,
        )

    def gate(  # noqa: PLR0917 - the two outcomes of a human gate
        self,
        auto: bool,
        action: Action,
        review: Action,
        what: str,
        then: str,
        rule: str,
        **extra: Any,
    ) -> Decision:
        """``ready/<action>`` when the policy lets governor go on alone (``auto_apply``,
        ``accept_passing``), else ``awaiting_review/<review>`` on the operator."""
        if auto:
            return self.out("ready", action, f"{what}; {then}", rule, **extra)
        why = f"{what}; awaiting an operator's review"
        return self.out("awaiting_review", review, why, rule, blocked_on="operator", **extra)

    def plan(self, trigger: PlanTrigger, why: str, rule: str) -> Decision:
        policy = self.view.policy
        if not attempts_left_for(self.view, trigger):
            why += (
                f", but the goal's charged attempts are spent ({self.view.charged_attempts} of "
                f"{policy.max_total_attempts}): a new plan would have none to run"
            )
            return self.out("budget_exhausted", "none", why, rule, exhausted="total_attempts")
        if not replans_left(self.view):
            why += f", but its charged plans are spent ({self.view.charged_replans} of {policy.max_replans})"
            return self.out("budget_exhausted", "none", why, rule, exhausted="replans")
        if not plan_records_left(self.view):
            why += f", but the goal holds {count(self.view.plans_used, 'plan')}, its limit of plan records"
            return self.out("budget_exhausted", "none", why, rule, exhausted="plan_records")
        used = f"charged {self.view.charged_replans} of {policy.max_replans} used"
        return self.out("ready", "plan", f"{why}; plan ({trigger}, {used})", rule, trigger=trigger)


def _over(ctx: Ctx) -> Decision | None:
    if ctx.view.cancelled:
        return ctx.out("cancelled", "none", "the goal was cancelled", "goal.1")
    if ctx.view.completed:
        return ctx.out("succeeded", "none", "the planner declared the goal complete", "goal.1")
    return None


def _limits(ctx: Ctx) -> Decision | None:
    view, policy = ctx.view, ctx.view.policy
    if runtime_over(view):
        why = f"cumulative runtime {view.runtime_s:.0f}s is over its limit of {policy.max_runtime_s:.0f}s"
        return ctx.out("budget_exhausted", "none", why, "goal.2", exhausted="runtime")
    if cost_over(view):
        why = (
            f"cumulative cost ${view.cost_usd:.2f} is over its limit of ${policy.max_cost_usd:.2f}"
        )
        return ctx.out("budget_exhausted", "none", why, "goal.2", exhausted="cost")
    return None


def _latest_plan(ctx: Ctx) -> Decision | None:
    plan = ctx.view.latest_plan
    if plan is None:
        return None
    pid = plan.plan_id
    if plan.status == "proposed":
        what = f"plan {pid} was proposed"
        auto = ctx.view.policy.auto_apply
        return ctx.gate(auto, "apply", "review_plan", what, "apply it", "goal.3", plan_id=pid)
    if plan.status == "rejected":
        return ctx.plan("retry", f"plan {pid} was rejected", "goal.3")
    if plan.status == "failed" and plan.failure_class is None:
        return _failed_charged(ctx, plan)
    if plan.status == "requested":
        why = f"plan {pid} was requested and is running"
        return ctx.out("running", "wait", why, "goal.3", plan_id=pid)
    return None


def _failed_charged(ctx: Ctx, plan: PlanState) -> Decision:
    """Rule 3 after a charged planner failure: plan again (``retry``), unless the planner's
    last ``max_same_failures`` charged failures share one signature (SPEC §12.10): then the
    goal stops, blocked on ``work`` — another call would fail the same way."""
    text = plan.failure.error if plan.failure else None
    view = ctx.view
    if view.same_plan_failures and repeats_itself(view):
        why = same_way(view.same_plan_failures, text, "the planner ")
        return ctx.out("blocked", "none", why, "goal.same_failure", blocked_on="work")
    error = said(text, "no error recorded")
    return ctx.plan("retry", f"plan {plan.plan_id} failed (charged): {error}", "goal.3")


def _planner_stop(ctx: Ctx) -> Decision | None:
    view, plan = ctx.view, ctx.view.latest_plan
    if plan is None or plan.status != "failed" or plan.failure_class is None or plan.resumed:
        return None
    failure = plan.failure
    error = failure.error if failure else None
    if plan.failure_class == "environment":
        ref = failure.evidence.ref if failure and failure.evidence else None
        why = f"planning could not start; a required precondition is missing: {said(error, ref or 'unknown')}"
        return ctx.out("blocked", "none", why, "goal.4", blocked_on="environment")
    if plan.failure_class == "decision":
        why = f"the planner needs a person to decide: {said(error, 'no question given')}"
        return ctx.out("blocked", "none", why, "goal.4", blocked_on="decision")
    if uncharged_window_full(view):
        n = view.consecutive_uncharged_plans
        why = f"blocked waiting on an outside service after {count(n, 'consecutive uncharged planner failure')}"
        return ctx.out("blocked", "none", why, "goal.4", blocked_on="upstream")
    if plan.not_before is not None and ctx.now < plan.not_before:
        why = f"the outside service refused plan {plan.plan_id} (uncharged); waiting until {stamp(plan.not_before)}"
        return ctx.out(
            "waiting", "wait", why, "goal.4", blocked_on="upstream", not_before=plan.not_before
        )
    return None


def _first_plan(ctx: Ctx) -> Decision | None:
    if ctx.view.active_plan is None:
        return ctx.plan("initial", "no plan has been applied yet", "goal.5")
    return None


SETTLED: Final = frozenset({"succeeded", "cancelled"})


def _milestone(ctx: Ctx) -> Decision | None:
    # A cancelled item is settled too; at least one accepted item makes it a milestone.
    if "succeeded" not in ctx.statuses or not ctx.statuses <= SETTLED:
        return None
    statuses = [d.status for d in ctx.items]
    plan_id = ctx.view.active_plan.plan_id if ctx.view.active_plan else "?"
    cancelled = statuses.count("cancelled")
    why = f"every item of plan {plan_id} is accepted"
    if cancelled:
        why = f"every item of plan {plan_id} is settled ({statuses.count('succeeded')} accepted, {cancelled} cancelled)"
    return ctx.plan("milestone", why, "goal.6")


def _review(ctx: Ctx) -> Decision | None:
    if "in_review" not in ctx.statuses:
        return None
    ids = tuple([d.work_id for d in ctx.items if d.status == "in_review"])
    if not ids:
        return None
    what, auto = f"{', '.join(ids)} passed", ctx.view.policy.accept_passing
    return ctx.gate(auto, "accept", "review_work", what, "accept", "goal.7", work_ids=ids)


_RUNNABLE_OR_HELD: Final = frozenset({("ready", "run"), ("blocked", "retry")})


def _dispatch(ctx: Ctx) -> Decision | None:
    view, policy = ctx.view, ctx.view.policy
    free = policy.max_parallel_work - view.running_items
    held = policy.retry_blocked
    if free <= 0 or not ("ready" in ctx.statuses or (held and "blocked" in ctx.statuses)):
        return None
    ready = runnable(ctx.items, held, free)  # no more than the free slots can take
    if not ready:
        return None
    if not total_attempts_left(view):
        why = (
            f"the goal's charged attempts are spent ({view.charged_attempts} of "
            f"{policy.max_total_attempts})"
        )
        return ctx.out("budget_exhausted", "none", why, "goal.8", exhausted="total_attempts")
    # never offer more runs than the goal's total budget can start
    ids = tuple(ready[: min(free, total_attempts_remaining(view))])
    return ctx.out("ready", "run", f"run {', '.join(ids)}", "goal.8", work_ids=ids)


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


def _in_flight(ctx: Ctx) -> Decision | None:
    if "running" in ctx.statuses:
        running = tuple([d.work_id for d in ctx.items if d.status == "running"])
        return ctx.out(
            "running", "wait", f"{', '.join(running)} running", "goal.9", work_ids=running
        )
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


GOAL_RULES: Final[tuple[Callable[[Ctx], Decision | None], ...]] = (
    _over,
    _limits,
    _latest_plan,
    _planner_stop,
    _first_plan,
    _milestone,
    _review,
    _dispatch,
    _in_flight,
    _stopped_item,
    _replan,
    _fallback,
)
"""The goal rules of SPEC §6.2, in order; the first that returns a decision wins
(``governor.core.rules.decide.goal_decision`` asks them)."""
