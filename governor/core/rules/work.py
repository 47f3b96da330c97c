"""Work item decisions: SPEC §6.1 as one ordered table of named rules.

Rules (first match wins):
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
    work.9  charged failure -> blocked/retry while budget remains; else budget_exhausted.
            While budget remains, its last max_same_failures charged failures sharing one
            signature (SPEC §12.10) stop it early: budget_exhausted ("work.same_failure":
            more tries will not help; with its attempts spent too, they are named)

A failure whose class fails the evidence gate is an ordinary charged failure (work.9):
the view only carries a class for failures that passed it.

The table is the code that runs: ``decide_work`` asks its rows in order, and nothing
else decides an item.

An item's decision reads only the item, whether its dependencies are accepted, the
policy and, against the item's own ``not_before``, the time (``governor.core.rules.memo``
relies on it to decide again only the items that may have changed).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Final

from governor.core.decision import WorkDecision
from governor.core.headroom import item_attempts_left, item_uncharged_window_full, repeats_itself
from governor.core.text import said, same_way, stamp
from governor.core.view import GoalView, WorkState

WorkRule = Callable[[GoalView, WorkState, datetime], WorkDecision | None]

POLICY_READ: Final = ("accept_passing", "max_same_failures")
"""The only policy fields a work item's decision reads (its other limits are its own,
frozen at ``work.created``): a policy that differs in none of them decides every item
alike, so the memo keeps its decisions (``governor.core.rules.memo``;
``tests/core/test_decider.py``)."""


def exhausted_its(max_attempts: int) -> str:
    """``exhausted its N attempts``: SPEC §6.1 rule 9's reason, word for word for every N
    (``exhausted its 1 attempts`` too), as rule 8's ``after N consecutive uncharged
    attempts`` is: a reader (or a check) looking for the spec's sentence finds it."""
    return f"exhausted its {max_attempts} attempts"


def _settled(view: GoalView, item: WorkState, now: datetime) -> WorkDecision | None:
    if item.accepted:
        return WorkDecision(
            work_id=item.work_id,
            status="succeeded",
            next_action="none",
            reason="accepted",
            rule="work.1",
        )
    if item.cancelled:
        return WorkDecision(
            work_id=item.work_id,
            status="cancelled",
            next_action="none",
            reason="cancelled",
            rule="work.1",
        )
    return None


def _dependencies(view: GoalView, item: WorkState, now: datetime) -> WorkDecision | None:
    if not item.spec.depends_on:
        return None
    pending = [d for d in item.spec.depends_on if not (d in view.work and view.work[d].accepted)]
    if not pending:
        return None
    why = f"waiting for {', '.join(pending)}"
    return WorkDecision(
        work_id=item.work_id,
        status="waiting",
        next_action="wait_for_dependencies",
        reason=why,
        rule="work.2",
    )


def _fresh(view: GoalView, item: WorkState, now: datetime) -> WorkDecision | None:
    if not item.fresh:
        return None
    if item_attempts_left(view, item):
        why = f"ready for attempt {item.attempts_used + 1}"
        return WorkDecision(
            work_id=item.work_id, status="ready", next_action="run", reason=why, rule="work.3"
        )
    why = exhausted_its(item.max_attempts)
    return WorkDecision(
        work_id=item.work_id,
        status="budget_exhausted",
        next_action="none",
        reason=why,
        rule="work.3",
        exhausted="attempts",
    )


def _running(view: GoalView, item: WorkState, now: datetime) -> WorkDecision | None:
    if not item.running:
        return None
    why = f"attempt {item.attempt} is running"
    return WorkDecision(
        work_id=item.work_id, status="running", next_action="wait", reason=why, rule="work.4"
    )


def _passed(view: GoalView, item: WorkState, now: datetime) -> WorkDecision | None:
    if item.outcome != "succeeded":
        return None
    why = f"attempt {item.attempt} passed its acceptance criteria"
    if view.policy.accept_passing:
        return WorkDecision(
            work_id=item.work_id,
            status="in_review",
            next_action="accept",
            reason=why,
            rule="work.5",
        )
    why += "; awaiting review"
    return WorkDecision(
        work_id=item.work_id,
        status="in_review",
        next_action="review",
        reason=why,
        rule="work.5",
        blocked_on="operator",
    )


def _environment(view: GoalView, item: WorkState, now: datetime) -> WorkDecision | None:
    if item.failure_class != "environment":
        return None
    ref = item.finish.evidence.ref if item.finish and item.finish.evidence else None
    missing = said(item.finish.error if item.finish else None, ref or "unknown")
    why = f"attempt {item.attempt} could not start; a required precondition is missing: {missing}"
    return WorkDecision(
        work_id=item.work_id,
        status="blocked",
        next_action="none",
        reason=why,
        rule="work.6",
        blocked_on="environment",
    )


def _decision(view: GoalView, item: WorkState, now: datetime) -> WorkDecision | None:
    if item.failure_class != "decision":
        return None
    question = said(item.finish.error if item.finish else None, "no question given")
    why = f"attempt {item.attempt} needs a person to decide: {question}"
    return WorkDecision(
        work_id=item.work_id,
        status="blocked",
        next_action="none",
        reason=why,
        rule="work.7",
        blocked_on="decision",
    )


def _upstream(view: GoalView, item: WorkState, now: datetime) -> WorkDecision | None:
    if item.failure_class != "upstream":
        return None
    n, bound = item.consecutive_uncharged, item.max_uncharged_attempts
    if item_uncharged_window_full(view, item):
        why = f"blocked waiting on an outside service after {n} consecutive uncharged attempts"
        return WorkDecision(
            work_id=item.work_id,
            status="blocked",
            next_action="none",
            reason=why,
            rule="work.8",
            blocked_on="upstream",
        )
    if item.not_before is not None and now < item.not_before:
        why = (
            f"the outside service refused attempt {item.attempt} (uncharged); "
            f"waiting until {stamp(item.not_before)}"
        )
        return WorkDecision(
            work_id=item.work_id,
            status="waiting",
            next_action="wait",
            reason=why,
            rule="work.8",
            blocked_on="upstream",
            not_before=item.not_before,
        )
    why = f"the outside service refused attempt {item.attempt} (uncharged, {n} of {bound} in a row); retry"
    return WorkDecision(
        work_id=item.work_id, status="blocked", next_action="retry", reason=why, rule="work.8"
    )


def _charged(view: GoalView, item: WorkState, now: datetime) -> WorkDecision | None:
    outcome = (item.outcome or "failed").replace("_", " ")
    if item_attempts_left(view, item):
        if item.same_failures and repeats_itself(view, item):  # SPEC §12.10: stop early
            why = same_way(item.same_failures, item.finish.error if item.finish else None)
            return WorkDecision(
                work_id=item.work_id,
                status="budget_exhausted",
                next_action="none",
                reason=why,
                rule="work.same_failure",
                exhausted="same_failures",
            )
        why = f"attempt {item.attempt} {outcome} (charged {item.charged_attempts} of {item.max_attempts}); retry"
        return WorkDecision(
            work_id=item.work_id, status="blocked", next_action="retry", reason=why, rule="work.9"
        )
    why = f"{exhausted_its(item.max_attempts)} (attempt {item.attempt} {outcome})"
    return WorkDecision(
        work_id=item.work_id,
        status="budget_exhausted",
        next_action="none",
        reason=why,
        rule="work.9",
        exhausted="attempts",
    )


WORK_RULES: Final[tuple[WorkRule, ...]] = (
    _settled,
    _dependencies,
    _fresh,
    _running,
    _passed,
    _environment,
    _decision,
    _upstream,
    _charged,
)
"""The work item rules of SPEC §6.1, in order; the first that returns a decision wins."""


def decide_work(view: GoalView, item: WorkState, now: datetime) -> WorkDecision:
    """The decision for one work item (SPEC §6.1): the first rule of ``WORK_RULES`` that
    answers."""
    for rule in WORK_RULES:  # pragma: no branch - the charged-failure rule always decides
        decision = rule(view, item, now)
        if decision is not None:
            return decision
    raise AssertionError("the charged-failure rule always decides")  # pragma: no cover
