"""Goal decisions: SPEC §6.2 as one ordered table of named rules, with the full ledger.

Rules (first match wins; work item rules live in ``governor.core.work``):
    goal.1-7   the goal's own state, its limits, its plans, milestones and reviews
               (``governor.core.goal_rules``, which words each rule)
    goal.8-12  running, waiting on and replanning around the active plan's items
               (``governor.core.dispatch``)
    fleet.*    the shared health of the upstreams, over the rule that fired
               (``governor.core.parking``): park, wait parked, resume

Wherever a rule says ``ready/plan``, charged replans must be below ``max_replans`` and
the raw plan count below ``max_plan_records``; otherwise ``budget_exhausted`` naming
``replans`` (first) or ``plan_records``. Replanning to go on with work (rules 6 and 11)
also needs charged goal attempts below ``max_total_attempts``, else ``budget_exhausted``
naming ``total_attempts`` before the others (SPEC §11.4). Rules 6-11 look at the active
plan's items.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from operator import attrgetter
from typing import Final, NamedTuple

from governor.core.decision import Decision, WorkDecision
from governor.core.dispatch import (
    RULES_8_TO_12,
    Head,
    dispatch_head,
    dispatch_on,
    runnable,
    running_ids,
    running_on,
)
from governor.core.goal_rules import RULES_1_TO_7, SETTLED, Ctx
from governor.core.headroom import (
    cost_within,
    runtime_within,
)
from governor.core.ledger import NO_LEDGER
from governor.core.memo import memo_of
from governor.core.parking import Upstreams, fleet
from governor.core.view import GoalView

_status: Final = attrgetter("status")
"""A ``WorkDecision``'s status."""


GOAL_RULES: Final[tuple[Callable[[Ctx], Decision | None], ...]] = (*RULES_1_TO_7, *RULES_8_TO_12)
"""The goal rules of SPEC §6.2, in order; the first that returns a decision wins."""

AFTER_DISPATCH: Final = GOAL_RULES[8:]
"""Rules 9-12: what ``decide`` scans once rules 1-8 passed."""

ITEM_RULES: Final = GOAL_RULES[5:]
"""Rules 6-12, on the active plan's items: all ``decide`` runs while the latest plan is
the applied one and the goal is neither over nor past a limit (``_goal_rules_pass``)."""


def _goal_rules_pass(view: GoalView) -> bool:
    """Rules 1-5 pass over the view (each returns ``None``), checked in one go.

    Rule 1: not cancelled, not completed. Rule 2: runtime and cost within their limits.
    Rules 3 and 4 act on a latest plan that is proposed, rejected, failed or requested:
    an applied one passes both. Rule 5: there is an active plan.
    """
    latest = view.latest_plan
    return (
        latest is not None
        and latest.status == "applied"
        and view.active_plan is not None
        and not view.cancelled
        and not view.completed
        and runtime_within(view)
        and cost_within(view)
    )


def decide(
    view: GoalView,
    now: datetime,
    *,
    with_ledger: bool = True,
    upstreams: Upstreams | None = None,
) -> Decision:
    """The goal's decision (SPEC §6.2), with its item decisions and the full ledger.

    The item decisions are kept on the view (``governor.core.memo``): only those an
    event may have changed since the last call are taken again. ``with_ledger=False``
    skips the ledger (``NO_LEDGER``) and every item outside the active plan: the same
    status, action and reason, for callers that only act on them (what-if, simulation,
    the runner). ``upstreams`` is the shared health of the upstreams the goal's profiles
    reach (profile name -> record), an input like ``now`` (``governor.core.parking``);
    without it only a recorded park holds the goal.
    """
    active = view.active_plan
    active_ids = view.items_by_plan.get(active.plan_id, ()) if active else ()
    decided = memo_of(view)
    if with_ledger:
        decided.update(view, now, None)
        ledger = decided.ledger(view)
    else:
        decided.update(view, now, active_ids)
        ledger = NO_LEDGER
    items = tuple(map(decided.decisions.__getitem__, active_ids))
    statuses = frozenset(map(_status, items))
    decision, rules = None, GOAL_RULES
    if _goal_rules_pass(view):
        rules = ITEM_RULES
        if "in_review" not in statuses and not ("succeeded" in statuses and statuses <= SETTLED):
            # rules 6 and 7 pass too (``_milestone``, ``_review``): the usual outcomes of
            # rules 8 and 9 without the rules' context (one decision after every event)
            decision = dispatch_on(view, ledger, items, statuses)
            if decision is None and "running" in statuses:
                decision = running_on(ledger, items)
            rules = AFTER_DISPATCH
    if decision is None:
        ctx = Ctx(view=view, now=now, ledger=ledger, items=items, statuses=statuses)
        for rule in rules:  # pragma: no branch - the fallback rule always decides
            decision = rule(ctx)
            if decision is not None:
                break
    assert decision is not None, "the fallback rule always decides"
    if view.parked is None and not upstreams:  # nothing known to fail, nothing parked
        return decision
    return fleet(view, now, decision, upstreams)


class _Scan(NamedTuple):
    """What rules 7-9 read of the active plan's item decisions, scanned once per pattern
    of their statuses and actions (``decide_head``)."""

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
        frozenset(map(_status, items)),
        runnable(items, False),
        runnable(items, True),
        f"{', '.join(running_ids(items))} running",
        {},
    )


def _kept_runnable(scan: _Scan, held: bool) -> list[str]:
    return scan.ready_or_held if held else scan.ready


_SCANS_KEPT: Final = 1024
"""Scans a memo keeps at most (``DecisionMemo.scans``; then it starts again)."""


def decide_head(view: GoalView, now: datetime) -> Head | None:
    """The head of ``decide(view, now)`` when its short path of rules 8 and 9 takes it and
    nothing is parked, without the ``Decision``, its ledger and its items; ``None`` when
    another rule may fire (then call ``decide``, which finds the item decisions taken).

    For the lean steps of ``replay --json`` (``governor.render.lines``), whose ledger is
    laid out from ``DecisionMemo.relaid``: the item decisions are brought up to date as
    ``decide`` with the ledger does (every item). What rules 7-9 read of the active
    plan's items is scanned once per plan and pattern of statuses and actions (the memo
    keeps the scans: a replay repeats a few patterns). ``tests/test_lean_steps.py`` holds
    each head equal to ``decide``'s.
    """
    decided = memo_of(view)
    decided.update(view, now, None)
    if view.parked is not None or not _goal_rules_pass(view):
        return None
    active = view.active_plan
    assert active is not None, "rule 5 passed"
    ids = view.items_by_plan.get(active.plan_id, ())
    # the plan (its items' ids) and their statuses and actions in order: the scan
    key = (active.plan_id, tuple(map(decided.pairs.__getitem__, ids)))
    scans = decided.scans
    scan = scans.get(key)
    if scan is None:
        if len(scans) >= _SCANS_KEPT:
            scans.clear()
        scan = scans[key] = _scan(tuple(map(decided.decisions.__getitem__, ids)))
    statuses = scan.statuses
    if "in_review" in statuses:
        return None  # rule 7 fires (rule 6, every item settled, leaves none to run or wait on)
    taken = dispatch_head(view, statuses, _kept_runnable, scan, scan.runs)
    if taken is not None:
        return taken[0]
    if "running" in statuses:
        return ("running", "wait", scan.running, None, None, None)
    return None
