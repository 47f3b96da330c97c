"""Explain: why a goal stopped (or waits), its last failures, and the smallest policy change.

Rules (SPEC §9):
    * The explanation is the final decision (rule, reason, ledger), the last classified
      failures with their evidence and the rule that classed them, and advice.
    * The **smallest change** is found by counterfactual re-projection: each budget field
      is raised step by step, and the history re-folded under it (``governor.analysis.
      whatif``), until the goal would have gone on past its recorded end. Fields named by
      the stop itself are preferred; then the smallest relative change.
    * Environment and decision stops are not budget problems: "no policy change helps: a
      person must act", with what the person must do. Nor is the same failure again (SPEC
      §12.10): a budget only buys more of it, so ``max_same_failures`` is never advised and
      a planner that repeats itself is told to be fixed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from governor.analysis.whatif import Trace
from governor.core.budgets import BUDGETS, BY_FIELD
from governor.core.charges import RunEvent, describe, describe_tries, explain_failure
from governor.core.decision import Decision
from governor.core.events import Event, PlanFailed, PlanProposed
from governor.core.evidence import Evidence
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
class FailureNote:
    seq: int
    what: str
    failure_class: str | None
    rule: str | None
    charged: bool
    why: str
    evidence: Evidence | None
    error: str


@dataclass(frozen=True, slots=True)
class Change:
    field: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class Explanation:
    goal_id: str
    decision: Decision
    failures: tuple[FailureNote, ...]
    change: Change | None
    advice: str


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


def _continues(trace: Trace, policy: Policy, again: Reread | None) -> bool:
    result = trace.under(policy, events=again() if again else None)
    return result.outcome == "censored" and not (
        result.divergence and result.divergence.kind == "stop"
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
            if _continues(trace, policy, again):
                relative = (
                    (after - before) / max(before, 1) if isinstance(before, int | float) else 0.0
                )
                found.append((0 if field in direct else 1, relative, Change(field, before, after)))
                break
    return min(found, key=lambda f: (f[0], f[1]))[2] if found else None


def _stopped_by(decision: Decision, notes: Sequence[FailureNote]) -> str | None:
    """The classification rule of the failure a stopped goal stopped on, if still noted."""
    if decision.rule == "goal.4":
        prefix = "plan "
    elif decision.rule == "goal.10" and decision.work_ids:
        prefix = f"{decision.work_ids[0]} attempt "
    else:
        return None
    last = next((n for n in reversed(notes) if n.what.startswith(prefix)), None)
    return last.rule if last is not None and last.failure_class == decision.blocked_on else None


PERSON_MUST: Final = {
    "credential": "fix the credential",
    "billing": "add credit or quota to the vendor account",
    "no-response": "make the vendor reachable (its base URL, the network, the proxy)",
}
"""What a person must do about an environment stop, by the rule that classified it."""


def _person(decision: Decision, notes: Sequence[FailureNote]) -> str:
    rule = _stopped_by(decision, notes) if decision.blocked_on == "environment" else None
    if rule in PERSON_MUST:
        return (
            f"no policy change helps: a person must act — {PERSON_MUST[rule]} ({decision.reason}); "
            "then `governor resume GOAL --reason …` (a planner stop) or "
            "`governor work retry GOAL ITEM --reason …` (a work item)"
        )
    if decision.blocked_on == "environment":
        return (
            f"no policy change helps: a person must act — install what is missing ({decision.reason}); "
            "the runner re-probes and resumes by itself once it is there"
        )
    if decision.rule == "goal.same_failure":
        return (
            f"no policy change helps: a person must act — {decision.reason}; fix the agent, "
            "its prompt or its environment, then `governor resume GOAL --reason …` saying what "
            "changed (the reason reaches the next prompt)"
        )
    if decision.blocked_on == "decision":
        return (
            f"no policy change helps: a person must act — answer the question ({decision.reason}) with "
            "`governor resume GOAL --reason ANSWER` or `governor work retry GOAL ITEM --reason ANSWER`"
        )
    return ""


def advise(decision: Decision, change: Change | None, notes: Sequence[FailureNote] = ()) -> str:
    """One sentence of advice for a final decision and the change found (if any)."""
    if not decision.is_stopped:
        waiting = {
            "waiting": "it waits for an outside service",
            "running": "a run is in flight",
            "awaiting_review": "it awaits an operator's review",
            "ready": "it is ready to go on",
        }
        return f"the goal has not stopped: {waiting.get(decision.status, decision.status)}"
    if decision.status in ("succeeded", "cancelled"):
        return f"the goal {decision.status}; nothing to change"
    person = _person(decision, notes)
    if person:
        return person
    if change is None:
        return "no single budget change lets it go on: a person must act (see the reason)"
    return (
        f"raise {change.field} from {change.before} to {change.after}: {_command(decision, change)}; "
        "what would have followed was never observed"
    )


def _command(decision: Decision, change: Change) -> str:
    budget = BY_FIELD[change.field]
    per_item = budget.scope == "item"
    if not budget.raisable or (per_item and not decision.work_ids):
        return f"set {change.field} = {change.after} in the goal file of new goals"
    item = f" --work {decision.work_ids[0]}" if per_item else ""
    return f"governor raise GOAL --ledger {budget.name}{item} --to {change.after} --reason …"


def explain(
    events: Iterable[Event] | Reread,
    *,
    now: datetime | None = None,
    source: str | None = None,
) -> Explanation:
    """Why the history ended where it did, and what would have let it go on — decided at
    its last event, or at ``now`` (a goal in the store: a park may have outlasted its
    outage wait since, SPEC §11.10).

    ``events`` is the history, or a function that reads it afresh on each call: then it
    is streamed (read once to analyse it, once more per policy the search re-folds), so
    a history of any length is explained in bounded memory.

    Raises:
        HistoryError: when the history breaks the history format (``source`` names it).
    """
    again = events if callable(events) else None
    first = events() if callable(events) else events
    gathered = LastFailures()
    trace = Trace.of(gathered.tap(first), now=now, keep=again is None, source=source)
    decision = trace.recorded_final
    searchable = (
        decision.is_stopped
        and decision.status not in ("succeeded", "cancelled")
        and not _person(decision, gathered.notes)
    )
    change = smallest_change(trace, again) if searchable else None
    advice = advise(decision, change, gathered.notes)
    return Explanation(trace.goal_id, decision, gathered.notes, change, advice)
