"""The fold: the goal view (``governor.core.view``) kept up to date event by event.

Rules (SPEC §6):
    * ``project(events)`` folds from nothing; ``fold(view, events)`` continues a view;
      ``evolve(view, event)`` applies one event. Each event costs O(1): nothing is
      re-read, and no list of past attempts is kept.
    * The fold is *in place*: a view belongs to whoever folds it. ``view.copy()`` takes
      a snapshot when one is needed. ``fold(project(h[:k]), h[k:]) == project(h)``.
    * Counting uses ``governor.core.evidence.is_uncharged`` and nothing else: a pending
      plan or attempt counts as charged until it fails uncharged; a continuation adds
      nothing; only a finished uncharged failure extends a consecutive window.
    * The fold trusts its input. ``governor.core.history`` checks a stream before it is
      stored or replayed; an event the fold cannot place is ignored, not guessed at.
    * The fold notes the work items whose decision an event may change (``touched``: the
      item it names, and the items depending on one it settles), so that ``decide`` takes
      only their decisions again (``governor.core.rules.memo``). The steps of the larger cases are ``governor.core.fold_steps``.
    * The same failure again (SPEC §12.10): each item, and the planner, keep the run of
      their *charged* failures in a row that share one recorded signature. An uncharged
      failure neither extends nor breaks it; a success (a usable proposal for the planner),
      a failure without a signature, ``work.retried`` / ``work.reopened`` (the item's) and
      ``goal.resumed`` (the planner's) end it. The fold never reads the limit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import assert_never

from governor.core.events import (
    Event,
)
from governor.core.fold_steps import (
    attempt_finished,
    attempt_started,
    budget_expired,
    budget_granted,
    budget_raised,
    finish_plan,
    milestone,
    plan_failed,
    plan_requested,
    settle,
    work_created,
)
from governor.core.view import BudgetRequest, GoalView, Parked


def evolve(view: GoalView, event: Event) -> GoalView:  # noqa: PLR0912, PLR0915 - one case per event type
    """Apply one event to the view, in place, and return it.

    Cases dispatch on ``event.type`` (the most frequent first) and read only attributes,
    so an event's compiled struct (``governor.core.wire.decoder.decode_struct``) folds alike.
    """
    view.seq = event.seq
    view.last_at = event.at
    match event.type:
        case "attempt.started":
            attempt_started(view, event)
        case "attempt.finished":
            attempt_finished(view, event)
        case "attempt.continued":
            item = view.work.get(event.work_id)
            if item is not None and item.running and item.attempt == event.attempt:
                item.continuations += 1
                item.run_id = event.run_id
                item.run_started_at = event.at
                view.touched.add(item.work_id)
        case "plan.requested":
            plan_requested(view, event)
        case "plan.continued":
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                plan.continuations += 1
                plan.run_started_at = event.at
        case "plan.proposed":
            plan = view.plans.get(event.plan_id)
            if event.cost_usd and plan is not None:  # every agent call counts (SPEC §12.5)
                view.cost_usd += event.cost_usd
            if plan is not None:
                finish_plan(view, plan, event.at)
                plan.status = "proposed"
                plan.proposal = event
                view.consecutive_uncharged_plans = 0
                view.same_plan_failures, view.plan_signature = 0, None
        case "plan.failed":
            plan_failed(view, event)
        case "plan.applied":
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                before = milestone(view, plan)
                plan.status = "applied"
                plan.work_ids = event.work_ids
                view.active_plan = plan
                view.milestones += milestone(view, plan) - before
        case "plan.rejected":
            plan = view.plans.get(event.plan_id)
            if plan is not None:
                plan.status = "rejected"
                plan.rejection = event.reason
        case "plan.completed":
            plan = view.plans.get(event.plan_id)
            if event.cost_usd and plan is not None:
                view.cost_usd += event.cost_usd
            if plan is not None:
                plan.status = "completed"
            view.completed = True
        case "work.created":
            work_created(view, event)
        case "work.accepted":
            if (item := view.work.get(event.work_id)) is not None:
                settle(view, item, accepted=True, cancelled=item.cancelled)
        case "work.cancelled":
            if (item := view.work.get(event.work_id)) is not None:
                settle(view, item, accepted=item.accepted, cancelled=True)
        case "work.reopened":
            if (item := view.work.get(event.work_id)) is not None:
                settle(view, item, accepted=False, cancelled=False)
                # an attempt still in flight (cancelled before it finished) stays current
                item.fresh = not item.running
                item.answered = False
                item.consecutive_uncharged = 0
                item.same_failures, item.signature = 0, None
        case "work.retried":
            if (item := view.work.get(event.work_id)) is not None:
                item.fresh = True
                item.consecutive_uncharged = 0
                item.same_failures, item.signature = 0, None
                item.guidance = event.reason
                item.answered = True
                view.touched.add(item.work_id)
        case "goal.parked":
            if view.parked is None:
                view.parked = Parked(
                    event.upstream, event.profile, event.since, event.until, event.at
                )
        case "goal.resumed":
            if view.parked is not None:
                view.outage_wait_s += max((event.at - view.parked.at).total_seconds(), 0.0)
                view.parked = None
            view.consecutive_uncharged_plans = 0
            view.same_plan_failures, view.plan_signature = 0, None
            view.guidance = event.reason
            if view.latest_plan is not None and view.latest_plan.status == "failed":
                view.latest_plan.resumed = True
        case "goal.cancelled":
            view.cancelled = True
        case "budget.raised":
            budget_raised(view, event)
        case "budget.requested":
            view.budget_request = BudgetRequest(
                event.budget,
                event.usd,
                event.attempts,
                event.renews_at,
                event.reason or "",
                event.at,
            )
        case "budget.granted":
            budget_granted(view, event)
        case "budget.declined":
            request = view.budget_request
            if request is not None and request.budget == event.budget:
                view.budget_request = replace(request, declined=True)
        case "budget.expired":
            budget_expired(view, event)
        case "goal.created":
            view.goal_id = event.goal_id
            view.created = event
            view.policy = event.policy
        case _:
            assert_never(event.type)
    return view


def fold(view: GoalView, events: Iterable[Event]) -> GoalView:
    """Apply events to the view in order, in place, and return it."""
    for event in events:
        evolve(view, event)
    return view


def project(events: Iterable[Event]) -> GoalView:
    """The view of a stream, folded from nothing."""
    return fold(GoalView(), events)
