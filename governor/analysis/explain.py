"""Explain: why a goal stopped (or waits), its last failures, and the smallest policy change.

Rules (SPEC §9):
    * The explanation is the final decision (rule, reason, ledger), the last classified
      failures with their evidence and the rule that classed them, and advice.
    * The **smallest change** is found by counterfactual re-projection: each budget field
      is raised step by step, and the history re-folded under it (``governor.analysis.
      whatif``), until the goal would have gone on past its recorded end. Fields named by
      the stop itself are preferred; then the smallest relative change.
    * Environment and decision stops are not budget problems, nor is the same failure
      again (SPEC §12.10): ``max_same_failures`` is never advised. The advice and its
      commands (each one runnable as printed) are ``governor.analysis.advice``'s.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from governor.analysis.advice import Change, FailureNote, Situation, advise, person
from governor.analysis.divergence import WhatIf
from governor.analysis.unblock import Unblock, unblocking
from governor.analysis.whatif import Trace
from governor.core.budgets import BUDGETS, BY_FIELD
from governor.core.charges import RunEvent, describe, describe_tries, explain_failure
from governor.core.decision import Decision
from governor.core.events import Event, PlanFailed, PlanProposed
from governor.core.policy import Policy, completion_problem
from governor.core.policy_input import with_overrides
from governor.core.text import last_line
from governor.core.work_events import AttemptFinished
from governor.errors import PolicyError

NEVER_ADVISED: Final = ("max_same_failures",)
"""Budget fields explain never advises raising: raising ``max_same_failures`` would only pay
for the same failure again (SPEC §12.10)."""
SEARCHED: Final = tuple(b.field for b in BUDGETS if b.field not in NEVER_ADVISED)
"""The budget fields the search may raise: every other budget of ``governor.core.budgets``."""

DIRECT: Final[dict[str, tuple[str, ...]]] = {
    stop: tuple(b.field for b in BUDGETS if b.stop == stop) for stop in {b.stop for b in BUDGETS}
}
"""The fields a stop names directly (its exhausted ledger, or ``upstream`` when blocked on it)."""

STEPS: Final = (1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100)


@dataclass(frozen=True, slots=True)
class Explanation:
    goal_id: str
    decision: Decision
    failures: tuple[FailureNote, ...]
    change: Change | None
    advice: str
    commands: tuple[str, ...] = ()
    """The command lines the advice quotes, each one runnable as printed."""
    blockers: tuple[Unblock, ...] = ()
    """Every blocker of the goal where it stands, what unblocks most first, each with
    the commands that clear it (``governor.analysis.unblock``)."""


class LastFailures:
    """The last ``last`` failed planner or worker runs of a history, as the rules saw them,
    gathered one event at a time (a long history keeps only those).

    A run that succeeded after in-agent tries is listed too: its failed tries are
    failures nobody would otherwise see (SPEC §11.9).
    """

    def __init__(self, last: int = 5) -> None:
        self._notes: deque[FailureNote] = deque(maxlen=last)

    @property
    def notes(self) -> tuple[FailureNote, ...]:
        return tuple(self._notes)

    def tap(self, events: Iterable[Event]) -> Iterator[Event]:
        """``events`` passed through, each noted on its way."""
        for event in events:
            self.note(event)
            yield event

    def note(self, e: Event) -> None:
        tries = e.evidence.tries if isinstance(e, RunEvent) and e.evidence else None
        if isinstance(e, PlanFailed):
            outcome, what = "failed", f"plan {e.plan_id}"
        elif isinstance(e, AttemptFinished) and e.outcome != "succeeded":
            outcome, what = e.outcome, f"{e.work_id} attempt {e.attempt}"
        elif isinstance(e, RunEvent) and tries is not None:
            what = (
                f"plan {e.plan_id}"
                if isinstance(e, PlanProposed)
                else f"{e.work_id} attempt {e.attempt}"
            )
            error = tries.last_error or ""
            self._notes.append(
                FailureNote(e.seq, what, None, None, True, describe(e), e.evidence, error)
            )
            return
        else:
            return
        charged, why = explain_failure(outcome, e.failure_class, e.evidence, e.error)
        if tries is not None:
            why += f" ({describe_tries(tries)})"
        rule = e.evidence.rule if e.evidence else None
        self._notes.append(
            FailureNote(
                e.seq, what, e.failure_class, rule, charged, why, e.evidence, last_line(e.error, "")
            )
        )


def failures(events: Iterable[Event], *, last: int = 5) -> tuple[FailureNote, ...]:
    """The last ``last`` failed planner or worker runs, as the rules saw them (``LastFailures``)."""
    gathered = LastFailures(last)
    for event in events:
        gathered.note(event)
    return gathered.notes


Reread = Callable[[], Iterable[Event]]
"""A fresh pass over a history each call (a long history is re-read, never held)."""


def _continues(trace: Trace, policy: Policy, again: Reread | None) -> str | None:
    """What would follow under ``policy`` when the goal would go on under it (else None)."""
    result = trace.under(policy, events=again() if again else None)
    if result.outcome != "censored" or (result.divergence and result.divergence.kind == "stop"):
        return None
    return follows(result)


def follows(result: WhatIf) -> str:
    """What a what-if that goes on shows: where it parts from the record and how it
    decides there (what comes after was never observed)."""
    parted, final = result.divergence, result.final
    if parted is not None:
        return (
            f"under it the goal would act otherwise at seq {parted.seq} "
            f"({final.next_action}: {final.reason}); what would have followed was never observed"
        )
    return (
        f"under it the goal would continue after seq {result.view.seq} "
        f"({final.next_action}: {final.reason}); what would have followed was never observed"
    )


def smallest_change(trace: Trace, again: Reread | None = None) -> Change | None:
    """The smallest single raise of a budget field that would have let the goal go on.

    A raise the history cannot tell from its recorded limit (``Demands.key``: the
    budget was never used up to it) re-folds exactly as recorded, where the goal
    stopped: it is skipped without re-folding. So only the budgets the history reached
    cost a pass (``again`` supplies it when the trace did not keep the events).
    """
    decision = trace.recorded_final
    direct = DIRECT.get(decision.exhausted or "", ()) or DIRECT.get(decision.blocked_on or "", ())
    recorded = trace.demands.key(trace.policy)
    found: list[tuple[int, float, Change]] = []
    for field in SEARCHED:
        budget = BY_FIELD[field]
        before = getattr(trace.policy, field)
        for after in budget.candidates(before, trace.demands.most[budget.name], STEPS):
            try:
                policy = with_overrides(trace.policy, {field: after})
            except PolicyError:  # e.g. more milestones than replans: not a policy
                break
            if completion_problem(policy) is not None:  # SPEC §12.1: never advised
                break
            if trace.demands.key(policy) == recorded:
                continue
            follow = _continues(trace, policy, again)
            if follow is not None:
                relative = (
                    (after - before) / max(before, 1) if isinstance(before, int | float) else 0.0
                )
                found.append(
                    (0 if field in direct else 1, relative, Change(field, before, after, follow))
                )
                break
    return min(found, key=lambda f: (f[0], f[1]))[2] if found else None


def explain(
    events: Iterable[Event] | Reread,
    *,
    now: datetime | None = None,
    source: str | None = None,
    store_arg: str | None = None,
) -> Explanation:
    """Why the history ended where it did, and what would have let it go on — decided at
    its last event, or at ``now`` (a goal in the store: a park may have outlasted its
    outage wait since, SPEC §11.10).

    ``events`` is the history, or a function that reads it afresh on each call: then it
    is streamed (read once to analyse it, once more per policy the search re-folds), so
    a history of any length is explained in bounded memory. The commands the advice
    quotes name ``store_arg`` (``--store``) when given, and are each one the core takes
    on the goal as it stands (``governor.analysis.advice``).

    Raises:
        HistoryError: when the history breaks the history format (``source`` names it).
    """
    again = events if callable(events) else None
    first = events() if callable(events) else events
    gathered = LastFailures()
    trace = Trace.of(gathered.tap(first), now=now, keep=again is None, source=source)
    decision, last = trace.recorded_final, trace.last_view
    at = Situation(
        trace.goal_id,
        last.copy() if last is not None else None,
        trace.now or (last.last_at if last is not None else None),
        store_arg,
    )
    stopped = decision.is_stopped and decision.status not in ("succeeded", "cancelled")
    needed = person(decision, gathered.notes, at) if stopped else None
    change = smallest_change(trace, again) if stopped and needed is None else None
    advice = needed or advise(decision, change, gathered.notes, at)
    found = unblocking(at.view, decision, at.at, store_arg) if at.view and at.at else ()
    return Explanation(
        trace.goal_id, decision, gathered.notes, change, advice.text, advice.commands, found
    )
