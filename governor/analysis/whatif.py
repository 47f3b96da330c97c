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

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Final, Literal, cast

from governor.core.budgets import BUDGETS, BY_FIELD, BY_NAME, Budget, Counter, outage_wait_s
from governor.core.decide import decide
from governor.core.decision import Decision
from governor.core.events import (
    EVENT_CLASSES,
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
from governor.core.history import HistoryChecker, check_decision, check_proposal, empty_history
from governor.core.policy import Policy
from governor.core.verbs import current_limit
from governor.core.view import GoalView, WorkState, evolve, fold

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
    view: GoalView, event: Event
) -> tuple[Literal["stop", "wait", "other"], Decision] | None:
    """Would this view's policy not have recorded this event? (kind, decision) if so.

    An action is checked against the decision just before it; a proposal against the
    policy's size bounds and, like a new reply, its decision (a proposal too large for the
    policy, or an ``apply`` where its milestone prompt allows only ``complete``, would have
    failed, charged: what the planner would have said instead was never observed).
    """
    if _is_action(event):
        before = decide(view, event.at, with_ledger=False)
        return None if _allows(before, event) else (_kind(before), before)
    if isinstance(event, PlanProposed) and (
        check_proposal(view, event.work) or check_decision(view, event.decision)
    ):
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

    def note(self, view: GoalView, event: Event) -> list[str]:
        """Take in the counters after ``event``; returns the budgets whose demand grew."""
        most, grown = self.most, []
        for name, get in _GOAL_GETS:  # the counters that are one attribute of the view
            value = get(view)
            if value > most[name]:
                most[name] = value
                grown.append(name)
        for name, used in _GOAL_CALLS:
            value = used(view, None)
            if value > most[name]:
                most[name] = value
                grown.append(name)
        # read only off the events that carry them (a missing attribute is slow to ask for)
        work_id = getattr(event, "work_id") if event.type in _NAMES_ITEM else None  # noqa: B009
        item = view.work.get(work_id) if work_id is not None else None
        if item is not None:
            self._note_item(view, item, grown)
        if not self.refused and event.type in _CLASSED:
            self.refused = getattr(event, "failure_class") == "upstream"  # noqa: B009
        return grown

    def _note_item(self, view: GoalView, item: WorkState, grown: list[str]) -> None:
        """Take in the counters of the item an event names (and of its run in flight)."""
        most = self.most
        for name, get in _ITEM_GETS:  # the counters that are one attribute of the item
            value = get(item)
            if value > most[name]:
                most[name] = value
                if name not in grown:
                    grown.append(name)
        for name, used in _ITEM_CALLS:
            value = used(view, item)
            if value > most[name]:
                most[name] = value
                if name not in grown:
                    grown.append(name)

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

    def keys(
        self, policies: Sequence[Policy], names: Iterable[str] | None = None
    ) -> list[tuple[object, ...]]:
        """``key`` of each policy, a field at a time (a grid repeats a few values per field)."""
        columns: list[list[object]] = []
        for name in Policy.model_fields if names is None else names:
            values = _column(policies, name)
            budget = BY_FIELD.get(name)
            if budget is not None:
                most, buckets = self.most[budget.name], {}
                for value in values:
                    if value not in buckets:
                        buckets[value] = budget.bucket(cast("float | None", value), most)
                columns.append([buckets[value] for value in values])
            elif name == "upstream_backoff" and not self.refused:
                columns.append([None] * len(values))
            else:
                columns.append(values)
        if not columns:
            return [() for _ in policies]
        return list(zip(*columns, strict=True))


def _readers(
    budgets: Iterable[Budget], on_item: bool
) -> tuple[tuple[tuple[str, Callable[[object], float]], ...], tuple[tuple[str, Counter], ...]]:
    """How ``Demands.note`` reads these budgets' counters: (name, getter) of those that are
    one attribute (of the item, ``on_item``, else of the view: read without a call of ours),
    and (name, counter) of the others."""
    gets, calls = [], []
    for budget in budgets:
        get = budget.getter(on_item)
        if get is not None:
            gets.append((budget.name, get))
        else:
            calls.append((budget.name, budget.used))
    return tuple(gets), tuple(calls)


_GOAL_GETS, _GOAL_CALLS = _readers([b for b in BUDGETS if b.scope != "item"], on_item=False)
"""Budgets read on the goal after every event (a per-run one: on the plan in flight)."""
_ITEM_GETS, _ITEM_CALLS = _readers([b for b in BUDGETS if b.scope != "goal"], on_item=True)
"""Budgets read on the item an event names (a per-run one: on its attempt in flight)."""
_NAMES_ITEM: Final = frozenset(t for t, c in EVENT_CLASSES.items() if "work_id" in c.model_fields)
_CLASSED: Final = frozenset(
    t for t, c in EVENT_CLASSES.items() if "failure_class" in c.model_fields
)


def first_difference(
    rises: dict[str, list[tuple[int, float]]],
    refused_at: int | None,
    end: int,
    policy: Policy,
    other: Policy,
    *,
    fields: Sequence[str] | None = None,
) -> int:
    """The first event (index) before which two policies might decide differently, given
    when each budget's demand grew (``rises``) and the first refusal (``end``: never);
    ``fields``: those they differ in, if known."""
    first = end
    for name in differing(policy, other) if fields is None else fields:
        mine, theirs = getattr(policy, name), getattr(other, name)
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
    forced: frozenset[int] | None
    """Seqs of recorded actions the recorded policy did not decide (None: the events are
    kept, and an action is checked only where a re-fold would not take it: ``is_forced``)."""
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
    raised_at: int | None = None
    """The index of the first ``budget.raised`` (None: never)."""
    snapshots: dict[int, GoalView] = field(default_factory=dict, repr=False, compare=False)
    """Event index k -> the recorded view before event k (folded, never decided; read only):
    where re-folds resume (``resume``)."""
    asked: dict[int, bool] = field(default_factory=dict, repr=False, compare=False)
    """Event index -> whether its action was forced (``is_forced``, as asked)."""
    checked_at: list[int] | None = field(default=None, repr=False, compare=False)
    """The indices of the events a re-fold checks (``checks``)."""
    last_view: GoalView | None = field(default=None, repr=False, compare=False)
    """The recorded view after the last event (read only: copy it to act on it)."""

    def _parted(
        self, policy: Policy, index: int, event: Event, view: GoalView, ledger: bool
    ) -> WhatIf | None:
        """Where ``policy``'s re-fold parts from the record at event ``index`` (``view``:
        its view just before it), or None when it takes that event too (or was forced)."""
        diverged = _diverges(view, event)
        if diverged is None or self.is_forced(index, event, view):
            return None
        kind, before = diverged
        if ledger:  # again, with the ledger the record shows
            before = decide(view, event.at)
        outcome: Outcome = "stopped_earlier" if kind == "stop" else "censored"
        divergence = Divergence(event.seq, event.type, kind, before)
        return WhatIf(policy, outcome, divergence, before, self.recorded_final, index + 1, view)

    def is_forced(self, index: int, event: Event, view: GoalView) -> bool:
        """Whether the recorded policy would not have taken the action of ``event``, the
        ``index``-th (``view``: a re-fold's view before it, which the recorded fold equals
        but for the policy when ``resumable`` holds up to there, and whose decisions are
        then taken on; else the record is folded again)."""
        if self.forced is not None:
            return event.seq in self.forced
        known = self.asked.get(index)
        if known is not None:
            return known
        created = self.events[0]
        assert isinstance(created, GoalCreated)
        if self.resumable(view.policy, index):
            # the view's decisions are the recorded policy's too: it differs only in limits
            # of the goal or of a run, which no item decision reads (``work.POLICY_READ``)
            saved = view.policy, view.created
            view.policy, view.created = self.policy, created
            known = _diverges(view, event) is not None
            view.policy, view.created = saved
        else:
            recorded = fold(self._empty(), self.events[:index])
            known = _diverges(recorded, event) is not None
        self.asked[index] = known
        return known

    def _empty(self) -> GoalView:
        """A view before the first event (its policy set now: ``goal.created`` sets it
        again, and building the default policy is slow)."""
        return GoalView(policy=self.policy)

    def resumable(self, policy: Policy, index: int) -> bool:
        """Whether re-folding the first ``index`` events under ``policy`` gives the recorded
        view but for the policy (``resume``)."""
        if self.raised_at is not None and index > self.raised_at:
            return False
        return _resumable(policy, self.policy)

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
        raised_at: int | None = None
        most, note, recorded = demands.most, demands.note, checker.view
        for index, event in enumerate(events):
            if keep:
                checker.check(event, index + 1)
                kept.append(event)
            else:
                checker.verify(event, index + 1)
                if recorded.created is not None and _diverges(recorded, event) is not None:
                    forced.add(event.seq)
                checker.advance(event)
            for name in note(recorded, event):
                rises.setdefault(name, []).append((index, most[name]))
            if refused_at is None and demands.refused:
                refused_at = index
            if raised_at is None and event.type == "budget.raised":
                raised_at = index
        if recorded.created is None or recorded.last_at is None:
            raise empty_history(source)
        final = decide(recorded, now or recorded.last_at)
        if now is not None:  # a park still open at ``now`` has asked that much of its budget
            waited = outage_wait_s(recorded, now)
            if waited > most["outage_wait"]:
                most["outage_wait"] = waited
                rises.setdefault("outage_wait", []).append((max(len(kept) - 1, 0), waited))
        policy = recorded.created.policy
        snapshots = {}
        if keep:  # the recorded view after the last event (its decisions dropped: it is read only)
            recorded.decided = None
            snapshots[len(kept)] = recorded
        return cls(
            kept,
            None if keep else frozenset(forced),
            final,
            policy,
            demands,
            goal_id=recorded.goal_id,
            now=now,
            rises=rises,
            refused_at=refused_at,
            raised_at=raised_at,
            snapshots=snapshots,
            last_view=recorded,
        )

    def resume(self, policy: Policy, skip: int) -> tuple[GoalView, int]:
        """A view of the first ``k`` events re-folded under ``policy`` (``k``: ``skip`` when
        it can be taken from the record, else 0), and ``k``.

        Up to the first check, a re-fold under a policy that differs from the recorded one
        only in limits of the goal or of a run folds the same events as the record (the
        fold reads no such limit; no ``work.created`` changes and, before the first
        ``budget.raised``, no raise): the view is the recorded one with the other policy in
        ``goal.created``. It is copied from a snapshot of the record (equal to re-folding
        from the first event: tested on every pair of the golden and generated histories).
        """
        if skip <= 0 or skip > len(self.events) or not self.resumable(policy, skip):
            return self._empty(), 0
        view = self.snapshot(skip).copy()
        assert view.created is not None
        view.created = view.created.model_copy(update={"policy": policy})
        view.policy = policy
        return view, skip

    def snapshot(self, index: int) -> GoalView:
        """The recorded view before event ``index`` (kept: copy it before folding on)."""
        base = self.snapshots.get(index)
        if base is None:
            below = max((k for k in self.snapshots if k < index), default=0)
            base = self.snapshots[below].copy() if below else self._empty()
            fold(base, self.events[below:index])
            self.snapshots[index] = base
        return base

    def under_all(self, policies: Sequence[Policy], *, ledger: bool = True) -> list[WhatIf]:
        """``under`` each policy (``now``: the trace's), the ones ``resume`` serves re-folded
        together: one view is folded on from the earliest first check, and each policy
        decides on it in turn (its policy and its decisions put in) from its own first
        check until it diverges, when its view is copied off (equal to each one's own
        ``under``: tested on the golden and generated histories).
        """
        results: list[WhatIf | None] = [None] * len(policies)
        riders: list[_Rider] = []
        events = len(self.events)
        for position, policy in enumerate(policies):
            fields = differing(policy, self.policy)
            skip = first_difference(
                self.rises, self.refused_at, events, policy, self.policy, fields=fields
            )
            if self.raised_at is None and 0 < skip <= events and _goal_only(fields):
                riders.append(_Rider(skip, position, policy, fields))
            else:
                results[position] = self.under(policy, ledger=ledger)
        if riders:
            self._mark(riders)
            for rider, result in self._ride(sorted(riders, key=lambda r: r.skip), ledger):
                results[rider.position] = result
        assert all(r is not None for r in results)
        return results  # type: ignore[return-value]

    def _mark(self, riders: list[_Rider]) -> None:
        """Give each rider its ``marks``: for every field in which any rider differs from the
        record, its value and the first event at which the demand reaches it (``first_difference``'s
        test; past the last event: never)."""
        fields = list(dict.fromkeys(f for rider in riders for f in rider.fields))
        never = len(self.events)
        for rider in riders:
            marks = []
            for name in fields:
                value = getattr(rider.policy, name)
                budget = BY_FIELD[name]  # a limit of the goal or of a run (``_goal_only``)
                reached = 0 if value is None else never  # no limit: told apart at once
                if value is not None:
                    for index, most in self.rises.get(budget.name, ()):
                        if (most > value) if budget.over else (most >= value):
                            reached = index
                            break
                marks.append((value, reached))
            rider.marks = tuple(marks)

    def _ride(self, riders: list[_Rider], ledger: bool) -> Iterator[tuple[_Rider, WhatIf]]:
        """``under_all``'s shared re-fold (no ``budget.raised`` in the history).

        At a check, riders of the same ``_Rider.alike`` decide alike (the fields in which they
        differ are limits no demand has reached yet, as ``first_difference`` argues): when one
        of them takes the event, the others do too without deciding. One that parts from the
        record decides on its own (its decision is its own, reason and all).
        """
        events, checks, recorded = self.events, self.checks(), self.events[0]
        assert isinstance(recorded, GoalCreated)
        folded = riders[0].skip
        view = self._owned(folded)
        # one memo for every rider: they differ only in limits of the goal or of a run, which
        # no item decision reads (``work.POLICY_READ``), so the item decisions one rider
        # takes at an event are every rider's; the first decision takes every item in
        view.decided = None
        view.touched.clear()
        waiting, riding = riders[::-1], list[_Rider]()
        for index in checks[bisect_left(checks, folded) :]:
            if folded < index:
                fold(view, events[folded:index])
            folded, event = index, events[index]
            while waiting and waiting[-1].skip <= index:
                riding.append(waiting.pop())
            still, took = [], set()
            for rider in riding:
                alike = rider.alike(index)
                if alike in took:  # one that decides alike here took this event
                    still.append(rider)
                    continue
                rider.put_in(view, recorded)
                parted = self._parted(rider.policy, index, event, view, ledger)
                if parted is None:
                    still.append(rider)
                    took.add(alike)
                elif waiting or still or rider is not riding[-1]:
                    yield rider, replace(parted, view=view.copy())  # the shared one goes on
                else:  # the last rider: the shared view is its own
                    yield rider, parted
                    return
            riding = still
        fold(view, events[folded:])
        assert view.last_at is not None
        last = len(riding) + len(waiting) - 1
        for position, rider in enumerate((*riding, *waiting[::-1])):
            rider.put_in(view, recorded)
            final = decide(view, self.now or view.last_at, with_ledger=ledger)
            yield (
                rider,
                WhatIf(
                    rider.policy,
                    _compare(final, self.recorded_final),
                    None,
                    final,
                    self.recorded_final,
                    len(events),
                    view if position == last else view.copy(),
                ),
            )

    def _owned(self, index: int) -> GoalView:
        """A view of the record before event ``index`` that the caller owns (``snapshot``'s,
        copied, when one is kept there; else folded from the nearest one kept below, which is
        not kept in turn)."""
        kept = self.snapshots.get(index)
        if kept is not None:
            return kept.copy()
        below = max((k for k in self.snapshots if k < index), default=0)
        view = self.snapshots[below].copy() if below else self._empty()
        return fold(view, self.events[below:index])

    def under(
        self,
        policy: Policy,
        *,
        now: datetime | None = None,
        events: Iterable[Event] | None = None,
        ledger: bool = True,
    ) -> WhatIf:
        """Re-fold the recorded outcomes under ``policy`` (``events`` again, if not kept).

        ``ledger=False``: the decisions it returns (at the divergence, or where the story
        ends) carry no ledger (``decide``'s ``with_ledger``; the same status, action and
        reason), for callers that only read those.
        """
        now = now or self.now
        if events is None:  # with the events kept, the decisions before the first check are
            skip = self.first_check(policy)  # skipped, and so is the fold where it is the record's
            view, start = self.resume(policy, skip)
            if start:
                return self._resumed(policy, view, start, now, ledger)
            events = self.events
        else:
            view, skip = self._empty(), 0
        count = 0
        for count, event in enumerate(events, start=1):
            if count > skip and view.created is not None:
                parted = self._parted(policy, count - 1, event, view, ledger)
                if parted is not None:
                    return parted
            _fold(view, _retarget(event, policy, self.policy, view), event)
        return self._end(policy, view, count, now, ledger)

    def _resumed(
        self, policy: Policy, view: GoalView, start: int, now: datetime | None, ledger: bool
    ) -> WhatIf:
        """``under`` from ``resume``'s view: the events between two that are checked (the
        actions and the proposals) are folded as recorded (only a raise is retargeted)."""
        events, checks, folded = self.events, self.checks(), start
        for index in checks[bisect_left(checks, start) :]:
            for event in events[folded:index]:
                if event.type == "budget.raised":
                    _fold(view, _retarget(event, policy, self.policy, view), event)
                else:
                    evolve(view, event)
            folded, event = index, events[index]
            parted = self._parted(policy, index, event, view, ledger)
            if parted is not None:
                return parted
        for event in events[folded:]:
            if event.type == "budget.raised":
                _fold(view, _retarget(event, policy, self.policy, view), event)
            else:
                evolve(view, event)
        return self._end(policy, view, len(events), now, ledger)

    def checks(self) -> list[int]:
        """The indices of the events a re-fold checks: the actions and the proposals."""
        if self.checked_at is None:
            self.checked_at = [
                i for i, e in enumerate(self.events) if _is_action(e) or e.type == "plan.proposed"
            ]
        return self.checked_at

    def _end(
        self, policy: Policy, view: GoalView, count: int, now: datetime | None, ledger: bool
    ) -> WhatIf:
        """A re-fold that went through every event: the decision after the last one."""
        assert view.last_at is not None
        final = decide(view, now or view.last_at, with_ledger=ledger)
        return WhatIf(
            policy,
            _compare(final, self.recorded_final),
            None,
            final,
            self.recorded_final,
            count,
            view,
        )

    def alike(self, result: WhatIf, policy: Policy, *, ledger: bool = True) -> WhatIf | None:
        """``policy``'s re-fold, taken from ``result``'s (a policy of the same
        ``Demands.key``), or None when it cannot be.

        Policies of one key re-fold the history identically; when they differ only in
        limits the fold never reads (of the goal or of a run) and no ``budget.raised`` was
        folded, the views differ only in the policy (``goal.created``'s and the view's):
        the view is copied with ``policy`` put in, and the last decision is taken again
        under it. (Equal to re-folding: tested on every pair of the golden and generated
        histories.)
        """
        if self.raised_at is not None and self.raised_at < result.events:
            return None
        if not _resumable(policy, result.policy):
            return None
        view = result.view.copy()
        assert view.created is not None
        view.created = view.created.model_copy(update={"policy": policy})
        view.policy = policy
        divergence, final = result.divergence, result.final
        if divergence is not None:
            event = self.events[result.events - 1]
            final = decide(view, event.at, with_ledger=ledger)
            divergence = Divergence(divergence.seq, divergence.event_type, divergence.kind, final)
        else:
            assert view.last_at is not None
            final = decide(view, self.now or view.last_at, with_ledger=ledger)
        return WhatIf(
            policy,
            result.outcome,
            divergence,
            final,
            self.recorded_final,
            result.events,
            view,
        )

    def steps(self, policy: Policy) -> Iterator[tuple[Event, GoalView]]:
        """Every event re-folded under ``policy`` (no divergence check), with the view after it."""
        view = self._empty()
        for event in self.events:
            _fold(view, _retarget(event, policy, self.policy, view), event)
            yield event, view


_COLUMNS: dict[int, tuple[tuple[Policy, ...], dict[str, list[object]]]] = {}
"""id(policies) -> (the policies, field -> each one's value): a tune keys the same tuple of
candidates (``governor.analysis.tune.candidate_policies``) for every history."""


def _column(policies: Sequence[Policy], name: str) -> list[object]:
    """Each policy's value of a field (kept for a tuple of policies while it is the same one)."""
    if not isinstance(policies, tuple):
        return [getattr(policy, name) for policy in policies]
    cached = _COLUMNS.get(id(policies))
    if cached is None or cached[0] is not policies:  # another tuple (this one holds it alive)
        if len(_COLUMNS) > 64:
            _COLUMNS.clear()
        cached = _COLUMNS[id(policies)] = (policies, {})
    column = cached[1].get(name)
    if column is None:
        column = cached[1][name] = [getattr(policy, name) for policy in policies]
    return column


@dataclass(slots=True)
class _Rider:
    """A policy re-folded on ``under_all``'s shared view (and its shared decisions)."""

    skip: int
    position: int
    policy: Policy
    fields: list[str]
    """The fields in which its policy differs from the recorded one."""
    created: GoalCreated | None = None
    marks: tuple[tuple[object, int], ...] = ()
    """(value, the first event at which the demand reaches it) of each field in which some
    rider of the re-fold differs from the record (``Trace._mark``)."""
    _alike: tuple[object, ...] = ()
    _held: tuple[int, int] = (0, 0)
    """The events ``[from, until)`` before which ``alike`` is ``_alike`` (no limit is
    reached in between)."""

    def alike(self, index: int) -> tuple[object, ...]:
        """What tells this rider's decision before event ``index`` from another's: each
        field's value once the demand has reached it, else only that it has not (riders
        whose limits are all unreached, or reached and equal, decide alike)."""
        start, until = self._held
        if not start <= index < until:
            marks = self.marks
            self._alike = tuple(value if at <= index else _UNREACHED for value, at in marks)
            start = max((at for _, at in marks if at <= index), default=0)
            until = min((at for _, at in marks if at > index), default=_NEVER)
            self._held = start, until
        return self._alike

    def put_in(self, view: GoalView, recorded: GoalCreated) -> None:
        """Make the shared view this policy's (its ``goal.created`` and policy)."""
        if self.created is None:
            self.created = recorded.model_copy(update={"policy": self.policy})
        view.created, view.policy = self.created, self.policy


_NEVER: Final = 2**62
"""Past every event."""
_UNREACHED: Final = object()
"""``_Rider.alike``'s part for a limit the demand has not reached yet."""


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


def whatif(events: Iterable[Event], policy: Policy, *, now: datetime | None = None) -> WhatIf:
    """Re-fold ``events`` under ``policy`` and say where, and whether, the story changes."""
    return Trace.of(events, now=now).under(policy, now=now)
