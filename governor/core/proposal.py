"""Proposal checks: what a planner's new proposal must keep to (SPEC §5, §11.3, §12.4).

Rules:
    * A proposal keeps the policy's size bounds; its keys are unique and its
      dependencies name items of the same proposal (``check_proposal``).
    * A new ``complete`` is refused while no plan has been applied; a new ``apply`` is
      refused at a milestone once ``max_milestones`` plans are used (``check_decision``).
    * Used for planner replies, proposals being recorded, and by the history checker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from governor.core.event_fields import WorkSpec
from governor.core.headroom import must_say_complete
from governor.core.view import GoalView


def check_proposal(view: GoalView, work: Sequence[WorkSpec]) -> list[str]:
    """Problems with a proposal's work against the goal's policy and graph (empty: none).

    Used for planner replies and for recorded ``plan.proposed`` events alike.
    """
    policy, problems = view.policy, []
    if len(work) > policy.max_work_items_per_plan:
        problems.append(
            f"the proposal has {len(work)} work items; at most "
            f"{policy.max_work_items_per_plan} are allowed per plan"
        )
    if len(view.work) + len(work) > policy.max_total_work_items:
        problems.append(
            f"the goal would hold {len(view.work) + len(work)} work items; at most "
            f"{policy.max_total_work_items} are allowed"
        )
    profiles = view.created.profiles if view.created else {}
    seen: set[str] = set()
    for spec in work:
        for dep in spec.depends_on:
            if dep not in seen and not (dep in view.work and view.work[dep].accepted):
                problems.append(
                    f"work '{spec.key}' depends on '{dep}', which is neither an earlier key "
                    "of this proposal nor an accepted work item"
                )
        if spec.profile is not None and spec.profile not in profiles:
            problems.append(f"work '{spec.key}' names unknown profile '{spec.profile}'")
        seen.add(spec.key)
    return problems


FIRST_COMPLETE: Final = "complete before any work was done"
"""Why a ``complete`` is refused while no plan has been applied (SPEC §11.3)."""


def check_decision(view: GoalView, decision: str) -> list[str]:
    """Problems with a *new* proposal's decision against the goal's progress (empty: none).

    Used for planner replies and for proposals being recorded, not for recorded history
    (a history recorded before these rules stays readable):
        * ``complete`` while no plan has been applied yet (SPEC §11.3);
        * ``apply`` at a milestone once ``max_milestones`` plans have been worked through
          (SPEC §5: the milestone prompt allows only ``complete``; ``must_say_complete``).
    """
    if decision == "complete" and view.active_plan is None:
        return [FIRST_COMPLETE]
    if decision == "apply" and must_say_complete(view):
        return ["the goal has used all its milestones: the decision must be 'complete'"]
    return []
