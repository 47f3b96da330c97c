"""Decisions: what a goal and each of its work items should do next, from the view alone.

Rules (SPEC §6.1 and §6.2, first match wins; each rule's name is carried by the
decision so every replay and explanation can say which rule fired):

    work.1  accepted -> succeeded/none; cancelled -> cancelled/none
    work.2  dependencies not succeeded -> waiting/wait_for_dependencies
    work.3  no attempt since creation, reopen or retry -> ready/run
            (budget_exhausted/none when its charged attempts reached max_attempts)
    work.4  latest attempt started, not finished -> running/wait
    work.5  latest succeeded -> in_review/accept (review without accept_passing)
    work.6  latest failed uncharged environment -> blocked/none on environment
    work.7  latest failed decision -> blocked/none on decision
    work.8  latest failed uncharged upstream -> blocked/none at the consecutive bound;
            waiting/wait before not_before; else blocked/retry
    work.9  charged failure -> blocked/retry while budget remains; else budget_exhausted

    goal.1  cancelled -> cancelled; plan completed -> succeeded
    goal.2  cumulative runtime or cost over its limit -> budget_exhausted
    goal.3  latest plan proposed -> apply or review; rejected or failed charged ->
            plan (retry); requested without outcome -> running/wait
    goal.4  latest plan failed uncharged, not resumed -> blocked on environment or
            decision; upstream: blocked at the bound, waiting before not_before,
            else fall through
    goal.5  no applied plan -> plan (initial)
    goal.6  every item of the active plan accepted -> plan (milestone)
    goal.7  items in review -> accept, or awaiting_review/review_work
    goal.8  dispatchable items and a free slot -> run (budget_exhausted at the total)
    goal.9  items running -> running/wait; items cooling down -> waiting/wait
    goal.10 an item stopped on environment, decision or the upstream bound -> blocked
    goal.11 items out of budget -> plan (replan)
    goal.12 fallback -> blocked on work: no legal progress action

Wherever a rule says ``ready/plan`` the charged replans must be below ``max_replans``
and the raw plan count below ``max_plan_records``; otherwise ``budget_exhausted``
naming ``replans`` (first) or ``plan_records``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from governor.core.ledger import (
    Ledger,
    attempt_ledger,
    can_attempt_more,
    can_replan,
    charged_attempts,
    charged_replans,
    cost_over,
    has_plan_records,
    item_has_budget,
    replan_ledger,
    runtime_over,
    work_ledger,
)
from governor.core.view import GoalView, PlanState, WorkState

Status = Literal[
    "ready",
    "running",
    "waiting",
    "blocked",
    "awaiting_review",
    "in_review",
    "succeeded",
    "cancelled",
    "budget_exhausted",
]
Action = Literal[
    "plan",
    "apply",
    "run",
    "accept",
    "review",
    "review_plan",
    "review_work",
    "retry",
    "wait",
    "wait_for_dependencies",
    "none",
]
BlockedOn = Literal["environment", "upstream", "decision", "work", "operator"]
Exhausted = Literal["replans", "plan_records", "attempts", "total_attempts", "runtime", "cost"]

STOPPED: Final = frozenset({"succeeded", "cancelled", "blocked", "budget_exhausted"})
"""Goal statuses after which nothing happens without an operator."""


@dataclass(frozen=True, slots=True)
class WorkDecision:
    """What one work item should do next."""

    work_id: str
    status: Status
    next_action: Action
    reason: str
    rule: str
    blocked_on: BlockedOn | None = None
    not_before: datetime | None = None
    exhausted: Exhausted | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """What the goal should do next, why, and the budget ledger behind it."""

    status: Status
    next_action: Action
    reason: str
    rule: str
    ledger: Ledger
    blocked_on: BlockedOn | None = None
    not_before: datetime | None = None
    exhausted: Exhausted | None = None
    trigger: str | None = None
    """For ``plan``: initial, replan, milestone or retry."""
    plan_id: str | None = None
    """For ``apply`` and ``review_plan``: the proposal concerned."""
    work_ids: tuple[str, ...] = ()
    """For ``run`` and ``accept``/``review_work``: the items concerned, in plan order."""
    items: tuple[WorkDecision, ...] = ()
    """Decisions of the active plan's items, in plan order."""

    @property
    def is_stopped(self) -> bool:
        return self.status in STOPPED


def stamp(when: datetime) -> str:
    """A timestamp as RFC 3339 UTC with a ``Z``, as every output prints it."""
    text = when.isoformat().replace("+00:00", "Z")
    return text if text.endswith("Z") else text + "Z"


def _first_line(text: str | None, fallback: str) -> str:
    line = (text or "").strip().splitlines()
    return line[-1].strip()[:300] if line else fallback


# ---------------------------------------------------------------- work items


def _precondition(item: WorkState) -> str:
    finish = item.finish
    evidence = finish.evidence if finish else None
    what = _first_line(finish.error if finish else None, evidence.ref if evidence and evidence.ref else "unknown")
    return what


def _work_failure(item: WorkState, now: datetime) -> WorkDecision:
    wid, n, cls = item.work_id, item.attempt, item.failure_class
    if cls == "environment":
        return WorkDecision(wid, "blocked", "none", f"attempt {n} could not start; a required precondition is missing: {_precondition(item)}", "work.6", "environment")
    if cls == "decision":
        question = _first_line(item.finish.error if item.finish else None, "no question given")
        return WorkDecision(wid, "blocked", "none", f"attempt {n} needs a person to decide: {question}", "work.7", "decision")
    if cls == "upstream":
        if item.consecutive_uncharged >= item.max_uncharged_attempts:
            return WorkDecision(wid, "blocked", "none", f"blocked waiting on an outside service after {item.consecutive_uncharged} consecutive uncharged attempts", "work.8", "upstream")
        if item.not_before is not None and now < item.not_before:
            return WorkDecision(wid, "waiting", "wait", f"the outside service refused attempt {n} (uncharged); waiting until {stamp(item.not_before)}", "work.8", "upstream", item.not_before)
        return WorkDecision(wid, "blocked", "retry", f"the outside service refused attempt {n} (uncharged, {item.consecutive_uncharged} of {item.max_uncharged_attempts} in a row); retry", "work.8")
    outcome = (item.outcome or "failed").replace("_", " ")
    if item_has_budget(item):
        return WorkDecision(wid, "blocked", "retry", f"attempt {n} {outcome} (charged {item.charged_attempts} of {item.max_attempts}); retry", "work.9")
    return WorkDecision(wid, "budget_exhausted", "none", f"exhausted its {item.max_attempts} attempts (attempt {n} {outcome})", "work.9", exhausted="attempts")


def decide_work(view: GoalView, item: WorkState, now: datetime) -> WorkDecision:
    """The decision for one work item (SPEC §6.1)."""
    wid = item.work_id
    if item.accepted:
        return WorkDecision(wid, "succeeded", "none", "accepted", "work.1")
    if item.cancelled:
        return WorkDecision(wid, "cancelled", "none", "cancelled", "work.1")
    pending = [d for d in item.spec.depends_on if not (d in view.work and view.work[d].accepted)]
    if pending:
        return WorkDecision(wid, "waiting", "wait_for_dependencies", f"waiting for {', '.join(pending)}", "work.2")
    if item.fresh:
        if item_has_budget(item):
            return WorkDecision(wid, "ready", "run", f"ready for attempt {item.attempts_used + 1}", "work.3")
        return WorkDecision(wid, "budget_exhausted", "none", f"exhausted its {item.max_attempts} attempts", "work.3", exhausted="attempts")
    if item.running:
        return WorkDecision(wid, "running", "wait", f"attempt {item.attempt} is running", "work.4")
    if item.outcome == "succeeded":
        if view.policy.accept_passing:
            return WorkDecision(wid, "in_review", "accept", f"attempt {item.attempt} passed its acceptance criteria", "work.5")
        return WorkDecision(wid, "in_review", "review", f"attempt {item.attempt} passed its acceptance criteria; awaiting review", "work.5", "operator")
    return _work_failure(item, now)


# ---------------------------------------------------------------- the goal


@dataclass(frozen=True, slots=True)
class _Ctx:
    view: GoalView
    now: datetime
    ledger: Ledger
    items: tuple[WorkDecision, ...]


def _out(ctx: _Ctx, status: Status, action: Action, reason: str, rule: str, **extra: object) -> Decision:
    return Decision(status, action, reason, rule, ctx.ledger, items=ctx.items, **extra)  # type: ignore[arg-type]


def _plan(ctx: _Ctx, trigger: str, why: str, rule: str) -> Decision:
    view = ctx.view
    if not can_replan(view):
        return _out(ctx, "budget_exhausted", "none", f"{why}, but all {view.policy.max_replans} charged plans are spent", rule, exhausted="replans")
    if not has_plan_records(view):
        return _out(ctx, "budget_exhausted", "none", f"{why}, but the goal holds {view.plans_used} plans, its limit of plan records", rule, exhausted="plan_records")
    return _out(ctx, "ready", "plan", f"{why}; plan ({trigger}, charged {charged_replans(view)} of {view.policy.max_replans} used)", rule, trigger=trigger)


def _goal_over(ctx: _Ctx) -> Decision | None:
    view = ctx.view
    if view.cancelled:
        return _out(ctx, "cancelled", "none", "the goal was cancelled", "goal.1")
    if view.completed:
        return _out(ctx, "succeeded", "none", "the planner declared the goal complete", "goal.1")
    return None


def _limits(ctx: _Ctx) -> Decision | None:
    view = ctx.view
    if runtime_over(view):
        return _out(ctx, "budget_exhausted", "none", f"cumulative runtime {view.runtime_s:.0f}s is over its limit of {view.policy.max_runtime_s:.0f}s", "goal.2", exhausted="runtime")
    if cost_over(view):
        return _out(ctx, "budget_exhausted", "none", f"cumulative cost ${view.cost_usd:.2f} is over its limit of ${view.policy.max_cost_usd:.2f}", "goal.2", exhausted="cost")
    return None


def _latest_plan(ctx: _Ctx) -> Decision | None:
    plan = ctx.view.latest_plan
    if plan is None:
        return None
    if plan.status == "proposed":
        if ctx.view.policy.auto_apply:
            return _out(ctx, "ready", "apply", f"plan {plan.plan_id} was proposed; apply it", "goal.3", plan_id=plan.plan_id)
        return _out(ctx, "awaiting_review", "review_plan", f"plan {plan.plan_id} was proposed; awaiting an operator's review", "goal.3", blocked_on="operator", plan_id=plan.plan_id)
    if plan.status == "rejected":
        return _plan(ctx, "retry", f"plan {plan.plan_id} was rejected", "goal.3")
    if plan.status == "failed" and plan.failure_class is None:
        error = _first_line(plan.failure.error if plan.failure else None, "no error recorded")
        return _plan(ctx, "retry", f"plan {plan.plan_id} failed (charged): {error}", "goal.3")
    if plan.status == "requested":
        return _out(ctx, "running", "wait", f"plan {plan.plan_id} was requested and is running", "goal.3")
    return None


def _uncharged_planner_stop(ctx: _Ctx) -> Decision | None:
    view, plan = ctx.view, ctx.view.latest_plan
    if plan is None or plan.status != "failed" or plan.failure_class is None or plan.resumed:
        return None
    error = plan.failure.error if plan.failure else None
    if plan.failure_class == "environment":
        evidence = plan.failure.evidence if plan.failure else None
        what = _first_line(error, evidence.ref if evidence and evidence.ref else "unknown")
        return _out(ctx, "blocked", "none", f"planning could not start; a required precondition is missing: {what}", "goal.4", blocked_on="environment")
    if plan.failure_class == "decision":
        return _out(ctx, "blocked", "none", f"the planner needs a person to decide: {_first_line(error, 'no question given')}", "goal.4", blocked_on="decision")
    bound = view.policy.max_uncharged_replans
    if view.planner_consecutive_uncharged >= bound:
        return _out(ctx, "blocked", "none", f"blocked waiting on an outside service after {view.planner_consecutive_uncharged} consecutive uncharged planner failures", "goal.4", blocked_on="upstream")
    if plan.not_before is not None and ctx.now < plan.not_before:
        return _out(ctx, "waiting", "wait", f"the outside service refused plan {plan.plan_id} (uncharged); waiting until {stamp(plan.not_before)}", "goal.4", blocked_on="upstream", not_before=plan.not_before)
    return None


def _first_plan(ctx: _Ctx) -> Decision | None:
    if ctx.view.active_plan is None:
        return _plan(ctx, "initial", "no plan has been applied yet", "goal.5")
    return None


def _milestone(ctx: _Ctx) -> Decision | None:
    items = ctx.items
    if items and all(d.status in ("succeeded", "cancelled") for d in items) and any(d.status == "succeeded" for d in items):
        plan = ctx.view.active_plan
        return _plan(ctx, "milestone", f"every item of plan {plan.plan_id if plan else '?'} is accepted", "goal.6")
    return None


def _review(ctx: _Ctx) -> Decision | None:
    ids = tuple(d.work_id for d in ctx.items if d.status == "in_review")
    if not ids:
        return None
    if ctx.view.policy.accept_passing:
        return _out(ctx, "ready", "accept", f"{', '.join(ids)} passed; accept", "goal.7", work_ids=ids)
    return _out(ctx, "awaiting_review", "review_work", f"{', '.join(ids)} passed; awaiting an operator's review", "goal.7", blocked_on="operator", work_ids=ids)


def _dispatch(ctx: _Ctx) -> Decision | None:
    view = ctx.view
    retry = view.policy.retry_blocked
    ready = [d.work_id for d in ctx.items if (d.status, d.next_action) == ("ready", "run") or (retry and (d.status, d.next_action) == ("blocked", "retry"))]
    free = view.policy.max_parallel_work - view.running_items
    if not ready or free <= 0:
        return None
    if not can_attempt_more(view):
        return _out(ctx, "budget_exhausted", "none", f"all {view.policy.max_total_attempts} charged attempts of the goal are spent ({charged_attempts(view)} used)", "goal.8", exhausted="total_attempts")
    ids = tuple(ready[:free])
    return _out(ctx, "ready", "run", f"run {', '.join(ids)}", "goal.8", work_ids=ids)


def _in_flight(ctx: _Ctx) -> Decision | None:
    running = tuple(d.work_id for d in ctx.items if d.status == "running")
    if running:
        return _out(ctx, "running", "wait", f"{', '.join(running)} running", "goal.9", work_ids=running)
    cooling = [d for d in ctx.items if d.status == "waiting" and d.not_before is not None]
    if cooling:
        first = min(cooling, key=lambda d: d.not_before or ctx.now)
        return _out(ctx, "waiting", "wait", f"{first.work_id} is waiting on an outside service until {stamp(first.not_before or ctx.now)}", "goal.9", blocked_on="upstream", not_before=first.not_before, work_ids=(first.work_id,))
    return None


def _stopped_item(ctx: _Ctx) -> Decision | None:
    for d in ctx.items:
        if d.status == "blocked" and d.next_action == "none" and d.blocked_on in ("environment", "decision", "upstream"):
            return _out(ctx, "blocked", "none", f"{d.work_id}: {d.reason}", "goal.10", blocked_on=d.blocked_on, work_ids=(d.work_id,))
    return None


def _replan(ctx: _Ctx) -> Decision | None:
    spent = [d.work_id for d in ctx.items if d.status == "budget_exhausted"]
    if spent:
        return _plan(ctx, "replan", f"{', '.join(spent)} exhausted {'its' if len(spent) == 1 else 'their'} attempts", "goal.11")
    return None


def _fallback(ctx: _Ctx) -> Decision | None:
    held = [d.work_id for d in ctx.items if (d.status, d.next_action) == ("blocked", "retry")]
    hint = f"; {', '.join(held)} await an operator's retry (retry_blocked is off)" if held else ""
    return _out(ctx, "blocked", "none", f"no legal progress action{hint}", "goal.12", blocked_on="work")


GOAL_RULES: Final[tuple[Callable[[_Ctx], Decision | None], ...]] = (
    _goal_over,
    _limits,
    _latest_plan,
    _uncharged_planner_stop,
    _first_plan,
    _milestone,
    _review,
    _dispatch,
    _in_flight,
    _stopped_item,
    _replan,
    _fallback,
)
"""The goal rules of SPEC §6.2, in order; the first that returns a decision wins."""


def ledger_of(view: GoalView, now: datetime) -> Ledger:
    """The full budget ledger: every work item ever created, in creation order."""
    return _ledger(view, {w: decide_work(view, item, now) for w, item in view.work.items()})


def _ledger(view: GoalView, decisions: dict[str, WorkDecision]) -> Ledger:
    work = {w: work_ledger(view.work[w], d.status, d.next_action) for w, d in decisions.items()}
    return Ledger(replan_ledger(view), attempt_ledger(view), work, view.runtime_s, view.cost_usd)


def decide(view: GoalView, now: datetime) -> Decision:
    """The goal's decision (SPEC §6.2), with its item decisions and the full ledger."""
    decisions = {w: decide_work(view, item, now) for w, item in view.work.items()}
    active = view.active_plan
    items = tuple(decisions[w] for w in view.items_by_plan.get(active.plan_id, ())) if active else ()
    ctx = _Ctx(view, now, _ledger(view, decisions), items)
    for rule in GOAL_RULES:
        decision = rule(ctx)
        if decision is not None:
            return decision
    raise AssertionError("the fallback rule always decides")  # pragma: no cover
