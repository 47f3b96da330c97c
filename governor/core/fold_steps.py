"""The fold's steps: how a plan's and a work item's events move the view's counters.

Rules (SPEC §6, §12.10; ``governor.core.fold`` calls them):
    * Counting uses ``governor.core.evidence.is_uncharged`` and nothing else: a pending
      plan or attempt counts as charged until it fails uncharged; only a finished
      uncharged failure extends a consecutive window, and an upstream one waits out its
      back-off (``not_before``).
    * A charged failure with a signature extends the run of the same failure; a success,
      or one without a signature, ends it.
    * Settling an item frees its parallel slot and notes the items depending on it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from governor.core.budget_events import BudgetExpired, BudgetGranted
from governor.core.budgets import ledger
from governor.core.events import BudgetRaised, PlanFailed, PlanRequested
from governor.core.evidence import FailureClass, effective_class
from governor.core.numbers import later
from governor.core.policy import default_milestones
from governor.core.view import GoalView, OpenGrant, PlanState, WorkState
from governor.core.work_events import AttemptFinished, AttemptStarted, WorkCreated


def _elapsed(start: datetime | None, end: datetime) -> float:
    return max((end - start).total_seconds(), 0.0) if start is not None else 0.0


def finish_plan(view: GoalView, plan: PlanState, at: datetime) -> None:
    view.runtime_s += _elapsed(plan.run_started_at, at)
    plan.run_started_at = None


def _window(
    view: GoalView,
    failure_class: FailureClass | None,
    consecutive: int,
    event: PlanFailed | AttemptFinished,
) -> tuple[int, datetime | None]:
    """The uncharged window after a finished run, and when an upstream cooldown ends.

    A charged outcome (no class that passed the gate) resets the window; an uncharged one
    extends it, and an upstream one waits ``UpstreamBackoff.wait_s`` of the window's length.
    """
    if failure_class is None:
        return 0, None
    consecutive += 1
    if failure_class != "upstream":
        return consecutive, None
    wait = view.policy.upstream_backoff.wait_s(consecutive, event.retry_after_s)
    return consecutive, later(event.at, wait)


def _again(count: int, current: str | None, signature: str | None) -> tuple[int, str | None]:
    """The run of same failures after a charged failure of ``signature`` (SPEC §12.10):
    one more when it repeats the run's, a new run of one when it differs, none without one."""
    if signature is None:
        return 0, None
    return (count + 1 if signature == current else 1), signature


def plan_failed(view: GoalView, event: PlanFailed) -> None:
    plan = view.plans.get(event.plan_id)
    if plan is None:
        return
    if event.cost_usd:
        view.cost_usd += event.cost_usd
    finish_plan(view, plan, event.at)
    plan.status = "failed"
    plan.failure = event
    plan.failure_class = effective_class("failed", event.failure_class, event.evidence)
    view.consecutive_uncharged_plans, plan.not_before = _window(
        view, plan.failure_class, view.consecutive_uncharged_plans, event
    )
    if plan.failure_class is None:  # charged: it extends or breaks the planner's run
        view.same_plan_failures, view.plan_signature = _again(
            view.same_plan_failures, view.plan_signature, event.signature
        )
    else:
        view.plans_uncharged += 1


def attempt_started(view: GoalView, event: AttemptStarted) -> None:
    item = view.work.get(event.work_id)
    if item is None:
        return
    if not (item.running or item.cancelled):  # it takes a parallel slot (``_slot``)
        view.running_items += 1
    item.attempts_used += 1
    item.charged_attempts += 1
    item.attempt = event.attempt
    item.run_id = event.run_id
    item.running = True
    item.fresh = item.answered = False
    item.continuations = 0
    item.run_started_at = event.at
    item.outcome = item.finish = item.failure_class = item.not_before = None
    view.attempts_used += 1
    view.touched.add(item.work_id)


def attempt_finished(view: GoalView, event: AttemptFinished) -> None:
    item = view.work.get(event.work_id)
    if item is None or event.attempt != item.attempt or not item.running:
        return
    if not item.cancelled:  # it frees its parallel slot (``_slot``)
        view.running_items -= 1
    item.running = False
    if (started := item.run_started_at) is not None and (
        elapsed := (event.at - started).total_seconds()  # ``_elapsed``, inline
    ) > 0:
        view.runtime_s += elapsed
    if event.cost_usd:
        view.cost_usd += event.cost_usd
    item.run_started_at = None
    item.outcome = event.outcome
    item.finish = event
    view.touched.add(item.work_id)
    if event.resets_at is not None:  # refused by a spent usage window (SPEC §13.2)
        view.windows = view.windows | {item.work_id}
    elif item.work_id in view.windows:
        view.windows = view.windows - {item.work_id}
    # ``effective_class`` has nothing to gate without a class (most finished runs)
    failure_class = (
        None
        if event.failure_class is None
        else effective_class(event.outcome, event.failure_class, event.evidence)
    )
    item.failure_class = failure_class
    if failure_class is None:  # charged: the window resets (``_window``)
        item.consecutive_uncharged, item.not_before = 0, None
        if event.outcome == "succeeded":
            item.same_failures, item.signature = 0, None
        else:  # a charged failure extends or breaks the run of same failures
            item.same_failures, item.signature = _again(
                item.same_failures, item.signature, event.signature
            )
        return
    item.consecutive_uncharged, item.not_before = _window(
        view, failure_class, item.consecutive_uncharged, event
    )
    item.charged_attempts -= 1
    view.attempts_uncharged += 1


def budget_raised(view: GoalView, event: BudgetRaised) -> None:
    budget = ledger(event.ledger)
    value: float | int = int(event.to) if budget.whole else event.to
    if budget.scope != "item":
        update: dict[str, float | int] = {budget.field: value}
        policy = view.policy
        if budget.field == "max_replans" and policy.max_milestones == default_milestones(
            policy.max_replans
        ):  # a default max_milestones follows the replans up (SPEC §12.1)
            update["max_milestones"] = max(policy.max_milestones, default_milestones(int(value)))
        view.policy = policy.model_copy(update=update)
    elif (item := view.work.get(event.work_id or "")) is not None:
        setattr(item, budget.field, value)
        view.touched.add(item.work_id)


def milestone(view: GoalView, plan: PlanState | None) -> int:
    """1 when ``plan`` is an applied plan that completed, else 0: its items are all settled
    and one at least was accepted (a plan whose items were all cancelled achieved nothing,
    as goal rule 6 reads it: decision record 0002)."""
    if plan is None or plan.status != "applied" or plan.open_items:
        return 0
    return int(plan.accepted_items > 0)


def _slot(item: WorkState) -> int:
    """1 when the item holds a parallel slot: its attempt is in flight and it is not
    cancelled (a cancelled item is settled even if its last attempt never finished)."""
    return int(item.running and not item.cancelled)


def settle(view: GoalView, item: WorkState, *, accepted: bool, cancelled: bool) -> None:
    """Accept, cancel or reopen an item, keeping its plan's open items, the milestones and
    the parallel slots."""
    plan = view.plans.get(item.plan_id)
    before = milestone(view, plan)
    was_open, was_accepted = not (item.accepted or item.cancelled), item.accepted
    view.running_items -= _slot(item)
    item.accepted, item.cancelled = accepted, cancelled
    view.running_items += _slot(item)
    if plan is not None:
        plan.open_items += int(not (accepted or cancelled)) - int(was_open)
        plan.accepted_items += int(accepted) - int(was_accepted)
    view.milestones += milestone(view, plan) - before
    view.touched.add(item.work_id)
    view.touched.update(view.dependents.get(item.work_id, ()))


def work_created(view: GoalView, event: WorkCreated) -> None:
    view.work[event.work_id] = WorkState(
        work_id=event.work_id,
        plan_id=event.plan_id,
        spec=event,
        max_attempts=event.max_attempts,
        max_uncharged_attempts=event.max_uncharged_attempts,
    )
    for dependency in event.depends_on:
        view.dependents.setdefault(dependency, []).append(event.work_id)
    view.touched.add(event.work_id)
    plan = view.plans.get(event.plan_id)
    before = milestone(view, plan)
    view.items_by_plan.setdefault(event.plan_id, []).append(event.work_id)
    if plan is not None:
        plan.open_items += 1
    view.milestones += milestone(view, plan) - before


def plan_requested(view: GoalView, event: PlanRequested) -> None:
    plan = PlanState(
        plan_id=event.plan_id,
        sequence=event.sequence,
        trigger=event.trigger,
        run_started_at=event.at,
    )
    view.plans[event.plan_id] = plan
    view.latest_plan = plan
    view.plans_used += 1


GRANTABLE: Final = {
    "cost": "max_cost_usd",
    "total_attempts": "max_total_attempts",
    "replans": "max_replans",
}
"""The goal's own ledgers a grant lifts (SPEC §13.7), and the policy field of each."""


def budget_granted(view: GoalView, event: BudgetGranted) -> None:
    """Close the matching request; on the goal's own ledger, lift the limit by the amount
    (until it expires)."""
    request = view.budget_request
    if request is not None and request.budget == event.budget:
        view.budget_request = None
    if _shift(view, event.budget, event.usd, event.attempts, 1) and event.expires_at is not None:
        view.open_grants = (
            *view.open_grants,
            OpenGrant(event.budget, event.usd, event.attempts, event.expires_at),
        )


def budget_expired(view: GoalView, event: BudgetExpired) -> None:
    """Lower the limit by what the expired grant added; its spend stays counted."""
    kept, dropped = [], False
    for grant in view.open_grants:
        if not dropped and (grant.budget, grant.usd, grant.attempts) == (
            event.budget,
            event.usd,
            event.attempts,
        ):
            dropped = True
        else:
            kept.append(grant)
    view.open_grants = tuple(kept)
    _shift(view, event.budget, event.usd, event.attempts, -1)


def _shift(view: GoalView, budget: str, usd: float | None, attempts: int | None, sign: int) -> bool:
    """Move the goal-ledger limit ``budget`` by the amount (``sign`` 1 up, -1 down); False
    for a pool's budget or a ledger without a limit to move."""
    name = GRANTABLE.get(budget)
    current = getattr(view.policy, name) if name is not None else None
    if name is None or current is None:
        return False
    amount = (usd or 0.0) if budget == "cost" else (attempts or 0)
    view.policy = view.policy.model_copy(update={name: max(current + sign * amount, 0)})
    return True
