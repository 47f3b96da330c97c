"""What-if: re-fold a history's recorded outcomes under another policy, without running an agent.

Rules (SPEC §9):
    * The recorded outcomes are facts; each recorded action is checked against the other
      policy's decision just before it, and the first it would not have taken is the
      **divergence** (``governor.analysis.divergence``, which also retargets the limits).
    * If the other policy stops there, the outcome is **known**: the goal would have
      stopped earlier, at that seq, for that reason. If it would have done something else,
      or gone on past the recorded end, what happens next was never observed: **censored**.
    * With the recorded policy nothing diverges and every decision is reproduced exactly.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from governor.analysis import riders
from governor.analysis.demands import Demands, first_difference
from governor.analysis.divergence import (
    Divergence,
    Outcome,
    WhatIf,
    _compare,
    _diverges,
    _fold,
    _is_action,
    _resumable,
    _retarget,
    stopped_by_change,
)
from governor.core.decision import Decision
from governor.core.events import Event, GoalCreated
from governor.core.fold import evolve, fold
from governor.core.headroom import outage_wait_s
from governor.core.history import HistoryChecker, empty_history
from governor.core.policy import Policy
from governor.core.rules.decide import decide
from governor.core.rules.decider import Decider
from governor.core.view import GoalView


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

    def parted(
        self, policy: Policy, index: int, event: Event, decider: Decider, ledger: bool
    ) -> WhatIf | None:
        """Where ``policy``'s re-fold parts from the record at event ``index`` (``decider``:
        its view just before it), or None when it takes that event too (or was forced)."""
        diverged = _diverges(decider, event)
        if diverged is None or self.is_forced(index, event, decider):
            return None
        kind, before = diverged
        if ledger:  # again, with the ledger the record shows
            before = decider.decide(event.at)
        outcome: Outcome = "stopped_earlier" if kind == "stop" else "censored"
        divergence = Divergence(event.seq, event.type, kind, before)
        view = decider.view
        return WhatIf(policy, outcome, divergence, before, self.recorded_final, index + 1, view)

    def is_forced(self, index: int, event: Event, decider: Decider) -> bool:
        """Whether the recorded policy would not have taken the action of ``event``, the
        ``index``-th (``decider``: a re-fold's view before it, which the recorded fold equals
        but for the policy when ``resumable`` holds up to there, and whose decisions are
        then taken on; else the record is folded again)."""
        if self.forced is not None:
            return event.seq in self.forced
        known = self.asked.get(index)
        if known is not None:
            return known
        created = self.events[0]
        assert isinstance(created, GoalCreated)
        view = decider.view
        if self.resumable(view.policy, index):
            # the view's decisions are the recorded policy's too: it differs only in limits
            # of the goal or of a run, which no item decision reads (``work.POLICY_READ``)
            saved = view.policy, view.created
            view.policy, view.created = self.policy, created
            known = _diverges(decider, event) is not None
            view.policy, view.created = saved
        else:
            recorded = fold(self._empty(), self.events[:index])
            known = _diverges(Decider(recorded), event) is not None
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
        decider = Decider(recorded)  # (only when the history is streamed: ``forced``)
        for index, event in enumerate(events):
            if keep:
                checker.check(event, index + 1)
                kept.append(event)
            else:
                checker.verify(event, index + 1)
                if recorded.created is not None and _diverges(decider, event) is not None:
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
        if keep:  # the recorded view after the last event (read only)
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
        together on one view (``governor.analysis.riders``)."""
        return riders.under_all(self, policies, ledger=ledger)

    def owned(self, index: int) -> GoalView:
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
        decider, count = Decider(view), 0
        for count, event in enumerate(events, start=1):
            if count > skip and view.created is not None:
                parted = self.parted(policy, count - 1, event, decider, ledger)
                if parted is not None:
                    return parted
            _fold(view, _retarget(event, policy, self.policy, view), event)
        return self._end(policy, decider, count, now, ledger)

    def _resumed(
        self, policy: Policy, view: GoalView, start: int, now: datetime | None, ledger: bool
    ) -> WhatIf:
        """``under`` from ``resume``'s view: the events between two that are checked (the
        actions and the proposals) are folded as recorded (only a raise is retargeted)."""
        events, checks, folded = self.events, self.checks(), start
        decider = Decider(view)
        for index in checks[bisect_left(checks, start) :]:
            for event in events[folded:index]:
                if event.type == "budget.raised":
                    _fold(view, _retarget(event, policy, self.policy, view), event)
                else:
                    evolve(view, event)
            folded, event = index, events[index]
            parted = self.parted(policy, index, event, decider, ledger)
            if parted is not None:
                return parted
        for event in events[folded:]:
            if event.type == "budget.raised":
                _fold(view, _retarget(event, policy, self.policy, view), event)
            else:
                evolve(view, event)
        return self._end(policy, decider, len(events), now, ledger)

    def checks(self) -> list[int]:
        """The indices of the events a re-fold checks: the actions and the proposals."""
        if self.checked_at is None:
            self.checked_at = [
                i for i, e in enumerate(self.events) if _is_action(e) or e.type == "plan.proposed"
            ]
        return self.checked_at

    def _end(
        self, policy: Policy, decider: Decider, count: int, now: datetime | None, ledger: bool
    ) -> WhatIf:
        """A re-fold that went through every event: the decision after the last one."""
        view = decider.view
        assert view.last_at is not None
        final = decider.decide(now or view.last_at, with_ledger=ledger)
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

    def named(self, result: WhatIf, events: Iterable[Event] | None = None) -> WhatIf:
        """``result`` with its stop naming the item the other policy stops
        (``stopped_by_change``: against the recorded decision at the same point; ``events``
        again, to fold the record to there, when they were not kept)."""
        if result.final.rule != "goal.10" or result.divergence is None:
            return replace(result, final=stopped_by_change(result.final, self.recorded_final))
        index = result.events - 1  # the divergence: the record before this event
        if events is None:
            recorded, event = self.snapshot(index).copy(), self.events[index]
        else:
            taken = list(itertools.islice(events, index + 1))
            recorded, event = fold(self._empty(), taken[:index]), taken[index]
        final = stopped_by_change(result.final, decide(recorded, event.at))
        divergence = replace(result.divergence, decision=final)
        return replace(result, final=final, divergence=divergence)

    def steps(self, policy: Policy) -> Iterator[tuple[Event, GoalView]]:
        """Every event re-folded under ``policy`` (no divergence check), with the view after it."""
        view = self._empty()
        for event in self.events:
            _fold(view, _retarget(event, policy, self.policy, view), event)
            yield event, view


def whatif(events: Iterable[Event], policy: Policy, *, now: datetime | None = None) -> WhatIf:
    """Re-fold ``events`` under ``policy`` and say where, and whether, the story changes."""
    trace = Trace.of(events, now=now)
    return trace.named(trace.under(policy, now=now))
