"""Recording parks: a goal parked on a failing upstream, and its end (SPEC §11.10).

Rules:
    * ``goal.parked`` names the upstream, the profile, when it was first seen failing and
      its next probe; nothing is recorded when the goal is parked already.
    * When the upstream is back, ``goal.resumed`` (if the goal was parked or its planner
      stopped on it) and ``work.retried`` for each item it refused that has attempts left.
      Nothing is charged: the uncharged windows start again, the budgets stay as they are.
    * The rules that decide to park or resume are ``governor.core.rules.fleet``'s.
"""

from __future__ import annotations

from datetime import datetime

from governor.core.events import Event, GoalParked, GoalResumed
from governor.core.headroom import item_attempts_left
from governor.core.record_head import event_head
from governor.core.upstream import Outage
from governor.core.view import GoalView
from governor.core.work_events import WorkRetried


def park_goal(view: GoalView, outage: Outage, *, at: datetime) -> list[Event]:
    """``goal.parked`` on the outage's upstream (nothing when the goal is parked already)."""
    if view.parked is not None:
        return []
    until = max(outage.until or at, outage.since)
    head = event_head(view, at, "governor", reason=outage.reason)
    return [
        GoalParked(
            **head,
            upstream=outage.upstream,
            profile=outage.profiles[0],
            since=outage.since,
            until=until,
        )
    ]


def resume_goal(view: GoalView, outage: Outage, *, at: datetime) -> list[Event]:
    """The events that resume a goal whose upstream is back: ``goal.resumed`` when it was
    parked or its planner stopped on it, ``work.retried`` for each item it refused.

    Nothing is charged: the uncharged windows start again, the budgets stay as they are.
    """
    reason = outage.reason
    events: list[Event] = []
    plan = view.latest_plan
    planner_hit = (
        plan is not None
        and plan.status == "failed"
        and plan.failure_class == "upstream"
        and not plan.resumed
    )
    if view.parked is not None or planner_hit:
        events.append(GoalResumed(**event_head(view, at, "governor", reason=reason)))
    for item in view.items_of(view.active_plan):
        refused = item.failure_class == "upstream" and item.spec.profile in outage.profiles
        settled = item.accepted or item.cancelled or item.running or item.fresh
        if refused and not settled and item_attempts_left(view, item):
            head = event_head(view, at, "governor", offset=len(events) + 1, reason=reason)
            events.append(WorkRetried(**head, work_id=item.work_id))
    return events
