"""Recording a goal and its plans: turn what the runner decided and observed into events.

Rules (SPEC §6.3, §8):
    * The budget is checked before anything is created: a refused plan creates no event
      (``BudgetExhaustedError`` / ``CommandRefusedError``).
    * ``plan.requested`` is recorded *before* the planner runs.
    * A plan found requested but unfinished is continued under the same id, at no charge,
      at most ``max_continuations`` times; then it is failed with no class (charged).
    * Every function takes the view, the time and the ids it needs, and returns the
      events to append (``governor.core.record_head``). None of them reads a clock.
    * Attempts are recorded by ``governor.core.record_work``, parks by
      ``governor.core.record_park``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime

from governor.core.budgets import item_limits
from governor.core.classify import tail
from governor.core.event_fields import PlanTrigger, Profile, WorkSpec
from governor.core.events import (
    Event,
    GoalCreated,
    PlanApplied,
    PlanCompleted,
    PlanContinued,
    PlanFailed,
    PlanProposed,
    PlanRequested,
)
from governor.core.evidence import UNKNOWN, Evidence, FailureClass
from governor.core.headroom import (
    attempts_left_for,
    continuations_left,
    plan_records_left,
    replans_left,
)
from governor.core.numbers import MAX_WAIT_S, reported
from governor.core.observation import NO_COST, NO_WINDOW, Cost, Window
from governor.core.policy import Policy, new_goal_policy
from governor.core.proposal import check_decision, check_proposal
from governor.core.record_head import ensure_open, event_head, failure_signature, refuse_unless
from governor.core.view import GoalView
from governor.core.work_events import WorkCreated
from governor.errors import CommandRefusedError, NotFoundError


def create_goal(
    goal_id: str,
    *,
    title: str,
    objective: str,
    acceptance: Sequence[str],
    profiles: dict[str, Profile],
    planner: str,
    worker: str,
    at: datetime,
    policy: Policy | None = None,
    actor: str = "governor",
    pools: Sequence[str] = (),
) -> list[Event]:
    """The first event of a new goal: its policy with the defaults of a new goal, refused
    when it leaves no planner call for the completion review (SPEC §12.1).

    Raises:
        PolicyError: the policy breaks SPEC §12.1 (the line names both numbers and the fix).
    """
    return [
        GoalCreated(
            goal_id=goal_id,
            seq=1,
            at=at,
            actor=actor,
            title=title,
            objective=objective,
            acceptance=tuple(acceptance),
            policy=new_goal_policy(policy or Policy()),
            profiles=profiles,
            planner=planner,
            worker=worker,
            pools=tuple(pools) or None,
        )
    ]


def fingerprint(view: GoalView) -> str:
    """sha256 of the semantic graph state: the plans and items and where each stands."""
    state = {
        "plans": [(p.plan_id, p.status) for p in view.plans.values()],
        "work": [
            (w.work_id, w.accepted, w.cancelled, w.attempts_used, w.charged_attempts, w.outcome)
            for w in view.work.values()
        ],
    }
    return hashlib.sha256(json.dumps(state, separators=(",", ":")).encode()).hexdigest()


def request_plan(
    view: GoalView, *, plan_id: str, trigger: PlanTrigger, at: datetime
) -> list[Event]:
    """Request a plan, refusing when a plan is in flight or a planning budget is spent."""
    ensure_open(view)
    latest = view.latest_plan
    if latest is not None and latest.status in ("requested", "proposed"):
        raise CommandRefusedError(
            f"plan {latest.plan_id} is still {latest.status}", goal_id=view.goal_id
        )
    refuse_unless(
        attempts_left_for(view, trigger),
        view,
        "total_attempts",
        f"the goal has spent its {view.policy.max_total_attempts} attempts; a {trigger} "
        "plan would have none to run",
    )
    refuse_unless(
        replans_left(view),
        view,
        "replans",
        f"its charged plans are spent ({view.policy.max_replans} allowed)",
    )
    refuse_unless(
        plan_records_left(view),
        view,
        "plan_records",
        f"the goal holds {view.plans_used} plans, its limit",
    )
    return [
        PlanRequested(
            **event_head(view, at, "governor"),
            plan_id=plan_id,
            sequence=view.plans_used + 1,
            trigger=trigger,
            fingerprint=fingerprint(view),
        )
    ]


def continue_plan(view: GoalView, *, plan_id: str, at: datetime) -> list[Event]:
    """Run a lost plan again under the same id, or give it up once continuations are spent."""
    ensure_open(view)
    plan = view.plans.get(plan_id)
    if plan is None or plan.status != "requested":
        raise CommandRefusedError(f"plan {plan_id} is not in flight", goal_id=view.goal_id)
    if not continuations_left(view):
        return plan_failed(
            view,
            plan_id=plan_id,
            at=at,
            failure_class=None,
            evidence=UNKNOWN,
            error=f"the planner run was lost {plan.continuations + 1} times (max_continuations "
            f"is {view.policy.max_continuations})",
            signed=False,  # a loss is the runner's, not the planner's (SPEC §12.10)
        )
    return [PlanContinued(**event_head(view, at, "governor"), plan_id=plan_id)]


def plan_failed(
    view: GoalView,
    *,
    plan_id: str,
    at: datetime,
    failure_class: FailureClass | None,
    evidence: Evidence | None,
    error: str | None,
    retry_after_s: float | None = None,
    cost: Cost = NO_COST,
    signed: bool = True,
    window: Window = NO_WINDOW,
) -> list[Event]:
    """The planner run failed (or its reply failed validation); ``cost`` is what its
    calls reported (SPEC §12.5); ``signed``: with its signature (SPEC §12.10); ``window``:
    the account's spent usage window that refused it (SPEC §13.2)."""
    text = tail(error) if error else None
    return [
        PlanFailed.model_validate(
            {
                **event_head(view, at, "governor"),
                "plan_id": plan_id,
                "class": failure_class,
                "error": text,
                "evidence": evidence,
                "retry_after_s": reported(retry_after_s, MAX_WAIT_S),
                **cost.fields(),
                "signature": failure_signature(failure_class, evidence, text) if signed else None,
                **(window.fields() if failure_class == "upstream" else {}),
            }
        )
    ]


def plan_proposed(
    view: GoalView,
    *,
    plan_id: str,
    at: datetime,
    decision: str,
    rationale: str,
    work: Sequence[WorkSpec],
    milestone: dict[str, str] | None = None,
    evidence: Evidence | None = None,
    cost: Cost = NO_COST,
) -> list[Event]:
    """A valid proposal; an invalid one becomes a charged ``plan.failed`` whose error reaches
    the next planner prompt (an over-large or ill-formed proposal, a first plan that says
    ``complete``, or ``apply`` once the milestones are used).

    ``evidence`` carries the planner run's in-agent tries, if it took more than one;
    ``cost`` what its calls reported, recorded either way (SPEC §12.5).
    """
    problems = check_decision(view, decision) + check_proposal(view, work)
    if problems:
        return plan_failed(
            view,
            plan_id=plan_id,
            at=at,
            failure_class=None,
            evidence=Evidence(
                output="observed",
                effects="unknown",
                source="governor:proposal",
                ref=plan_id,
                tries=evidence.tries if evidence else None,
            ),
            error="the proposal is invalid: " + "; ".join(problems),
            cost=cost,
        )
    return [
        PlanProposed.model_validate(
            {
                **event_head(view, at, "governor"),
                "plan_id": plan_id,
                "decision": decision,
                "rationale": rationale,
                "work": tuple(work),
                "milestone": milestone,
                "evidence": evidence,
                **cost.fields(),
            }
        )
    ]


def apply_plan(
    view: GoalView, *, plan_id: str, at: datetime, actor: str = "governor"
) -> list[Event]:
    """Materialise a proposal: its work items, or the goal's completion.

    A recorded proposal whose decision the rules refuse now (a first ``complete``, SPEC
    §11.3: a history recorded before that rule, or imported) is refused like a reply
    would be: the runner rejects it (charged, the reason reaches the next planner prompt),
    ``plan approve`` exits 5.
    """
    ensure_open(view)
    plan = view.plans.get(plan_id)
    if plan is None:
        raise NotFoundError(f"{view.goal_id}: no plan {plan_id}")
    if plan.status != "proposed" or plan.proposal is None:
        raise CommandRefusedError(
            f"plan {plan_id} is {plan.status}, not proposed", goal_id=view.goal_id
        )
    problems = check_decision(view, plan.proposal.decision)
    if problems:
        raise CommandRefusedError(
            f"plan {plan_id} cannot be applied: {problems[0]}", goal_id=view.goal_id
        )
    if plan.proposal.decision == "complete":
        return [PlanCompleted(**event_head(view, at, actor), plan_id=plan_id)]
    created = view.created
    assert created is not None
    ids = {spec.key: f"{plan_id}-{spec.key}" for spec in plan.proposal.work}
    limits = item_limits(view.policy)
    events: list[Event] = [
        WorkCreated.model_validate(
            {
                **event_head(view, at, actor, offset),
                "work_id": ids[spec.key],
                "plan_id": plan_id,
                "title": spec.title,
                "objective": spec.objective,
                "acceptance": spec.acceptance,
                "depends_on": tuple(ids.get(d, d) for d in spec.depends_on),
                "profile": spec.profile or created.worker,
                **limits,
            }
        )
        for offset, spec in enumerate(plan.proposal.work, start=1)
    ]
    # The items come first, so every decision in between is the spec's own (ready/apply)
    # and plan.applied names only work that already exists.
    events.append(
        PlanApplied(
            **event_head(view, at, actor, len(events) + 1),
            plan_id=plan_id,
            work_ids=tuple(ids.values()),
        )
    )
    return events
