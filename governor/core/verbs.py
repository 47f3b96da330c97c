"""Operator verbs: what a person may do to a goal, as events, refused when the rules say no.

Rules (SPEC §3, §6.1, §6.3):
    * ``budget.raised`` is the only way past an exhausted budget; it only raises, it
      names who and why, and there is no reset.
    * ``work.retried`` is allowed after an environment, decision or upstream stop, or a
      charged failure, or on passed work awaiting review (``accept_passing`` off: the
      review's rejection), while the item's charged budget remains; it resets the item's
      uncharged window. Its reason is the answer to a decision, or what to change.
    * ``work.reopened`` never resets the charged count.
    * ``goal.resumed`` clears a planner stop (environment, decision or the upstream
      bound, or a planner that failed the same way again and again, SPEC §12.10) without
      spending budget; its reason is the answer to a decision, and reaches the next prompt.
    * ``answer`` is no verb of its own: it records the answer to the goal's question
      (``governor.core.question``) with the verb that answers it, ``work.retried`` or
      ``goal.resumed``, so an answer from the CLI, the Python API or LangGraph's
      ``interrupt`` is the same event.
    * Abandoning a running attempt finishes it as ``abandoned``: charged, so discarding
      between attempts never makes a budget unbounded. Cancelling a goal abandons each
      attempt still running, just before ``goal.cancelled``.
"""

from __future__ import annotations

from datetime import datetime

from governor.core import budgets, headroom
from governor.core.events import BudgetRaised, Event, GoalCancelled, GoalResumed, PlanRejected
from governor.core.policy import LedgerName, check_policy_value
from governor.core.question import question
from governor.core.record_head import ensure_open, event_head
from governor.core.record_work import finish_attempt, work_item
from governor.core.rules.decide import decide
from governor.core.text import quoted
from governor.core.view import GoalView, WorkState
from governor.core.work_events import WorkAccepted, WorkCancelled, WorkReopened, WorkRetried
from governor.errors import CommandRefusedError, InputError, NotFoundError


def _refuse(view: GoalView, detail: str) -> CommandRefusedError:
    return CommandRefusedError(detail, goal_id=view.goal_id)


def _reason(reason: str | None, verb: str) -> str:
    if not reason or not reason.strip():
        raise CommandRefusedError(f"{verb} needs a reason")
    return reason.strip()


def reject_plan(
    view: GoalView, *, plan_id: str, reason: str, at: datetime, actor: str
) -> list[Event]:
    """Reject a proposal (charged); the reason reaches the next planner prompt."""
    ensure_open(view)
    plan = view.plans.get(plan_id)
    if plan is None:
        raise NotFoundError(f"{view.goal_id}: no plan {plan_id}")
    if plan.status != "proposed":
        raise _refuse(view, f"plan {plan_id} is {plan.status}, not proposed")
    return [
        PlanRejected(
            **event_head(view, at, actor, reason=_reason(reason, "plan reject")), plan_id=plan_id
        )
    ]


def _settleable(view: GoalView, work_id: str, state: str, running: str) -> None:
    """Refuse to settle (accept or cancel) an item that already is, or whose attempt runs.

    ``running`` says why a running item is refused; ``{}`` become its attempt and id.
    """
    ensure_open(view)
    item = work_item(view, work_id)
    if getattr(item, state):
        raise _refuse(view, f"{work_id} is already {state}")
    if item.running:
        raise _refuse(view, running.format(item.attempt, work_id))


def accept_work(
    view: GoalView, *, work_id: str, at: datetime, actor: str, reason: str | None = None
) -> list[Event]:
    """Accept a work item (normally one whose latest attempt succeeded)."""
    _settleable(view, work_id, "accepted", "attempt {} of {} is still running")
    return [WorkAccepted(**event_head(view, at, actor, reason=reason), work_id=work_id)]


def cancel_work(
    view: GoalView, *, work_id: str, at: datetime, actor: str, reason: str | None = None
) -> list[Event]:
    """Cancel a work item; a running attempt must be abandoned first."""
    _settleable(view, work_id, "cancelled", "attempt {} of {} is running; abandon it first")
    return [WorkCancelled(**event_head(view, at, actor, reason=reason), work_id=work_id)]


def reopen_work(
    view: GoalView, *, work_id: str, at: datetime, actor: str, reason: str | None = None
) -> list[Event]:
    """Reopen an accepted or cancelled item; its charged attempts stay spent."""
    ensure_open(view)
    item = work_item(view, work_id)
    if not (item.accepted or item.cancelled):
        raise _refuse(view, f"{work_id} is neither accepted nor cancelled")
    return [WorkReopened(**event_head(view, at, actor, reason=reason), work_id=work_id)]


def _in_review(view: GoalView, item: WorkState) -> bool:
    """An item whose latest attempt passed and waits for a person's review (SPEC §6.1 work.5
    without ``accept_passing``): retrying it with what to change is how a review rejects it."""
    return item.outcome == "succeeded" and not view.policy.accept_passing


def retry_work(
    view: GoalView, *, work_id: str, reason: str, at: datetime, actor: str
) -> list[Event]:
    """Force a retry of a stopped or failed item, or of passed work under review (the
    reason says what to change), while its charged budget remains."""
    ensure_open(view)
    item = work_item(view, work_id)
    stopped = item.outcome not in (None, "succeeded") or _in_review(view, item)
    if item.accepted or item.cancelled or item.running or not stopped:
        raise _refuse(view, f"{work_id} has no failed attempt to retry")
    if item.answered:
        raise _refuse(
            view,
            f"{work_id} was already retried and has not run since; the first answer stands: "
            f"{quoted(item.guidance or '')}",
        )
    if not headroom.item_attempts_left(view, item):
        raise _refuse(
            view,
            f"{work_id} has spent its {item.max_attempts} attempts; raise its budget first "
            f"(governor raise {view.goal_id} --ledger attempts --work {work_id} --to N --reason ...)",
        )
    return [
        WorkRetried(
            **event_head(view, at, actor, reason=_reason(reason, "work retry")), work_id=work_id
        )
    ]


def abandon_attempt(
    view: GoalView, *, work_id: str, reason: str, at: datetime, actor: str
) -> list[Event]:
    """Finish a running attempt as ``abandoned`` (charged)."""
    ensure_open(view)
    item = work_item(view, work_id)
    if not item.running or item.run_id is None:
        raise _refuse(view, f"{work_id} has no attempt in flight")
    return finish_attempt(
        view,
        work_id=work_id,
        run_id=item.run_id,
        at=at,
        outcome="abandoned",
        error=_reason(reason, "abandon"),
        actor=actor,
    )


def resume_goal(view: GoalView, *, reason: str, at: datetime, actor: str) -> list[Event]:
    """Clear a planner stop (environment, decision, upstream, the same failure again)
    without spending budget."""
    ensure_open(view)
    plan = view.latest_plan
    if (
        plan is None
        or plan.status != "failed"
        or plan.resumed
        or (plan.failure_class is None and not headroom.repeats_itself(view))
    ):
        raise _refuse(
            view, "there is no planner stop to clear (for a stopped work item use `work retry`)"
        )
    return [GoalResumed(**event_head(view, at, actor, reason=_reason(reason, "resume")))]


def answer(view: GoalView, *, answer: str, at: datetime, actor: str) -> list[Event]:
    """Answer the question the goal stops on (decided at ``at``) with the verb that answers it."""
    asked = question(view, decide(view, at, with_ledger=False))
    if asked is None:
        raise _refuse(view, "no question is waiting for an answer")
    if not answer.strip():
        raise _refuse(view, "an answer needs some text")
    if asked.work_id is not None:
        return retry_work(view, work_id=asked.work_id, reason=answer, at=at, actor=actor)
    return resume_goal(view, reason=answer, at=at, actor=actor)


def cancel_goal(
    view: GoalView,
    *,
    at: datetime,
    actor: str,
    reason: str | None = None,
    close_running: bool = True,
) -> list[Event]:
    """Stop the goal for good; each attempt still running is finished first as
    ``abandoned`` (its agent is killed with the goal), so none stays running for ever
    and its time is counted — after ``goal.cancelled`` no event is valid (SPEC §11.2).
    ``close_running=False`` writes ``goal.cancelled`` alone, as governor did before
    (a Temporal workflow replaying a history recorded then: ``temporal.workflow``)."""
    ensure_open(view)
    events: list[Event] = []
    for item in view.work.values() if close_running else ():
        if item.running and item.run_id is not None:
            [finished] = finish_attempt(
                view,
                work_id=item.work_id,
                run_id=item.run_id,
                at=at,
                outcome="abandoned",
                error="the goal was cancelled while this attempt ran",
                actor=actor,
            )
            events.append(finished.model_copy(update={"seq": view.seq + len(events) + 1}))
    offset = len(events) + 1
    return [*events, GoalCancelled(**event_head(view, at, actor, offset, reason=reason))]


def current_limit(view: GoalView, name: LedgerName, work_id: str | None = None) -> float | None:
    """The limit a ledger has now (None: no limit)."""
    budget = budgets.ledger(name)
    if budget.scope == "item":
        if work_id is None:
            raise _refuse(view, f"ledger '{name}' is per work item: name the item")
        return budget.limit(view, work_item(view, work_id))
    if work_id is not None:
        raise _refuse(view, f"ledger '{name}' is goal-wide and takes no work item")
    return budget.limit(view)


def raise_budget(
    view: GoalView,
    *,
    ledger: LedgerName,
    to: float,
    reason: str,
    at: datetime,
    actor: str,
    work_id: str | None = None,
) -> list[Event]:
    """Raise a limit past its current value, recorded with who and why.

    Raises:
        InputError: ``ledger`` is not a raisable ledger, or ``to`` is not a number.
        CommandRefusedError: the goal ended, or ``to`` is out of range or not higher.
    """
    ensure_open(view)
    if ledger not in budgets.LEDGERS:
        raise InputError(
            f"{view.goal_id}: unknown ledger '{ledger}'; one of {', '.join(budgets.LEDGERS)}"
        )
    if isinstance(to, bool) or not isinstance(to, int | float):
        raise InputError(f"{view.goal_id}: the new limit must be a number, not {to!r}")
    problem = check_policy_value(budgets.ledger(ledger).field, to)
    if problem:
        raise _refuse(
            view, f"{ledger} cannot be raised to {to:g}: {problem[0].lower()}{problem[1:]}"
        )
    current = current_limit(view, ledger, work_id)
    if current is not None and to <= current:
        raise _refuse(view, f"{ledger} is {current:g}; the new limit must be higher, not {to:g}")
    return [
        BudgetRaised(
            **event_head(view, at, actor, reason=_reason(reason, "raise")),
            ledger=ledger,
            to=to,
            work_id=work_id,
        )
    ]
