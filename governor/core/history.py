"""History validation: the rules a stream must keep to be stored, replayed or imported.

Rules (SPEC §3):
    * It starts with exactly one ``goal.created``; every event has the same ``goal_id``.
    * ``seq`` is gapless from 1; ``at`` never decreases.
    * Every plan or work reference names something created earlier; a ``work.created``
      is one of the items of its plan's proposal (its id is ``<plan_id>-<key>``).
    * Attempt numbers are gapless per item and tied to ``attempt.started``; run ids
      are unique; ``attempt.continued`` names an attempt that is not finished; each
      attempt is finished at most once, by one of its runs.
    * Plans move requested -> proposed | failed, and proposed -> applied | rejected |
      completed; a proposal keeps the policy's size bounds (the same check the planner's
      reply gets, ``check_proposal``), and says ``complete`` only once a plan was applied
      (SPEC §12.4: a first ``complete`` is invalid at its line).
    * ``budget.raised`` only raises: the new limit is above the current one.
    * Nothing follows ``plan.completed`` or ``goal.cancelled`` (SPEC §11.2).
    * ``goal.parked`` names one of the goal's profiles, and a goal is parked once until a
      ``goal.resumed`` ends the park (SPEC §11.10).

The checker is a fold beside the view: it checks each event against the view of
everything before it, then evolves the view. It stops at the first broken rule. Like the
fold, it dispatches on ``event.type`` and reads only attributes, so an event's compiled
struct is checked alike (``governor.core.wire.decoder.decode_struct``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Final

from governor.core.budgets import ledger
from governor.core.events import (
    BudgetRaised,
    Event,
    GoalParked,
    PlanApplied,
    PlanCompleted,
    PlanRejected,
)
from governor.core.fold import evolve
from governor.core.policy import Policy
from governor.core.proposal import FIRST_COMPLETE, check_proposal
from governor.core.view import GoalView
from governor.core.work_events import AttemptContinued, AttemptFinished, AttemptStarted, WorkCreated
from governor.errors import HistoryError

_UNSET: Final = Policy.model_construct()
"""The policy of a view before its ``goal.created`` (which sets the goal's; nothing reads it
before): built once, as building a policy costs a third of checking a short history
(``Policy`` is frozen, so every checker may share it)."""


class HistoryChecker:
    """Checks one history event by event. ``check`` raises ``HistoryError`` at the first fault."""

    def __init__(self, source: str | None = None) -> None:
        self.view = GoalView(policy=_UNSET)
        self.source = source
        self._runs: set[str] = set()
        self._attempt_runs: dict[str, set[str]] = {}
        self._last_at: datetime | None = None

    def check(self, event: Event, line: int | None = None) -> GoalView:
        """Check one event against everything before it, then fold it into the view."""
        problem = self._problem(event)  # ``verify`` and ``advance`` inline (after every event)
        if problem:
            raise HistoryError(problem, line=line, source=self.source)
        self._last_at = event.at
        return evolve(self.view, event)

    def verify(self, event: Event, line: int | None = None) -> None:
        """Check one event against everything before it (``self.view``), folding nothing."""
        problem = self._problem(event)
        if problem:
            raise HistoryError(problem, line=line, source=self.source)

    def advance(self, event: Event) -> GoalView:
        """Fold a verified event into the view; returns the view."""
        self._last_at = event.at
        return evolve(self.view, event)

    def _problem(self, event: Event) -> str | None:  # noqa: PLR0911 - one return per rule
        view = self.view
        if view.created is None:
            if event.type != "goal.created":
                return f"the history must start with goal.created, not {event.type}"
        elif event.type == "goal.created":
            return "goal.created appears a second time"
        elif event.goal_id != view.goal_id:
            return f"goal_id '{event.goal_id}' differs from the history's '{view.goal_id}'"
        if event.seq != view.seq + 1:
            return f"seq {event.seq} breaks the sequence (expected {view.seq + 1})"
        if self._last_at is not None and event.at < self._last_at:
            return "at goes back in time (earlier than the previous event)"
        if view.ended:
            return f"{event.type} after {view.ended}: the goal has ended, no event may follow"
        return self._reference_problem(event)

    def _reference_problem(self, event: Event) -> str | None:  # noqa: PLR0911, PLR0912
        view = self.view
        match event.type:
            case "attempt.started":
                return self._started_problem(event)
            case "attempt.continued" | "attempt.finished":
                return self._run_problem(event)
            case "plan.requested":
                if event.plan_id in view.plans:
                    return f"plan '{event.plan_id}' is requested a second time"
                if event.sequence != view.plans_used + 1:
                    return f"plan sequence {event.sequence} should be {view.plans_used + 1}"
            case "plan.continued" | "plan.proposed" | "plan.failed":
                plan = view.plans.get(event.plan_id)
                if plan is None:
                    return f"{event.type} names unknown plan '{event.plan_id}'"
                if plan.status != "requested":
                    return f"{event.type}: plan '{event.plan_id}' already has an outcome ({plan.status})"
                if event.type == "plan.proposed":
                    if event.decision == "complete" and view.active_plan is None:
                        return f"plan.proposed: {FIRST_COMPLETE} (no plan was applied; SPEC §12.4)"
                    problems = check_proposal(view, event.work)
                    return f"plan.proposed: {problems[0]}" if problems else None
            case "plan.applied" | "plan.rejected" | "plan.completed":
                return self._resolution_problem(event)
            case "work.created":
                return self._work_created_problem(event)
            case "work.accepted" | "work.cancelled" | "work.reopened" | "work.retried":
                if event.work_id not in view.work:
                    return f"{event.type} names unknown work item '{event.work_id}'"
            case "budget.raised":
                return self._raise_problem(event)
            case "goal.parked":
                return self._parked_problem(event)
            case "budget.granted" | "budget.declined":
                request = view.budget_request
                if request is None or request.budget != event.budget:
                    return f"{event.type} answers no open request on '{event.budget}'"
            case "budget.expired":
                if not any(g.budget == event.budget for g in view.open_grants):
                    return f"budget.expired: no open grant on '{event.budget}' to end"
            case _:
                return None
        return None

    def _resolution_problem(self, event: PlanApplied | PlanRejected | PlanCompleted) -> str | None:
        plan = self.view.plans.get(event.plan_id)
        if plan is None:
            return f"{event.type} names unknown plan '{event.plan_id}'"
        if plan.status != "proposed" or plan.proposal is None:
            return f"{event.type}: plan '{event.plan_id}' is {plan.status}, not proposed"
        wanted = "complete" if event.type == "plan.completed" else "apply"
        if event.type != "plan.rejected" and plan.proposal.decision != wanted:
            return f"{event.type}: plan '{event.plan_id}' proposed '{plan.proposal.decision}'"
        if event.type == "plan.applied":
            keys = {f"{event.plan_id}-{spec.key}" for spec in plan.proposal.work}
            stray = [w for w in event.work_ids if w not in keys]
            if stray:
                return f"plan.applied: work id '{stray[0]}' is not in the proposal of '{event.plan_id}'"
        return None

    def _work_created_problem(self, event: WorkCreated) -> str | None:
        view = self.view
        if event.work_id in view.work:
            return f"work item '{event.work_id}' is created a second time"
        plan = view.plans.get(event.plan_id)
        if plan is None or plan.status not in ("proposed", "applied") or plan.proposal is None:
            return f"work.created names plan '{event.plan_id}', which has no proposal to apply"
        if event.work_id not in {f"{event.plan_id}-{spec.key}" for spec in plan.proposal.work}:
            return (
                f"work.created: '{event.work_id}' is not a work item of the proposal of "
                f"'{event.plan_id}' (work ids are <plan_id>-<key>)"
            )
        missing = [d for d in event.depends_on if d not in view.work]
        if missing:
            return f"work.created: '{event.work_id}' depends on unknown work item '{missing[0]}'"
        if view.created and event.profile not in view.created.profiles:
            return f"work.created: '{event.work_id}' names unknown profile '{event.profile}'"
        return None

    def _started_problem(self, event: AttemptStarted) -> str | None:
        item = self.view.work.get(event.work_id)
        if item is None:
            return f"attempt.started names unknown work item '{event.work_id}'"
        if event.attempt != item.attempts_used + 1:
            return (
                f"attempt.started: attempt {event.attempt} of '{event.work_id}' "
                f"should be {item.attempts_used + 1} (attempt numbers are gapless)"
            )
        if item.running:
            return f"attempt.started: attempt {item.attempt} of '{event.work_id}' is not finished"
        if event.run_id in self._runs:
            return f"run id '{event.run_id}' is used a second time"
        self._runs.add(event.run_id)
        self._attempt_runs[event.work_id] = {event.run_id}
        return None

    def _run_problem(self, event: AttemptContinued | AttemptFinished) -> str | None:
        item = self.view.work.get(event.work_id)
        if item is None:
            return f"{event.type} names unknown work item '{event.work_id}'"
        if event.attempt != item.attempt or item.attempts_used == 0:
            return f"{event.type}: '{event.work_id}' has no attempt {event.attempt} in flight"
        if not item.running:
            return f"{event.type}: attempt {event.attempt} of '{event.work_id}' is already finished"
        runs = self._attempt_runs.setdefault(event.work_id, set())
        if event.type == "attempt.continued":
            if event.run_id in self._runs:
                return f"run id '{event.run_id}' is used a second time"
            self._runs.add(event.run_id)
            runs.add(event.run_id)
        elif event.run_id not in runs:
            return (
                f"attempt.finished: run '{event.run_id}' is not a run of attempt "
                f"{event.attempt} of '{event.work_id}'"
            )
        return None

    def _parked_problem(self, event: GoalParked) -> str | None:
        view = self.view
        if view.parked is not None:
            return f"goal.parked: the goal is parked on '{view.parked.upstream}' already"
        if view.created and event.profile not in view.created.profiles:
            return f"goal.parked names unknown profile '{event.profile}'"
        return None

    def _raise_problem(self, event: BudgetRaised) -> str | None:
        item = self.view.work.get(event.work_id) if event.work_id is not None else None
        if event.work_id is not None and item is None:
            return f"budget.raised names unknown work item '{event.work_id}'"
        current = ledger(event.ledger).limit(self.view, item)
        if current is not None and event.to <= current:
            return f"budget.raised: {event.ledger} to {event.to:g} does not raise the limit ({current:g})"
        return None


def check_history(
    events: Iterable[tuple[int, Event]], *, source: str | None = None
) -> Iterator[tuple[int, Event, GoalView]]:
    """Check ``(line, event)`` pairs in order, yielding each with the view after it.

    Raises:
        HistoryError: at the first line that breaks a rule, naming it.
    """
    checker = HistoryChecker(source)
    count = 0
    for line, event in events:
        count += 1
        yield line, event, checker.check(event, line)
    if count == 0:
        raise empty_history(source)


def empty_history(source: str | None) -> HistoryError:
    """The error of a history without a single event."""
    return HistoryError("the history is empty (it must start with goal.created)", source=source)


def validate_events(events: Iterable[Event]) -> GoalView:
    """Check a whole stream of events (positions count as lines); return its view."""
    view = GoalView()
    for _, _, after in check_history(enumerate(events, start=1)):
        view = after
    return view
