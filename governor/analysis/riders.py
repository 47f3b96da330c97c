"""``Trace.under_all``'s shared re-fold: many policies ridden on one view.

Rules (SPEC §9):
    * Policies that differ from the record only in limits of the goal or of a run (and a
      history without ``budget.raised``) are re-folded together: one view is folded on
      from the earliest first check, and each policy decides on it in turn until it parts
      from the record, when its view is copied off (equal to each one's own ``under``:
      tested on the golden and generated histories).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final, Protocol

from governor.analysis.demands import first_difference
from governor.analysis.divergence import WhatIf, _compare, _goal_only, differing
from governor.core.budgets import BY_FIELD
from governor.core.decision import Decision
from governor.core.events import Event, GoalCreated
from governor.core.fold import fold
from governor.core.policy import Policy
from governor.core.rules.decider import Decider
from governor.core.view import GoalView


class Trace(Protocol):
    """What the riders read of a history analysed once (``governor.analysis.whatif.Trace``,
    whose ``under_all`` rides them: a protocol, so that the two modules import one way)."""

    @property
    def events(self) -> list[Event]: ...
    @property
    def policy(self) -> Policy: ...
    @property
    def recorded_final(self) -> Decision: ...
    @property
    def now(self) -> datetime | None: ...
    @property
    def rises(self) -> dict[str, list[tuple[int, float]]]: ...
    @property
    def refused_at(self) -> int | None: ...
    @property
    def raised_at(self) -> int | None: ...

    def under(self, policy: Policy, *, ledger: bool = True) -> WhatIf: ...
    def checks(self) -> list[int]: ...
    def owned(self, index: int) -> GoalView: ...
    def parted(
        self, policy: Policy, index: int, event: Event, decider: Decider, ledger: bool
    ) -> WhatIf | None: ...


def under_all(trace: Trace, policies: Sequence[Policy], *, ledger: bool = True) -> list[WhatIf]:
    """``under`` each policy (``now``: the trace's), the ones ``resume`` serves re-folded
    together: one view is folded on from the earliest first check, and each policy
    decides on it in turn (its policy and its decisions put in) from its own first
    check until it diverges, when its view is copied off (equal to each one's own
    ``under``: tested on the golden and generated histories).
    """
    results: list[WhatIf | None] = [None] * len(policies)
    riders: list[_Rider] = []
    events = len(trace.events)
    for position, policy in enumerate(policies):
        fields = differing(policy, trace.policy)
        skip = first_difference(
            trace.rises, trace.refused_at, events, policy, trace.policy, fields=fields
        )
        if trace.raised_at is None and 0 < skip <= events and _goal_only(fields):
            riders.append(_Rider(skip, position, policy, fields))
        else:
            results[position] = trace.under(policy, ledger=ledger)
    if riders:
        mark(trace, riders)
        for rider, result in ride(trace, sorted(riders, key=lambda r: r.skip), ledger):
            results[rider.position] = result
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


def mark(trace: Trace, riders: list[_Rider]) -> None:
    """Give each rider its ``marks``: for every field in which any rider differs from the
    record, its value and the first event at which the demand reaches it (``first_difference``'s
    test; past the last event: never)."""
    fields = list(dict.fromkeys(f for rider in riders for f in rider.fields))
    never = len(trace.events)
    for rider in riders:
        marks = []
        for name in fields:
            value = getattr(rider.policy, name)
            budget = BY_FIELD[name]  # a limit of the goal or of a run (``_goal_only``)
            reached = 0 if value is None else never  # no limit: told apart at once
            if value is not None:
                for index, most in trace.rises.get(budget.name, ()):
                    if (most > value) if budget.over else (most >= value):
                        reached = index
                        break
            marks.append((value, reached))
        rider.marks = tuple(marks)


def ride(trace: Trace, riders: list[_Rider], ledger: bool) -> Iterator[tuple[_Rider, WhatIf]]:
    """``under_all``'s shared re-fold (no ``budget.raised`` in the history).

    At a check, riders of the same ``_Rider.alike`` decide alike (the fields in which they
    differ are limits no demand has reached yet, as ``first_difference`` argues): when one
    of them takes the event, the others do too without deciding. One that parts from the
    record decides on its own (its decision is its own, reason and all).
    """
    events, checks, recorded = trace.events, trace.checks(), trace.events[0]
    assert isinstance(recorded, GoalCreated)
    folded = riders[0].skip
    view = trace.owned(folded)
    # one decider for every rider: they differ only in limits of the goal or of a run,
    # which no item decision reads (``work.POLICY_READ``), so the item decisions one rider
    # takes at an event are every rider's
    decider = Decider(view)
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
            parted = trace.parted(rider.policy, index, event, decider, ledger)
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
        final = decider.decide(trace.now or view.last_at, with_ledger=ledger)
        yield (
            rider,
            WhatIf(
                rider.policy,
                _compare(final, trace.recorded_final),
                None,
                final,
                trace.recorded_final,
                len(events),
                view if position == last else view.copy(),
            ),
        )


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
