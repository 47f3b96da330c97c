"""What-if: re-fold a history's recorded outcomes under another policy, without running an agent.

Rules (SPEC §9):
    * The recorded *outcomes* (what planners and workers answered, how runs ended, what
      operators did) are facts; the *actions* (requesting a plan, applying it, starting
      an attempt, accepting work) were decisions of the recorded policy. Under another
      policy each recorded action is checked against that policy's decision just before
      it: the first action it would not have taken is the **divergence**.
    * If the other policy stops there (a budget spent, an upstream bound reached), the
      outcome is **known**: the goal would have stopped earlier, at that seq, for that
      reason. If it would have done something else (waited longer, planned instead of
      retrying), or would have gone on past the recorded end, what happens next was never
      observed: the outcome is **censored**.
    * The other policy replaces the recorded one in ``goal.created`` and in the limits
      each ``work.created`` froze; a recorded ``budget.raised`` still raises, but never
      lowers a limit the other policy already puts higher.
    * With the recorded policy nothing diverges and every decision is reproduced exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from governor.core.budgets import BUDGETS, BY_FIELD, BY_NAME, Budget, outage_wait_s
from governor.core.decide import decide
from governor.core.decision import Decision
from governor.core.events import (
    AttemptStarted,
    BudgetRaised,
    Event,
    GoalCreated,
    PlanApplied,
    PlanCompleted,
    PlanProposed,
    PlanRequested,
    WorkAccepted,
    WorkCreated,
)
from governor.core.history import HistoryChecker, check_proposal, empty_history
from governor.core.policy import Policy
from governor.core.verbs import current_limit
from governor.core.view import GoalView, WorkState, evolve

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


def _is_action(event: Event) -> bool:
    if isinstance(event, PlanRequested | AttemptStarted):
        return True
    is_runner = event.actor == "governor"
    # work.created is part of applying a plan (before or after plan.applied): not an action
    return is_runner and isinstance(event, PlanApplied | PlanCompleted | WorkAccepted)


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
    view: GoalView, event: Event
) -> tuple[Literal["stop", "wait", "other"], Decision] | None:
    """Would this view's policy not have recorded this event? (kind, decision) if so.

    An action is checked against the decision just before it; a proposal against the
    policy's size bounds (a proposal too large for the policy would have failed, charged).
    """
    if _is_action(event):
        before = decide(view, event.at, with_ledger=False)
        return None if _allows(before, event) else (_kind(before), before)
    if isinstance(event, PlanProposed) and check_proposal(view, event.work):
        return "other", decide(view, event.at, with_ledger=False)
    return None


def _kind(decision: Decision) -> Literal["stop", "wait", "other"]:
    if decision.is_stopped:
        return "stop"
    return "wait" if decision.status == "waiting" else "other"


@dataclass(slots=True)
class Demands:
    """The most a history ever asked of each budget: above it, a limit changes nothing.

    A limit of a budget that the history never came close to cannot change any recorded
    decision, nor the last one: every value above ``most`` behaves like ``most + 1``
    (``Budget.bucket``). So two policies with the same *key* re-fold a history
    identically (tested). The key covers every policy field: each budget of
    ``governor.core.budgets`` by its bucket, every other field by its value.
    """

    most: dict[str, float] = field(default_factory=lambda: dict.fromkeys(BY_NAME, 0))
    """Budget name -> the largest value its counter took."""
    refused: bool = False
    """Whether any run was refused upstream (only then does the back-off matter)."""

    def note(self, view: GoalView, event: Event) -> None:
        work_id = getattr(event, "work_id", None)
        item = view.work.get(work_id) if work_id is not None else None
        for budget in BUDGETS:
            for holder in _holders(budget, item):
                used = budget.used(view, holder)
                self.most[budget.name] = max(self.most[budget.name], used)
        self.refused = self.refused or getattr(event, "failure_class", None) == "upstream"

    def key(self, policy: Policy, names: Iterable[str] | None = None) -> tuple[object, ...]:
        """The policy as far as this history can tell it apart from others (``names``: only
        these fields, for policies alike in every other)."""
        parts: list[object] = []
        for name in Policy.model_fields if names is None else names:
            value = getattr(policy, name)
            budget = BY_FIELD.get(name)
            if budget is not None:
                parts.append(budget.bucket(value, self.most[budget.name]))
            elif name == "upstream_backoff":
                parts.append(value if self.refused else None)
            else:
                parts.append(value)
        return tuple(parts)


def _holders(budget: Budget, item: WorkState | None) -> tuple[WorkState | None, ...]:
    """Where a budget's counter is read after an event: the goal, the event's item, or both
    (a per-run budget counts the plan in flight and the item's attempt)."""
    if budget.scope == "goal":
        return (None,)
    if budget.scope == "item":
        return (item,) if item is not None else ()
    return (None, item) if item is not None else (None,)


def first_difference(
    rises: dict[str, list[tuple[int, float]]],
    refused_at: int | None,
    end: int,
    policy: Policy,
    other: Policy,
) -> int:
    """The first event (index) before which two policies might decide differently, given
    when each budget's demand grew (``rises``) and the first refusal (``end``: never)."""
    first = end
    for name in Policy.model_fields:
        mine, theirs = getattr(policy, name), getattr(other, name)
        if mine == theirs:
            continue
        budget = BY_FIELD.get(name)
        if budget is None:
            if name != "upstream_backoff":
                return 0
            first = min(first, end if refused_at is None else refused_at)
            continue
        if mine is None or theirs is None:
            return 0
        bound = min(mine, theirs)
        for index, most in rises.get(budget.name, ()):
            if (most > bound) if budget.over else (most >= bound):
                first = min(first, index)  # time budgets count up to the event itself
                break
    return first


@dataclass(slots=True)
class Trace:
    """A history analysed once under its recorded policy, ready to be re-folded under others.

    An action the recorded policy itself would not have taken was forced from outside (an
    operator, a hand-edited history); it is replayed as a fact under every policy.
    """

    events: list[Event]
    forced: frozenset[int]
    """Seqs of recorded actions the recorded policy did not decide."""
    recorded_final: Decision
    policy: Policy
    """The recorded policy (from ``goal.created``)."""
    demands: Demands
    """The most the history ever asked of each budget."""
    goal_id: str = ""
    now: datetime | None = None
    """When its final decision was taken (None: at its last event); ``under`` decides there too."""
    rises: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    """Budget name -> (event index, its demand from then on), each time the demand grew."""
    refused_at: int | None = None
    """The index of the first event refused upstream (None: never)."""

    def first_check(self, policy: Policy) -> int:
        """The first event whose action ``policy`` might decide otherwise than the record.

        Before it, every budget on which the two policies differ asked less than either
        limit (so neither was near: the decisions are the recorded ones, as ``Demands.key``
        argues for whole histories), and no other field differs. Re-folding skips the
        decisions there.
        """
        return first_difference(self.rises, self.refused_at, len(self.events), policy, self.policy)

    @classmethod
    def of(
        cls,
        events: Iterable[Event],
        *,
        now: datetime | None = None,
        keep: bool = True,
        source: str | None = None,
    ) -> Trace:
        """Check and analyse a history once; ``keep=False`` streams it (pass the events
        again to ``under``).

        The history is checked as it is read (``governor.core.history``; positions count
        as lines): a what-if, an explanation or a tune never advises on a history that
        breaks the format.

        Raises:
            HistoryError: at the first event that breaks a rule of the history format
                (``source`` names the history).
        """
        checker, forced, kept, demands = HistoryChecker(source), set(), [], Demands()
        rises: dict[str, list[tuple[int, float]]] = {}
        refused_at: int | None = None
        for line, event in enumerate(events, start=1):
            checker.verify(event, line)
            recorded = checker.view
            if recorded.created is not None and _diverges(recorded, event) is not None:
                forced.add(event.seq)
            checker.advance(event)
            before = dict(demands.most)
            demands.note(recorded, event)
            for name, grown in demands.most.items():
                if grown > before[name]:
                    rises.setdefault(name, []).append((line - 1, grown))
            if refused_at is None and demands.refused:
                refused_at = line - 1
            if keep:
                kept.append(event)
        recorded = checker.view
        if recorded.created is None or recorded.last_at is None:
            raise empty_history(source)
        final = decide(recorded, now or recorded.last_at)
        if now is not None:  # a park still open at ``now`` has asked that much of its budget
            most, waited = demands.most, outage_wait_s(recorded, now)
            if waited > most["outage_wait"]:
                most["outage_wait"] = waited
                rises.setdefault("outage_wait", []).append((max(len(kept) - 1, 0), waited))
        policy = recorded.created.policy
        return cls(
            kept,
            frozenset(forced),
            final,
            policy,
            demands,
            goal_id=recorded.goal_id,
            now=now,
            rises=rises,
            refused_at=refused_at,
        )

    def under(
        self, policy: Policy, *, now: datetime | None = None, events: Iterable[Event] | None = None
    ) -> WhatIf:
        """Re-fold the recorded outcomes under ``policy`` (``events`` again, if not kept)."""
        now = now or self.now
        view = GoalView()
        count = 0
        # with the events kept, the decisions before the first one that may differ are skipped
        skip = self.first_check(policy) if events is None else 0
        for count, event in enumerate(self.events if events is None else events, start=1):
            if count > skip and view.created is not None and event.seq not in self.forced:
                diverged = _diverges(view, event)
                if diverged is not None:
                    kind = diverged[0]
                    before = decide(view, event.at)  # again, with the ledger the record shows
                    outcome: Outcome = "stopped_earlier" if kind == "stop" else "censored"
                    divergence = Divergence(event.seq, event.type, kind, before)
                    return WhatIf(
                        policy, outcome, divergence, before, self.recorded_final, count, view
                    )
            _fold(view, _retarget(event, policy, self.policy, view), event)
        assert view.last_at is not None
        final = decide(view, now or view.last_at)
        return WhatIf(
            policy,
            _compare(final, self.recorded_final),
            None,
            final,
            self.recorded_final,
            len(self.events),
            view,
        )

    def steps(self, policy: Policy) -> Iterator[tuple[Event, GoalView]]:
        """Every event re-folded under ``policy`` (no divergence check), with the view after it."""
        view = GoalView()
        for event in self.events:
            _fold(view, _retarget(event, policy, self.policy, view), event)
            yield event, view


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


def whatif(events: Iterable[Event], policy: Policy, *, now: datetime | None = None) -> WhatIf:
    """Re-fold ``events`` under ``policy`` and say where, and whether, the story changes."""
    return Trace.of(events, now=now).under(policy, now=now)
