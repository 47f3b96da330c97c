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
"""

from __future__ import annotations

from datetime import datetime

from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.fold import evolve
from governor.core.ledger import NO_LEDGER
from governor.core.rules.decide import active_item_ids, goal_decision
from governor.core.rules.fleet import Upstreams
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

    def copy(self) -> Decider:
        """An independent decider: the view copied, and the decisions kept on it."""
        clone = Decider(self.view.copy())
        clone._memo = self._memo.copy()
        return clone
