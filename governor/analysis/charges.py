"""Charges: every plan and attempt of a history, whether it was charged, and why.

Rules: the verdict is the core's (``governor.core.evidence.is_uncharged``) — this module
only says it in words, naming the class, the evidence and the rule that decided.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from governor.core.decision import last_line
from governor.core.events import (
    AttemptFinished,
    AttemptStarted,
    Event,
    PlanFailed,
    PlanProposed,
    PlanRequested,
)
from governor.core.evidence import Evidence, FailureClass, is_uncharged


@dataclass(frozen=True, slots=True)
class Charge:
    """One planner or worker run and what it cost."""

    seq: int
    what: str
    """``plan p2`` or ``p1-api attempt 1``."""
    charged: bool
    why: str


def _evidence(evidence: Evidence | None) -> str:
    if evidence is None:
        return "no evidence"
    return f"effects={evidence.effects}, output={evidence.output}, refusal={evidence.refusal}" + (
        f" ({evidence.source}: {evidence.ref})" if evidence.source else ""
    )


def explain_failure(
    outcome: str, failure_class: FailureClass | None, evidence: Evidence | None, error: str | None
) -> tuple[bool, str]:
    """Whether a failed run was charged, and the sentence that says why."""
    rule = f", rule {evidence.rule}" if evidence and evidence.rule else ""
    if is_uncharged(outcome, failure_class, evidence):
        if failure_class == "decision":
            return False, f"uncharged: the agent asked a person to decide{rule}"
        return (
            False,
            f"uncharged: {failure_class}, and the evidence shows the run did nothing: {_evidence(evidence)}{rule}",
        )
    if failure_class in ("environment", "upstream") and outcome == "failed":
        return True, (
            f"charged: classed {failure_class}{rule}, but the evidence does not show the run did nothing "
            f"({_evidence(evidence)})"
        )
    return (
        True,
        f"charged: the run {outcome.replace('_', ' ')}: {last_line(error, 'no error recorded')}{rule}",
    )


def charges(events: Iterable[Event]) -> Iterator[Charge]:
    """The charge of every finished plan and attempt, in the order they ended."""
    for event in events:
        match event:
            case PlanProposed():
                yield Charge(
                    event.seq,
                    f"plan {event.plan_id}",
                    True,
                    "charged: the planner was reached and proposed a plan",
                )
            case PlanFailed():
                charged, why = explain_failure(
                    "failed", event.failure_class, event.evidence, event.error
                )
                yield Charge(event.seq, f"plan {event.plan_id}", charged, why)
            case AttemptFinished() if event.outcome == "succeeded":
                yield Charge(
                    event.seq,
                    f"{event.work_id} attempt {event.attempt}",
                    True,
                    "charged: the attempt succeeded",
                )
            case AttemptFinished():
                charged, why = explain_failure(
                    event.outcome, event.failure_class, event.evidence, event.error
                )
                yield Charge(event.seq, f"{event.work_id} attempt {event.attempt}", charged, why)
            case PlanRequested() | AttemptStarted():
                continue
            case _:
                continue
