"""What clears each blocker of a goal: the runnable commands beside every blocker
``governor.core.blockers`` finds (issue 35 §2).

Rules:
    * Each blocker gets the verbs that clear it, each one the core would take now
      (``governor.analysis.advice.Situation.offer``): a question its answer (``work retry``
      of the item, or ``resume`` for the planner's), a stop ``resume``/``work retry`` with
      a reason, a review approve/reject or accept/send back, an item awaiting an operator's
      retry ``work retry`` of that item, an open request for more budget ``grant`` (the
      amount asked) and ``decline``. A missing binary that the drivers re-probe has no
      command: installing it is enough (``advice.REPROBED``).
    * The agent's question stays data (``Blocker.asked``): it is never put in a command
      nor in governor's sentence.
    * ``status``, ``explain``, the goal page and their ``--json`` read the same list.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from governor.core.blockers import Blocker, blockers
from governor.core.decision import Decision
from governor.core.view import GoalView

if TYPE_CHECKING:
    from governor.analysis.advice import Situation
    from governor.analysis.runnable import Advised

# Start-up (issue 36): the advice and the verbs it tries are imported only when something
# blocks, so that ``status`` of a goal that moves or ended imports none of them.


@dataclass(frozen=True, slots=True)
class Unblock:
    """One blocker, what a person does about it, and the commands that record it."""

    blocker: Blocker
    todo: str
    """Governor's words: what clears it."""
    commands: tuple[str, ...] = ()
    """Command lines, each one the core would take now (the store named)."""


def unblocking(
    view: GoalView, decision: Decision, at: datetime, store_arg: str | None = None
) -> tuple[Unblock, ...]:
    """Every blocker of the goal at ``decision`` with what clears it (module rules)."""
    found = blockers(view, decision)
    if not found:
        return ()
    from governor.analysis.advice import Situation  # noqa: PLC0415 - start-up

    where = Situation(view.goal_id, view, at, store_arg)
    return tuple(_unblock(b, where) for b in found)


def _unblock(b: Blocker, at: Situation) -> Unblock:
    from governor.analysis.advice import REPROBED  # noqa: PLC0415 - start-up
    from governor.analysis.runnable import answer, go_on  # noqa: PLC0415 - start-up

    goal = at.goal_id
    if b.kind == "question":
        return _offered(b, "answer the question (quoted below)", at, answer(goal, b.work_id))
    if b.kind == "precondition" and b.reprobed:
        return Unblock(b, f"install what is missing; {REPROBED}")
    if b.kind == "precondition":
        return _offered(b, "fix it, then say what changed", at, go_on(goal, b.work_id))
    if b.kind in ("stop", "retry"):
        return _offered(b, "fix the cause, then let it go on", at, go_on(goal, b.work_id))
    if b.kind in ("review", "grant"):
        return (_review if b.kind == "review" else _grant)(b, at)
    return Unblock(b, "a budget is spent: `governor explain` says which raise lets it go on")


def _grant(b: Blocker, at: Situation) -> Unblock:
    """An open request for more budget: grant what was asked, or decline it."""
    from governor.analysis.runnable import decline, grant  # noqa: PLC0415 - start-up

    request = at.view.budget_request if at.view is not None else None
    usd, attempts = (request.usd, request.attempts) if request is not None else (None, None)
    todo = (
        "grant more budget (the amount asked), or decline it"
        if b.person
        else "it goes on by itself when its pool renews; a grant lets it go on now"
    )
    return _offered(b, todo, at, grant(at.goal_id, usd, attempts), decline(at.goal_id))


def _review(b: Blocker, at: Situation) -> Unblock:
    """A plan to approve or reject, or work to accept or send back."""
    from governor.analysis.runnable import (  # noqa: PLC0415 - start-up
        accept_work,
        approve_plan,
        go_on,
        reject_plan,
    )

    goal = at.goal_id
    if b.plan_id is not None:
        verbs = (approve_plan(goal, b.plan_id), reject_plan(goal, b.plan_id))
        return _offered(b, "review the plan", at, *verbs)
    item = b.work_id or ""
    return _offered(b, "review the work", at, accept_work(goal, item), go_on(goal, item))


def _offered(b: Blocker, todo: str, at: Situation, *verbs: Advised) -> Unblock:
    commands = tuple(c for v in verbs if (c := at.offer(v)) is not None)
    return Unblock(b, todo, commands)
