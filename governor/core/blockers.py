"""Every blocker of a goal at once: each question, each missing precondition, each stop a
person must clear, each review — not only the one the decision names (issue 35 §2).

Rules:
    * The decision names one ``blocked_on`` (SPEC §6.2; the history and ``replay --json``
      keep it so). The blockers are read beside it from the same view and decision: the
      goal's own (the planner's stop, a plan to review, a goal no rule can move) and
      every item of the active plan that is stopped or awaits a review.
    * A blocker is a person's (``person``) when nothing clears it without someone: a
      question to answer, a precondition to install, a stop to resume, a review. Only a
      precondition is also re-probed by the drivers (``reprobed``): once it is there,
      governor clears the stop by itself.
    * Blockers are ordered by what clearing them unblocks most: the goal's own first (it
      holds every item), then items by how many items wait on them (their dependants,
      transitively), then in plan order.
    * A blocker's ``asked`` is an agent's text (a question): data to quote, never
      governor's words or a command.
    * An open request for more budget (``rules.budget``' budget.2 and budget.3) is a
      ``grant`` blocker of the goal: a person's when only a grant moves it (budget.3),
      governor's when its pool renews by itself (budget.2: a grant moves it sooner).
    * Items awaiting an operator's retry (``retry_blocked`` off; the goal's goal.12) are a
      ``retry`` blocker each, naming the item, not one blocker of the goal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from governor.core.classify import ENVIRONMENT_ERRNOS
from governor.core.decision import Decision, WorkDecision
from governor.core.evidence import Evidence
from governor.core.rules.budget import ASKS, PARKS
from governor.core.view import GoalView

BlockerKind = Literal["question", "precondition", "stop", "review", "retry", "budget", "grant"]


@dataclass(frozen=True, slots=True)
class Blocker:
    """One thing that holds the goal or one of its items, and who must clear it."""

    kind: BlockerKind
    work_id: str | None
    """The item held; None for the goal itself (the planner, a plan, the goal's budget)."""
    reason: str
    """Governor's words for it (the decision's reason)."""
    rule: str
    """The decision rule that names it (``work.7``, ``goal.same_failure``)."""
    person: bool
    """Whether it waits on a person."""
    unblocks: int
    """How many items clearing it lets go on (the goal's own: every open item, at least 1)."""
    asked: str | None = None
    """For a question: the agent's own text (data, never a command)."""
    reprobed: bool = False
    """For a precondition: the drivers look again by themselves and clear the stop."""
    plan_id: str | None = None
    """For a plan to review: the proposal."""


_ITEM_KINDS: Final[dict[str | None, BlockerKind]] = {
    "environment": "precondition",
    "decision": "question",
    "upstream": "stop",
}
"""An item's ``blocked``/``none`` by what it is blocked on (``work``: not an item's own)."""


def blockers(view: GoalView, decision: Decision) -> tuple[Blocker, ...]:
    """Every blocker of the goal at ``decision``, what unblocks most first (module rules)."""
    if decision.status in ("succeeded", "cancelled"):
        return ()
    held_items = [d for d in decision.items if _holds(d)]
    retried = [d for d in decision.items if _awaits_retry(d)] if decision.rule == "goal.12" else []
    # what waits on each item is counted only when one holds (a goal that moves: none)
    held = _dependants(view, decision.items) if held_items or retried else {}
    found = [_of_item(view, d, held) for d in held_items]
    found += [_retry(d, held) for d in retried]  # the items an operator's retry lets go on
    own = _of_request(view, decision) or _of_goal(view, decision, found)
    if found:
        order = {d.work_id: k for k, d in enumerate(decision.items)}
        found.sort(key=lambda b: (-b.unblocks, order.get(b.work_id or "", 0)))
    return (own, *found) if own is not None else tuple(found)


def waits_on_person(found: tuple[Blocker, ...]) -> bool:
    """Whether any blocker is a person's (the list's "needs a person")."""
    return any(b.person for b in found)


def _holds(d: WorkDecision) -> bool:
    """Whether an item's decision is a blocker: a review, or a stop of a kind an item has."""
    if d.status == "in_review":
        return d.next_action == "review"
    return d.status == "blocked" and d.next_action == "none" and d.blocked_on in _ITEM_KINDS


def _of_item(view: GoalView, d: WorkDecision, held: dict[str, int]) -> Blocker:
    """The blocker an item's decision is (one that ``_holds``)."""
    unblocks = 1 + held.get(d.work_id, 0)
    if d.status == "in_review":
        return Blocker("review", d.work_id, d.reason, d.rule, True, unblocks)
    kind = _ITEM_KINDS[d.blocked_on]
    item = view.work.get(d.work_id)
    asked = item.finish.error if kind == "question" and item and item.finish else None
    finish = item.finish if item else None
    reprobed = kind == "precondition" and _errno(finish.evidence if finish else None)
    return Blocker(kind, d.work_id, d.reason, d.rule, True, unblocks, asked, reprobed)


def _awaits_retry(d: WorkDecision) -> bool:
    return (d.status, d.next_action) == ("blocked", "retry")


def _retry(d: WorkDecision, held: dict[str, int]) -> Blocker:
    """An item that waits for an operator's retry (``retry_blocked`` is off)."""
    why = f"{d.work_id} awaits an operator's retry (retry_blocked is off): {d.reason}"
    return Blocker("retry", d.work_id, why, d.rule, True, 1 + held.get(d.work_id, 0))


def _open_items(decision: Decision) -> int:
    """How many items a blocker of the goal holds (every open one, at least 1)."""
    return max(1, sum(1 for d in decision.items if d.status not in ("succeeded", "cancelled")))


def _of_request(view: GoalView, decision: Decision) -> Blocker | None:
    """The goal's open request for more budget, while it holds the goal (module rules)."""
    if view.budget_request is None or decision.rule not in (ASKS, PARKS):
        return None
    person = decision.rule == ASKS
    return Blocker("grant", None, decision.reason, decision.rule, person, _open_items(decision))


def _of_goal(view: GoalView, decision: Decision, items: list[Blocker]) -> Blocker | None:
    """The goal's own blocker: one the decision names that no item's blocker already is."""
    open_items = _open_items(decision)
    reason, rule = decision.reason, decision.rule
    if decision.status == "awaiting_review" and decision.next_action == "review_plan":
        return Blocker("review", None, reason, rule, True, open_items, plan_id=decision.plan_id)
    if decision.status == "budget_exhausted":
        return Blocker("budget", None, reason, rule, False, open_items)
    if decision.status != "blocked" or any(b.work_id in decision.work_ids for b in items):
        return None
    if decision.rule == "goal.12" and any(_awaits_retry(d) for d in decision.items):
        return None  # each item is its own blocker (``_retry``)
    if decision.blocked_on == "decision":
        plan = view.latest_plan
        asked = plan.failure.error if plan and plan.failure else None
        return Blocker("question", None, reason, rule, True, open_items, asked)
    kind: BlockerKind = "precondition" if decision.blocked_on == "environment" else "stop"
    failed = view.latest_plan.failure if view.latest_plan else None
    reprobed = kind == "precondition" and _errno(failed.evidence if failed else None)
    return Blocker(kind, None, reason, rule, True, open_items, reprobed=reprobed)


def _errno(evidence: Evidence | None) -> bool:
    """Whether an environment stop's evidence is an errno the drivers re-probe (a binary
    missing, not executable, of a format the kernel refused)."""
    return evidence is not None and evidence.ref in ENVIRONMENT_ERRNOS


def _dependants(view: GoalView, items: tuple[WorkDecision, ...]) -> dict[str, int]:
    """How many open items of the plan wait on each item, directly or through others."""
    open_ids = {d.work_id for d in items if d.status not in ("succeeded", "cancelled")}
    needs = {
        w: [p for p in view.work[w].spec.depends_on if p in open_ids]
        for w in open_ids
        if w in view.work
    }
    counts: dict[str, int] = {}
    for work_id in open_ids:
        seen: set[str] = set()
        stack = list(needs.get(work_id, ()))
        while stack:
            upstream = stack.pop()
            if upstream not in seen:
                seen.add(upstream)
                stack.extend(needs.get(upstream, ()))
        for upstream in seen:
            counts[upstream] = counts.get(upstream, 0) + 1
    return counts
