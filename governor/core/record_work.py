"""Recording attempts: start, continue and finish a work item's runs as events.

Rules (SPEC §6.3, §8, §12.10):
    * The budget is checked before anything is created: a refused attempt creates no
      event (``BudgetExhaustedError`` / ``CommandRefusedError``).
    * ``attempt.started`` is recorded *before* the agent runs.
    * A run found started but unfinished is continued under the same number with a new
      run id, at no charge, at most ``max_continuations`` times; then it is finished as
      ``lost`` (charged).
    * A success is never classed; a run that failed or timed out carries its signature.
"""

from __future__ import annotations

from datetime import datetime

from governor.core.classify import tail
from governor.core.event_fields import AcceptanceReport, Outcome
from governor.core.events import Event
from governor.core.evidence import Evidence, FailureClass
from governor.core.headroom import continuations_left, item_attempts_left, total_attempts_left
from governor.core.numbers import MAX_USD, MAX_WAIT_S, reported
from governor.core.observation import NO_WINDOW, Usage, Window
from governor.core.record_head import ensure_open, event_head, failure_signature, refuse_unless
from governor.core.view import GoalView, WorkState
from governor.core.work_events import AttemptContinued, AttemptFinished, AttemptStarted
from governor.errors import CommandRefusedError, NotFoundError


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
    refuse_unless(
        item_attempts_left(view, item),
        view,
        "attempts",
        f"{work_id} has spent its {item.max_attempts} attempts",
    )
    refuse_unless(
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
    window: Window = NO_WINDOW,
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
                "signature": failure_signature(failure_class, evidence, text) if signed else None,
                **(window.fields() if failure_class == "upstream" else {}),
            }
        )
    ]
