"""The budget ledger every decision carries: each budget's counter, limit and remainder.

Rules (SPEC §6; the shape ``replay --json`` pins):
    * Counts come from ``governor.core.budgets``, the one definition of charged and
      remaining; this module only lays them out.
    * The ledger lists every work item ever created in the goal, in creation order.
"""

from __future__ import annotations

from dataclasses import dataclass

from governor.core.budgets import (
    charged_attempts,
    charged_replans,
    item_remaining,
    replans_remaining,
    total_attempts_remaining,
)
from governor.core.view import GoalView, WorkState


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
        consecutive_uncharged=view.consecutive_uncharged_plans,
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


def work_ledger(view: GoalView, item: WorkState, status: str, next_action: str) -> WorkLedger:
    return WorkLedger(
        status=status,
        next_action=next_action,
        attempts_used=item.attempts_used,
        charged_attempts=item.charged_attempts,
        consecutive_uncharged=item.consecutive_uncharged,
        continuations=item.continuations,
        limit=item.max_attempts,
        remaining=item_remaining(view, item),
    )


NO_LEDGER = Ledger(ReplanLedger(0, 0, 0, 0, 0, 0), AttemptLedger(0, 0, 0, 0), {}, 0.0, 0.0)
"""The ledger of a decision taken with ``with_ledger=False``: not computed (all zeros)."""
