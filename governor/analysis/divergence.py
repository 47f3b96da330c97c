"""What-if's divergence: where a re-fold under another policy parts from the record.

Rules (SPEC §9):
    * The recorded *outcomes* are facts; the *actions* (requesting a plan, applying it,
      starting an attempt, accepting work) were decisions of the recorded policy. Each
      recorded action is checked against the other policy's decision just before it: the
      first action it would not have taken is the **divergence** (``_diverges``).
    * The other policy replaces the recorded one in ``goal.created`` and in the limits
      each ``work.created`` froze; a recorded ``budget.raised`` still raises, but never
      lowers a limit the other policy already puts higher (``_retarget``).
    * A re-fold's result (``WhatIf``) is ``same``, ``stopped_earlier`` (a known outcome)
      or ``censored`` (what follows was never observed).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

from governor.core.budgets import BUDGETS, BY_FIELD
from governor.core.decision import Decision, WorkDecision
from governor.core.events import (
    BudgetRaised,
    Event,
    GoalCreated,
    PlanApplied,
    PlanCompleted,
    PlanProposed,
    PlanRequested,
)
from governor.core.fold import evolve
from governor.core.policy import Policy
from governor.core.proposal import check_decision, check_proposal
from governor.core.rules.decider import Decider
from governor.core.verbs import current_limit
from governor.core.view import GoalView
from governor.core.work_events import AttemptStarted, WorkAccepted, WorkCreated

Outcome = Literal["same", "stopped_earlier", "censored"]


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first recorded action the other policy would not have taken."""

    seq: int
    event_type: str
    kind: Literal["stop", "wait", "other"]
    """``stop``: it would have stopped; ``wait``: it would still have been waiting;
    ``other``: it would have acted differently (e.g. replanned instead of retrying)."""
    decision: Decision
    """The other policy's decision just before that event."""


@dataclass(frozen=True, slots=True)
class WhatIf:
    """A history re-folded under another policy."""

    policy: Policy
    outcome: Outcome
    divergence: Divergence | None
    final: Decision
    """The other policy's decision where its story ends: at a stop, or after the last event."""
    recorded_final: Decision
    events: int
    view: GoalView
    """The other policy's view where its story ends (for completing a censored tail)."""

    @property
    def known(self) -> bool:
        return self.outcome != "censored"


def _retarget(event: Event, policy: Policy, recorded: Policy, view: GoalView) -> Event | None:
    """The event as the other policy would have recorded it (None: it changes nothing)."""
    if isinstance(event, GoalCreated):
        return event.model_copy(update={"policy": policy})
    if isinstance(event, WorkCreated):
        update = {
            b.field: getattr(policy, b.field)
            for b in BUDGETS
            if b.scope == "item" and getattr(policy, b.field) != getattr(recorded, b.field)
        }
        return event.model_copy(update=update) if update else event
    if isinstance(event, BudgetRaised):
        current = current_limit(view, event.ledger, event.work_id)
        return event if current is None or event.to > current else None
    return event


_ACTIONS: Final = frozenset({"plan.requested", "attempt.started"})
_RUNNER_ACTIONS: Final = frozenset({"plan.applied", "plan.completed", "work.accepted"})
"""Actions only when the runner took them (an operator's are facts); ``work.created`` is
part of applying a plan (before or after ``plan.applied``): not an action."""


def _is_action(event: Event) -> bool:
    kind = event.type  # one type string per event class (``EVENT_CLASSES``)
    return kind in _ACTIONS or (kind in _RUNNER_ACTIONS and event.actor == "governor")


def _allows(decision: Decision, event: Event) -> bool:
    """Would this decision have taken the recorded action?"""
    match event:
        case PlanRequested():
            return decision.next_action == "plan"
        case AttemptStarted():
            return decision.next_action == "run" and event.work_id in decision.work_ids
        case PlanApplied() | PlanCompleted():
            return decision.next_action == "apply"
        case WorkAccepted():
            return decision.next_action == "accept" and event.work_id in decision.work_ids
        case _:
            return True


def _diverges(
    decider: Decider, event: Event
) -> tuple[Literal["stop", "wait", "other"], Decision] | None:
    """Would this view's policy not have recorded this event? (kind, decision) if so.

    An action is checked against the decision just before it; a proposal against the
    policy's size bounds and, like a new reply, its decision (a proposal too large for the
    policy, or an ``apply`` where its milestone prompt allows only ``complete``, would have
    failed, charged: what the planner would have said instead was never observed).
    """
    view = decider.view
    if _is_action(event):
        before = decider.decide(event.at, with_ledger=False)
        return None if _allows(before, event) else (_kind(before), before)
    if isinstance(event, PlanProposed) and (
        check_proposal(view, event.work) or check_decision(view, event.decision)
    ):
        return "other", decider.decide(event.at, with_ledger=False)
    return None


def _kind(decision: Decision) -> Literal["stop", "wait", "other"]:
    if decision.is_stopped:
        return "stop"
    return "wait" if decision.status == "waiting" else "other"


def _resumable(policy: Policy, recorded: Policy) -> bool:
    """Whether ``policy`` differs from ``recorded`` only in limits the fold never reads: of
    the goal or of a run (an item's are frozen into its ``work.created``; the upstream
    back-off sets a cooldown)."""
    return _goal_only(differing(policy, recorded))


def _goal_only(fields: Iterable[str]) -> bool:
    """Whether these are all limits of the goal or of a run."""
    for name in fields:
        budget = BY_FIELD.get(name)
        if budget is None or budget.scope == "item":
            return False
    return True


def differing(policy: Policy, other: Policy) -> list[str]:
    """The fields in which two policies differ, in the order of ``Policy``'s fields."""
    mine, theirs = policy.__dict__, other.__dict__  # the fields' values (pydantic keeps them)
    if mine == theirs:
        return []
    return [name for name in _FIELDS if mine[name] != theirs[name]]


_FIELDS: Final = tuple(Policy.model_fields)


def _fold(view: GoalView, retargeted: Event | None, event: Event) -> None:
    if retargeted is not None:
        evolve(view, retargeted)
    else:  # a raise the other policy already exceeds: time still passes
        view.seq, view.last_at = event.seq, event.at


def _compare(final: Decision, recorded: Decision) -> Outcome:
    if (final.status, final.next_action) == (recorded.status, recorded.next_action):
        return "same"
    if final.is_stopped:
        return "stopped_earlier"
    return "censored"


def _stop(item: WorkDecision) -> tuple[str | None, str] | None:
    """What stops an item (as rule ``goal.10`` reads it), or None."""
    stopped = (item.status, item.next_action) == ("blocked", "none") and item.blocked_on != "work"
    return (item.blocked_on, item.reason) if stopped else None


def stopped_by_change(mine: Decision, recorded: Decision) -> Decision:
    """``mine`` (the other policy's decision) naming the item the change stops.

    Rule ``goal.10`` names the first stopped item of the plan: one the recorded policy
    (``recorded``: its decision at the same point) stopped the same way too says nothing
    of the change. The first item the change stops (or stops otherwise) is named instead,
    as rule ``goal.10`` words it.
    """
    if mine.rule != "goal.10" or not mine.work_ids:
        return mine
    before = {item.work_id: _stop(item) for item in recorded.items}
    changed = [i for i in mine.items if _stop(i) is not None and before.get(i.work_id) != _stop(i)]
    if not changed or mine.work_ids[0] in {i.work_id for i in changed}:
        return mine
    item = changed[0]
    return mine._replace(
        reason=f"{item.work_id}: {item.reason}",
        blocked_on=item.blocked_on,
        work_ids=(item.work_id,),
    )
