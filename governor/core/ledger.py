"""Budget arithmetic: named one-line functions over the view, and the ledger value.

Rules (SPEC §5, §6):
    * ``charged = raw - uncharged``; ``remaining = max(0, limit - charged)``.
    * These functions are the only definition of charged replans and attempts:
      the decision rules, plan requests, attempt starts and operator verbs all call them.
    * A work item's own ``remaining`` is not capped by the goal's total; the goal
      decision applies the total.
"""

from __future__ import annotations

from dataclasses import dataclass

from governor.core.policy import LEDGER_FIELDS
from governor.core.view import GoalView, WorkState


def charged_replans(view: GoalView) -> int:
    return view.plans_used - view.plans_uncharged


def replans_remaining(view: GoalView) -> int:
    return max(0, view.policy.max_replans - charged_replans(view))


def can_replan(view: GoalView) -> bool:
    return charged_replans(view) < view.policy.max_replans


def has_plan_records(view: GoalView) -> bool:
    return view.plans_used < view.policy.max_plan_records


def charged_attempts(view: GoalView) -> int:
    return view.attempts_used - view.attempts_uncharged


def total_attempts_remaining(view: GoalView) -> int:
    return max(0, view.policy.max_total_attempts - charged_attempts(view))


def can_attempt_more(view: GoalView) -> bool:
    return charged_attempts(view) < view.policy.max_total_attempts


def item_remaining(item: WorkState) -> int:
    return max(0, item.max_attempts - item.charged_attempts)


def item_has_budget(item: WorkState) -> bool:
    return item.charged_attempts < item.max_attempts


def limit_of(view: GoalView, ledger: str, item: WorkState | None = None) -> float | None:
    """The limit a ``budget.raised`` ledger has now: the item's own for a per-item ledger,
    else the policy's (None: no limit)."""
    if item is not None:
        return item.max_attempts if ledger == "attempts" else item.max_uncharged_attempts
    limit: float | None = getattr(view.policy, LEDGER_FIELDS[ledger])
    return limit


def runtime_over(view: GoalView) -> bool:
    return view.runtime_s > view.policy.max_runtime_s


def cost_over(view: GoalView) -> bool:
    limit = view.policy.max_cost_usd
    return limit is not None and view.cost_usd > limit


@dataclass(frozen=True, slots=True)
class ReplanLedger:
    used: int
    charged: int
    uncharged: int
    consecutive_uncharged: int
    limit: int
    remaining: int


@dataclass(frozen=True, slots=True)
class AttemptLedger:
    used: int
    charged: int
    limit: int
    remaining: int


@dataclass(frozen=True, slots=True)
class WorkLedger:
    status: str
    next_action: str
    attempts_used: int
    charged_attempts: int
    consecutive_uncharged: int
    continuations: int
    limit: int
    remaining: int


@dataclass(frozen=True, slots=True)
class Ledger:
    """The budget ledger carried by every decision (SPEC §6, the shape of ``replay --json``)."""

    replans: ReplanLedger
    attempts: AttemptLedger
    work: dict[str, WorkLedger]
    runtime_s: float
    cost_usd: float


def replan_ledger(view: GoalView) -> ReplanLedger:
    return ReplanLedger(
        used=view.plans_used,
        charged=charged_replans(view),
        uncharged=view.plans_uncharged,
        consecutive_uncharged=view.planner_consecutive_uncharged,
        limit=view.policy.max_replans,
        remaining=replans_remaining(view),
    )


def attempt_ledger(view: GoalView) -> AttemptLedger:
    return AttemptLedger(
        used=view.attempts_used,
        charged=charged_attempts(view),
        limit=view.policy.max_total_attempts,
        remaining=total_attempts_remaining(view),
    )


def work_ledger(item: WorkState, status: str, next_action: str) -> WorkLedger:
    return WorkLedger(
        status=status,
        next_action=next_action,
        attempts_used=item.attempts_used,
        charged_attempts=item.charged_attempts,
        consecutive_uncharged=item.consecutive_uncharged,
        continuations=item.continuations,
        limit=item.max_attempts,
        remaining=item_remaining(item),
    )


NO_LEDGER = Ledger(ReplanLedger(0, 0, 0, 0, 0, 0), AttemptLedger(0, 0, 0, 0), {}, 0.0, 0.0)
"""The ledger of a decision taken with ``with_ledger=False``: not computed (all zeros)."""
