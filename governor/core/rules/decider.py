"""The decider: one goal's view and what deciding it left, so a decision costs what changed.

Rules:
    * ``decide(view, now)`` (``governor.core.rules.decide``) defines the rules: every item
      decided afresh, every ledger row laid out. A ``Decider`` takes the same decision
      after each event deciding again only the items the event touched (the fold notes
      them on the view: ``GoalView.touched``), those whose cooldown ``now`` crossed, and
      every item when the policy changed a field item decisions read
      (``governor.core.rules.memo``). ``tests/core/test_decider.py`` holds the two equal after
      every event of every golden history, the differential corpus and random histories.
    * A view has at most one decider: the decider takes in (and clears) the view's
      ``touched``. Fold through ``fold`` or into ``view`` directly: it is the same view.
    * ``copy`` copies the view and the decisions kept on it together.
    * ``head`` is the decision's head alone when the short path of rules 8 and 9 takes it
      (for the lean steps of ``replay --json``, ``governor.render.lines``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Final, NamedTuple

from governor.core.decision import Decision, WorkDecision
from governor.core.events import Event
from governor.core.fold import evolve
from governor.core.ledger import NO_LEDGER, AttemptLedger, ReplanLedger, WorkLedger
from governor.core.rules.decide import (
    active_item_ids,
    goal_decision,
    goal_rules_pass,
)
from governor.core.rules.fleet import Upstreams
from governor.core.rules.goal import Head, dispatch_head, runnable, running_ids
from governor.core.rules.memo import DecisionMemo
from governor.core.view import GoalView


class Decider:
    """A goal's view and the decisions last taken on it."""

    __slots__ = ("_memo", "view")

    def __init__(self, view: GoalView | None = None) -> None:
        self.view: GoalView = view if view is not None else GoalView()
        """The goal as folded so far (the decider reads it; the fold writes it)."""
        self._memo = DecisionMemo()

    def fold(self, event: Event) -> GoalView:
        """Fold one event into the view (``governor.core.fold.evolve``); the view."""
        evolve(self.view, event)
        return self.view

    def decide(
        self, now: datetime, *, with_ledger: bool = True, upstreams: Upstreams | None = None
    ) -> Decision:
        """``decide(self.view, now, ...)``, deciding again only what changed since."""
        view, memo, active = self.view, self._memo, self.view.active_plan
        active_ids = active_item_ids(view)
        if with_ledger:
            memo.update(view, now)
            ledger = memo.ledger(view)
        else:  # only the active plan's items (none without one)
            if active is not None:
                memo.update(view, now, active.plan_id)
            ledger = NO_LEDGER
        items = tuple(map(memo.decisions.__getitem__, active_ids))
        return goal_decision(view, now, ledger, items, upstreams)

    def head(self, now: datetime) -> Head | None:
        """The head of ``decide(now)`` when its short path of rules 8 and 9 takes it and
        nothing is parked, without the ``Decision``, its ledger and its items; ``None``
        when another rule may fire (then call ``decide``, which finds the item decisions
        taken). Every item is brought up to date, as ``decide`` with the ledger does.
        What rules 7-9 read of the active plan's items is scanned once per plan and
        pattern of statuses and actions (a replay repeats a few patterns).
        ``tests/test_lean_steps.py`` holds each head equal to ``decide``'s."""
        view, memo = self.view, self._memo
        memo.update(view, now)
        if view.parked is not None or view.budget_request is not None or not goal_rules_pass(view):
            return None
        active = view.active_plan
        assert active is not None, "rule 5 passed"
        ids = view.items_by_plan.get(active.plan_id, ())
        # the plan (its items' ids) and their statuses and actions in order: the scan
        key = (active.plan_id, tuple(map(memo.pairs.__getitem__, ids)))
        scans = memo.scans
        scan = scans.get(key)
        if scan is None:
            if len(scans) >= _SCANS_KEPT:
                scans.clear()
            scan = scans[key] = _scan(tuple(map(memo.decisions.__getitem__, ids)))
        statuses = scan.statuses
        if "in_review" in statuses:
            return None  # rule 7 fires (rule 6, every item settled, leaves none to run or wait on)
        taken = dispatch_head(view, statuses, _kept_runnable, scan, scan.runs)
        if taken is not None:
            return taken[0]
        if "running" in statuses:
            return ("running", "wait", scan.running, None, None, None)
        return None

    def relaid(self) -> list[tuple[int, str, WorkLedger]]:
        """The ledger rows decided again since the last ledger or ``relaid``, in creation
        order, as ``(position, work id, row)`` (``DecisionMemo.relaid``)."""
        return self._memo.relaid(self.view)

    def replans(self) -> ReplanLedger:
        """The replan ledger, the same object while what it counts is unchanged."""
        return self._memo.replans(self.view)

    def attempts(self) -> AttemptLedger:
        """The attempt ledger, the same object while what it counts is unchanged."""
        return self._memo.attempts(self.view)

    def copy(self) -> Decider:
        """An independent decider: the view copied, and the decisions kept on it."""
        clone = Decider(self.view.copy())
        clone._memo = self._memo.copy()
        return clone


class _Scan(NamedTuple):
    """What rules 7-9 read of the active plan's item decisions, scanned once per pattern
    of their statuses and actions (``Decider.head``)."""

    statuses: frozenset[str]
    ready: list[str]
    """``runnable(items, False)``."""
    ready_or_held: list[str]
    """``runnable(items, True)``."""
    running: str
    """Rule 9's reason with items running (``running_on``)."""
    runs: dict[tuple[bool, int], tuple[Head, tuple[str, ...]]]
    """Rule 8's runs offered from these items, by ``retry_blocked`` and how many."""


def _scan(items: tuple[WorkDecision, ...]) -> _Scan:
    return _Scan(
        frozenset(item.status for item in items),
        runnable(items, False),
        runnable(items, True),
        f"{', '.join(running_ids(items))} running",
        {},
    )


def _kept_runnable(scan: _Scan, held: bool, most: int) -> list[str]:
    return (scan.ready_or_held if held else scan.ready)[:most]


_SCANS_KEPT: Final = 1024
"""Scans a memo keeps at most (``DecisionMemo.scans``; then it starts again)."""
