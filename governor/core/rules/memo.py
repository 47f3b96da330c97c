"""What a ``Decider`` keeps between decisions, so that a decision costs what changed.

Rules (issue 12):
    * A work item's decision reads only the item, whether its dependencies are accepted,
      the policy and, against the item's own ``not_before``, the time
      (``governor.core.rules.work``). So after an event only these are decided again: the items
      the fold noted as touched (``GoalView.touched``: the item an event names, and the
      items depending on one it settles), every item under a policy that differs in a
      field item decisions read (``work.POLICY_READ``: a goal's limits are not among them,
      so what-if policies that differ only there share decisions), and the items whose
      cooldown ``now`` has crossed (either way: ``now`` may also go back).
    * The result equals deciding every item afresh (``tests/core/test_decider.py``
      holds it to that over every golden history and random ones).
    * The ledger rows of the items and the goal's replan and attempt ledgers are laid out
      again only when they may have changed; ``WorkLedgers`` snapshots share the chunks
      in which no row changed.
    * A memo belongs to one ``governor.core.rules.decider.Decider`` (with its view); the
      decider's ``copy`` copies both.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from itertools import islice
from operator import attrgetter
from typing import Final

from governor.core.decision import WorkDecision
from governor.core.ledger import (
    CHUNK,
    AttemptLedger,
    Ledger,
    ReplanLedger,
    WorkLedger,
    WorkLedgers,
    attempt_ledger,
    replan_ledger,
    work_ledger,
)
from governor.core.policy import Policy
from governor.core.rules.work import POLICY_READ, decide_work
from governor.core.view import GoalView

_read: Final = attrgetter(*POLICY_READ)
"""The fields item decisions read, off a policy at once (one value, or a tuple of them)."""


def _decides_otherwise(before: Policy | None, after: Policy) -> bool:
    """Whether item decisions taken under ``before`` may differ under ``after``."""
    return before is None or bool(_read(before) != _read(after))


class DecisionMemo:
    """The decisions and ledgers last taken on one view, and what changed since."""

    __slots__ = (
        "_attempts",
        "_chunks",
        "_ids",
        "_index",
        "_ledgers",
        "_replans",
        "_rows",
        "_unledgered",
        "decisions",
        "policy",
        "stale",
        "timed",
    )

    def __init__(self) -> None:
        self.decisions: dict[str, WorkDecision] = {}
        """The latest decision of every item decided so far."""
        self.stale: set[str] = set()
        """Items whose decision may have changed since it was taken."""
        self.policy: Policy | None = None
        """The policy the decisions were taken under."""
        self.timed: dict[str, tuple[datetime, bool]] = {}
        """Items with a cooldown: when it ends, and whether ``now`` was before that."""
        self._ids: list[str] = []
        self._index: dict[str, int] = {}
        self._rows: list[WorkLedger] = []
        self._chunks: list[tuple[WorkLedger, ...]] = []
        self._unledgered: set[str] = set()
        self._ledgers: WorkLedgers | None = None
        """The latest ``work_ledgers`` snapshot (its successor counts from it)."""
        self._replans: tuple[tuple[object, ...], ReplanLedger] | None = None
        self._attempts: tuple[tuple[object, ...], AttemptLedger] | None = None

    def copy(self) -> DecisionMemo:
        clone = DecisionMemo()
        clone.decisions, clone.stale = dict(self.decisions), set(self.stale)
        clone.policy, clone.timed = self.policy, dict(self.timed)
        clone._ids, clone._index = list(self._ids), dict(self._index)
        clone._rows, clone._chunks = list(self._rows), list(self._chunks)
        clone._unledgered = set(self._unledgered)
        # a copy's snapshots are its own (``origin``): a renderer never splices across
        clone._ledgers = None
        clone._replans, clone._attempts = self._replans, self._attempts
        return clone

    def update(self, view: GoalView, now: datetime, plan_id: str | None = None) -> None:
        """Decide again what may have changed: among the items of plan ``plan_id`` (the
        active one), or every item (``None``)."""
        self._take_changes(view, now)
        if not self.stale:
            return
        work, timed, stale = view.work, self.timed, self.stale
        decisions, unledgered = self.decisions, self._unledgered
        for work_id in self._todo(view, plan_id):
            item = work[work_id]
            decisions[work_id] = decide_work(view, item, now)
            if (until := item.not_before) is None:
                timed.pop(work_id, None)
            else:
                timed[work_id] = (until, now < until)
            stale.discard(work_id)
            unledgered.add(work_id)

    def _take_changes(self, view: GoalView, now: datetime) -> None:
        """What changed since the last update: new items, the policy, the items the fold
        touched, the cooldowns ``now`` crossed (either way)."""
        work, stale = view.work, self.stale
        if len(self._ids) < len(work):
            self._take_new(work)
        if self.policy is not view.policy:
            self._take_policy(view.policy, work)
        touched = view.touched
        if touched:
            stale |= touched
            touched.clear()
        for work_id, (end, before) in self.timed.items():
            if (now < end) != before:
                stale.add(work_id)

    def _todo(self, view: GoalView, plan_id: str | None) -> Iterable[str]:
        """The stale items to decide: every one, or plan ``plan_id``'s (read from the
        fewer: the stale ones or the plan's)."""
        stale = self.stale
        if plan_id is None:
            return (stale.pop(),) if len(stale) == 1 else list(stale)
        ids = view.items_by_plan.get(plan_id, ())
        if len(stale) < len(ids):
            work = view.work
            return [w for w in stale if work[w].plan_id == plan_id]
        return [w for w in ids if w in stale]

    def _take_policy(self, policy: Policy, work: Iterable[str]) -> None:
        """Decide every item again when ``policy`` may decide one otherwise."""
        if _decides_otherwise(self.policy, policy):
            self.stale.update(work)
        self.policy = policy

    def _take_new(self, work: Iterable[str]) -> None:
        """Give the items created since the last update their positions (creation order)."""
        ids, index = self._ids, self._index
        for work_id in islice(work, len(ids), None):
            index[work_id] = len(ids)
            ids.append(work_id)

    def ledger(self, view: GoalView) -> Ledger:
        """The full ledger, after an ``update`` of every item."""
        return Ledger(
            replans=self.replans(view),
            attempts=self.attempts(view),
            work=self.work_ledgers(view),
            runtime_s=view.runtime_s,
            cost_usd=view.cost_usd,
        )

    def work_ledgers(self, view: GoalView) -> WorkLedgers:
        """Every item's ledger row, after an ``update`` of every item."""
        rows, chunks, ids, last = self._rows, self._chunks, self._ids, self._ledgers
        unledgered = self._unledgered
        if not unledgered and last is not None and last._size == len(ids):
            return last  # nothing changed: the same snapshot
        # new items come last, in creation order: lay out the rows in position order
        if len(unledgered) == 1:  # the usual case: the one item an event touched
            position = self._index[unledgered.pop()]
            if position < len(rows) == len(ids) and last is not None:  # laid out before
                work_id = ids[position]
                decision = self.decisions[work_id]
                rows[position] = work_ledger(
                    view, view.work[work_id], decision.status, decision.next_action
                )
                c = position // CHUNK
                chunks[c] = tuple(rows[c * CHUNK : (c + 1) * CHUNK])
                self._ledgers = last = WorkLedgers(
                    ids, self._index, tuple(chunks), len(rows), self, last.serial + 1, (position,)
                )
                return last
            changed: list[int] = [position]
            laid: Iterable[int] = (position // CHUNK,)
        else:
            changed = sorted(map(self._index.__getitem__, unledgered))
            unledgered.clear()
            laid = dict.fromkeys([position // CHUNK for position in changed])
        decisions, work = self.decisions, view.work
        for position in changed:
            work_id = ids[position]
            decision = decisions[work_id]
            row = work_ledger(view, work[work_id], decision.status, decision.next_action)
            if position < len(rows):
                rows[position] = row
            else:
                rows.append(row)
        for c in laid:
            chunk = tuple(rows[c * CHUNK : (c + 1) * CHUNK])
            if c < len(chunks):
                chunks[c] = chunk
            else:
                chunks.append(chunk)
        assert len(rows) == len(ids), "every item is decided before its row is laid out"
        serial = last.serial + 1 if last is not None else 0
        ledgers = WorkLedgers(
            ids, self._index, tuple(chunks), len(rows), self, serial, tuple(changed)
        )
        self._ledgers = ledgers
        return ledgers

    def replans(self, view: GoalView) -> ReplanLedger:
        """The replan ledger, the same object while what it counts is unchanged."""
        key = (view.plans_used, view.plans_uncharged, view.consecutive_uncharged_plans, view.policy)
        if self._replans is None or self._replans[0] != key:
            self._replans = (key, replan_ledger(view))
        return self._replans[1]

    def attempts(self, view: GoalView) -> AttemptLedger:
        """The attempt ledger, the same object while what it counts is unchanged."""
        key = (view.attempts_used, view.attempts_uncharged, view.policy)
        if self._attempts is None or self._attempts[0] != key:
            self._attempts = (key, attempt_ledger(view))
        return self._attempts[1]
