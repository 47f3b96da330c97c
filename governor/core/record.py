"""Recording: turn what the runner decided and observed into events, checking budgets first.

Rules (SPEC §6.3, §8):
    * The budget is checked before anything is created: a refused plan or attempt
      creates no event (``BudgetExhaustedError`` / ``CommandRefusedError``).
    * ``plan.requested`` and ``attempt.started`` are recorded *before* the agent runs.
    * A run found started but unfinished is continued under the same number with a new
      run id, at no charge, at most ``max_continuations`` times; then it is finished as
      ``lost`` (an attempt, charged) or failed with no class (a plan, charged).
    * Every function takes the view, the time and the ids it needs, and returns the
      events to append, numbered after ``view.seq``. None of them reads a clock.
    * Nothing is recorded once the goal has ended (SPEC §11.2).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from governor.core.budgets import item_limits
from governor.core.classify import tail
from governor.core.events import (
    AcceptanceReport,
    AttemptContinued,
    AttemptFinished,
    AttemptStarted,
    Event,
    GoalCreated,
    Outcome,
    PlanApplied,
    PlanCompleted,
    PlanContinued,
    PlanFailed,
    PlanProposed,
    PlanRequested,
    PlanTrigger,
    Profile,
    WorkCreated,
    WorkSpec,
)
from governor.core.evidence import UNKNOWN, Evidence, FailureClass
from governor.core.headroom import (
    attempts_left_for,
    continuations_left,
    item_attempts_left,
    plan_records_left,
    replans_left,
    total_attempts_left,
)
from governor.core.history import check_decision, check_proposal
from governor.core.numbers import MAX_USD, MAX_WAIT_S, reported
from governor.core.observation import NO_COST, Cost, Usage
from governor.core.policy import Policy, new_goal_policy
from governor.core.signature import signature
from governor.core.view import GoalView, WorkState
from governor.errors import BudgetExhaustedError, CommandRefusedError, NotFoundError


def ensure_open(view: GoalView) -> None:
    """Refuse to record anything once the goal has ended (SPEC §11.2)."""
    if view.ended == "goal.cancelled":
        raise CommandRefusedError("the goal is cancelled", goal_id=view.goal_id)
    if view.ended == "plan.completed":
        raise CommandRefusedError("the goal has succeeded", goal_id=view.goal_id)


def event_head(
    view: GoalView, at: datetime, actor: str, offset: int = 1, reason: str | None = None
) -> dict[str, Any]:
    """The common fields of the next event (``offset`` numbers events of one batch).

    Raises:
        CommandRefusedError: when the goal has ended: nothing may follow its end.
    """
    if view.created is None:
        raise CommandRefusedError("the goal has no goal.created event")
    ensure_open(view)
    # a recorder whose clock runs behind the last event's never writes time backwards
    if view.last_at is not None and at < view.last_at:
        at = view.last_at
    return {
        "goal_id": view.goal_id,
        "seq": view.seq + offset,
        "at": at,
        "actor": actor,
        "reason": reason,
    }


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


def _refuse_unless(left: bool, view: GoalView, ledger: str, spent: str) -> None:
    """The budget check before anything is created: nothing is, when ``ledger`` is spent."""
    if not left:
        raise BudgetExhaustedError(spent, ledger=ledger, goal_id=view.goal_id)


# ---------------------------------------------------------------- plans


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
    _refuse_unless(
        attempts_left_for(view, trigger),
        view,
        "total_attempts",
        f"the goal has spent its {view.policy.max_total_attempts} attempts; a {trigger} "
        "plan would have none to run",
    )
    _refuse_unless(
        replans_left(view),
        view,
        "replans",
        f"its charged plans are spent ({view.policy.max_replans} allowed)",
    )
    _refuse_unless(
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
) -> list[Event]:
    """The planner run failed (or its reply failed validation); ``cost`` is what its
    calls reported (SPEC §12.5); ``signed``: with its signature (SPEC §12.10)."""
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
                "signature": _signature(failure_class, evidence, text) if signed else None,
            }
        )
    ]


def _signature(
    failure_class: FailureClass | None, evidence: Evidence | None, error: str | None
) -> str:
    """The recorded failure's signature: its class, the rule that classed it, its error."""
    return signature(failure_class, evidence.rule if evidence else None, error)


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


# ---------------------------------------------------------------- attempts


def work_item(view: GoalView, work_id: str) -> WorkState:
    item = view.work.get(work_id)
    if item is None:
        raise NotFoundError(f"{view.goal_id}: no work item {work_id}")
    return item


def start_attempt(view: GoalView, *, work_id: str, run_id: str, at: datetime) -> list[Event]:
    """Start the next attempt of an item, refusing when a budget is spent or it is not runnable."""
    ensure_open(view)
    item = work_item(view, work_id)
    if item.running:
        raise CommandRefusedError(
            f"attempt {item.attempt} of {work_id} is still running", goal_id=view.goal_id
        )
    if item.accepted or item.cancelled:
        raise CommandRefusedError(
            f"{work_id} is {'accepted' if item.accepted else 'cancelled'}", goal_id=view.goal_id
        )
    _refuse_unless(
        item_attempts_left(view, item),
        view,
        "attempts",
        f"{work_id} has spent its {item.max_attempts} attempts",
    )
    _refuse_unless(
        total_attempts_left(view),
        view,
        "total_attempts",
        f"the goal has spent its {view.policy.max_total_attempts} attempts "
        f"({view.charged_attempts} charged)",
    )
    number = item.attempts_used + 1
    return [
        AttemptStarted(
            **event_head(view, at, "governor"),
            work_id=work_id,
            attempt=number,
            run_id=run_id,
            trigger="initial" if number == 1 else "retry",
        )
    ]


def continue_attempt(view: GoalView, *, work_id: str, run_id: str, at: datetime) -> list[Event]:
    """Resume a lost run as a continuation, or finish it as ``lost`` once continuations are spent."""
    ensure_open(view)
    item = work_item(view, work_id)
    if not item.running or item.run_id is None:
        raise CommandRefusedError(f"{work_id} has no attempt in flight", goal_id=view.goal_id)
    if not continuations_left(view, item):
        return finish_attempt(
            view,
            work_id=work_id,
            run_id=item.run_id,
            at=at,
            outcome="lost",
            error=f"the run was lost {item.continuations + 1} times (max_continuations is "
            f"{view.policy.max_continuations})",
        )
    return [
        AttemptContinued(
            **event_head(view, at, "governor"), work_id=work_id, attempt=item.attempt, run_id=run_id
        )
    ]


def finish_attempt(
    view: GoalView,
    *,
    work_id: str,
    run_id: str,
    at: datetime,
    outcome: Outcome,
    failure_class: FailureClass | None = None,
    error: str | None = None,
    evidence: Evidence | None = None,
    acceptance: AcceptanceReport | None = None,
    cost_usd: float | None = None,
    retry_after_s: float | None = None,
    summary: str | None = None,
    actor: str = "governor",
    usage: Usage | None = None,
) -> list[Event]:
    """The terminal record of a run. A success is never classed. A run that failed or timed
    out carries its signature (a lost or abandoned one is the runner's or an operator's
    doing, not the agent's: SPEC §12.10)."""
    ensure_open(view)
    item = work_item(view, work_id)
    if not item.running:
        raise CommandRefusedError(f"{work_id} has no attempt in flight", goal_id=view.goal_id)
    failure_class = None if outcome == "succeeded" else failure_class
    text = tail(error) if error else None
    signed = outcome in ("failed", "timed_out")
    return [
        AttemptFinished.model_validate(
            {
                **event_head(view, at, actor, reason=tail(summary) if summary else None),
                "work_id": work_id,
                "attempt": item.attempt,
                "run_id": run_id,
                "outcome": outcome,
                "class": failure_class,
                "error": text,
                "evidence": evidence,
                "acceptance": acceptance,
                "cost_usd": reported(cost_usd, MAX_USD),
                "retry_after_s": reported(retry_after_s, MAX_WAIT_S),
                "usage": usage,
                "signature": _signature(failure_class, evidence, text) if signed else None,
            }
        )
    ]
