"""The question a goal stopped on a decision asks a person, as a value.

Rules (SPEC §4 rule 5, §6.1 rule 7, §6.2 rules 4 and 10):
    * A goal has a question when its decision is ``blocked`` on ``decision``: the worker
      of the item the decision names asked it (its attempt's failure text), or, when no
      item is named, the planner did (its plan's failure text).
    * The question is answered by one operator verb and nothing else: ``work.retried``
      for a worker's (the answer goes to the item's next prompt), ``goal.resumed`` for
      the planner's (to the next planner prompt). ``governor.core.verbs.answer`` picks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from governor.core.decision import Decision
from governor.core.view import GoalView


@dataclass(frozen=True, slots=True)
class Question:
    """What a person is asked before the goal can go on."""

    goal_id: str
    asker: Literal["planner", "worker"]
    text: str
    """The question, as the agent asked it (the run's failure text)."""
    work_id: str | None
    """The item whose worker asked; ``None`` for the planner."""
    plan_id: str | None
    """The plan that asked, or the plan of the item that asked."""
    attempt: int | None
    """The attempt that asked (a worker's question only)."""

    @property
    def verb(self) -> Literal["work retry", "resume"]:
        """The operator verb that records the answer."""
        return "work retry" if self.work_id is not None else "resume"


def question(view: GoalView, decision: Decision) -> Question | None:
    """The question the goal waits on, or None when no person is asked anything."""
    if decision.status != "blocked" or decision.blocked_on != "decision":
        return None
    if decision.work_ids:
        item = view.work[decision.work_ids[0]]
        text = (item.finish.error if item.finish else None) or decision.reason
        return Question(view.goal_id, "worker", text, item.work_id, item.plan_id, item.attempt)
    plan = view.latest_plan
    text = (plan.failure.error if plan and plan.failure else None) or decision.reason
    return Question(view.goal_id, "planner", text, None, plan.plan_id if plan else None, None)
