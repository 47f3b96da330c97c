"""Charges: every plan and attempt of a history, whether it was charged, and why.

Rules: the verdict is the core's (``governor.core.evidence.is_uncharged``) — this module
only says it in words, naming the class, the evidence and the rule that decided. Every
line about a finished run says *charged* or *not charged*, and the run's in-agent tries
when it took more than one (SPEC §11.9); the progress line, ``status`` and ``explain``
all speak through :func:`describe`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from governor.core.events import Event, PlanFailed, PlanProposed, PlanRequested
from governor.core.evidence import Evidence, FailureClass, Tries, is_uncharged
from governor.core.text import quoted, said, telling_line
from governor.core.view import GoalView
from governor.core.work_events import AttemptFinished, AttemptStarted

RunEvent = PlanProposed | PlanFailed | AttemptFinished
"""The events that finish a planner or worker run."""


@dataclass(frozen=True, slots=True)
class Charge:
    """One planner or worker run and what it cost."""

    seq: int
    what: str
    """``plan p2`` or ``p1-api attempt 1``."""
    charged: bool
    why: str


def describe_tries(tries: Tries | None) -> str:
    """``2 in-agent tries: upstream, ok; the agent CLI retried 1 refused request itself (503)``.

    Empty for a run that took one try whose CLI retried nothing.
    """
    if tries is None:
        return ""
    parts = []
    if tries.count > 1:
        listed = ", ".join(tries.classes) + (", …" if tries.count > len(tries.classes) else "")
        parts.append(f"{tries.count} in-agent tries: {listed}")
    if tries.vendor_retries:
        n = len(tries.vendor_retries)
        statuses = ",".join(str(s) if s is not None else "no status" for s in tries.vendor_retries)
        parts.append(
            f"the agent CLI retried {n} refused request{'s' if n != 1 else ''} itself ({statuses})"
        )
    return "; ".join(parts)


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
        f"charged: the run {outcome.replace('_', ' ')}: {said(error, 'no error recorded')}{rule}",
    )


def describe(event: RunEvent) -> str:
    """One line about a finished run: what it came to, charged or not, its tries, its error.

    e.g. ``failed (upstream, not charged; 2 in-agent tries: upstream, upstream): API
    Error: 503 …`` or ``succeeded (charged; 2 in-agent tries: upstream, ok; last error:
    status 503)``.
    """
    tries = event.evidence.tries if event.evidence else None
    notes = [describe_tries(tries)] if tries else []
    if isinstance(event, PlanProposed) or event_succeeded(event):
        what = _proposed(event) if isinstance(event, PlanProposed) else "succeeded"
        if tries and tries.last_error:
            notes.append(f"last error: {tries.last_error}")
        return f"{what} ({'; '.join(['charged', *notes])})"
    outcome = run_outcome(event)
    charged = "charged" if is_charged(event) else "not charged"
    head = ", ".join(filter(None, (event.failure_class, charged)))
    error = telling_line(event.error, "")
    return f"{outcome} ({'; '.join([head, *notes])})" + (
        f": {quoted(error[:160])}" if error else ""
    )


def run_outcome(event: RunEvent) -> str:
    """What a finished run came to: ``proposed``, ``failed`` or an attempt's outcome."""
    if isinstance(event, PlanProposed):
        return "proposed"
    return event.outcome if isinstance(event, AttemptFinished) else "failed"


def is_charged_run(
    outcome: str, failure_class: FailureClass | None, evidence: Evidence | None
) -> bool:
    """Whether a finished run was charged: a proposal always is; anything else unless the
    gate frees it (``is_uncharged``, the one definition)."""
    return outcome == "proposed" or not is_uncharged(outcome, failure_class, evidence)


def is_charged(event: RunEvent) -> bool:
    """Whether the run an event finished was charged."""
    failure_class = None if isinstance(event, PlanProposed) else event.failure_class
    return is_charged_run(run_outcome(event), failure_class, event.evidence)


def event_succeeded(event: RunEvent) -> bool:
    return isinstance(event, AttemptFinished) and event.outcome == "succeeded"


def _proposed(event: PlanProposed) -> str:
    n = len(event.work)
    if n == 0:
        return "proposed: the goal is complete"
    return f"proposed {n} work item{'s' if n != 1 else ''}"


def last_runs(view: GoalView) -> list[tuple[str, RunEvent]]:
    """The latest finished run of the planner and of each work item, for ``status``."""
    runs: list[tuple[str, RunEvent]] = []
    plan = view.latest_plan
    planned = (plan.failure or plan.proposal) if plan else None
    if plan is not None and planned is not None:
        runs.append((f"plan {plan.plan_id}", planned))
    for work_id, item in view.work.items():
        if item.finish is not None:
            runs.append((f"{work_id} attempt {item.finish.attempt}", item.finish))
    return runs


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
