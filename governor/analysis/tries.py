"""What-if over a profile's in-agent retry: the recorded tries, cut at another ``max_attempts``.

Rules (SPEC §12.12, §11.9; issue 25 §3):
    * A run that took more than one in-agent try records them (``Evidence.tries``: how
      many, and what each came to). Under a profile's smaller ``max_attempts`` the run
      ends at its last allowed try: that try's outcome is the run's.
    * A cut run whose outcome changes (a success after a failed try, or a failure of
      another class) is a failed run, recorded as the core records one (``record``):
      charged as the try's class says — an ``upstream`` or ``environment`` try (retried
      in-agent only on positive absence evidence) uncharged, an ``invalid_reply``, a
      ``failed`` try or a timeout charged. The re-projection goes on from there: the
      history up to that run, the cut run, then the decision after it (a stop is a known
      outcome; anything else was never observed: censored).
    * A run whose tries are not listed that far (``TRIES_LISTED``) is kept as recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Final

from governor.analysis.divergence import Divergence, Outcome, WhatIf, _kind
from governor.analysis.whatif import Trace
from governor.core import record, record_work
from governor.core.events import Event, GoalCreated, PlanFailed, PlanProposed
from governor.core.evidence import Evidence, Tries, TryOutcome
from governor.core.fold import evolve
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.view import GoalView
from governor.core.work_events import AttemptFinished, WorkCreated
from governor.errors import InputError

FIELDS: Final = ("max_attempts",)
"""The profile fields a what-if re-projects (the only ones a history records the effect of)."""

_CLASS: Final[dict[str, str | None]] = {
    "invalid_reply": None,
    "failed": None,
    "timed_out": None,
    "upstream": "upstream",
    "environment": "environment",
    "decision": "decision",
}
"""The failure class a cut run gets from its last try's outcome."""


def parse_profiles(specs: Sequence[str]) -> dict[str, int]:
    """``NAME.max_attempts=V`` (repeatable, or comma-separated) as profile -> max_attempts.

    Raises:
        InputError: for anything else.
    """
    out: dict[str, int] = {}
    for part in (p.strip() for spec in specs for p in spec.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        name, dot, field = key.strip().rpartition(".")
        if not sep or not dot or not name:
            raise InputError(
                f"--profile: '{part}' is not NAME.FIELD=VALUE, e.g. worker.max_attempts=1"
            )
        if field not in FIELDS:
            raise InputError(
                f"--profile: '{field}' cannot be re-projected; a history records the effect "
                f"of {', '.join(FIELDS)} only (its in-agent tries)"
            )
        try:
            attempts = int(value.strip())
        except ValueError:
            raise InputError(
                f"--profile: {key.strip()}='{value.strip()}' is not a whole number"
            ) from None
        if not 1 <= attempts <= 20:
            raise InputError(f"--profile: {key.strip()}={attempts} is outside 1..20")
        out[name] = attempts
    if not out:
        raise InputError("--profile: give at least one NAME.max_attempts=V")
    return out


def _cut(event: Event, attempts: int) -> tuple[str, str | None, Tries] | None:
    """(outcome, class, the tries left) of a run cut at ``attempts`` tries, when its outcome
    changes; None when it does not (or its tries are not listed that far)."""
    evidence = getattr(event, "evidence", None)
    tries = evidence.tries if isinstance(evidence, Evidence) else None
    if tries is None or tries.count <= attempts or len(tries.classes) < attempts:
        return None
    last: TryOutcome = tries.classes[attempts - 1]
    outcome = "timed_out" if last == "timed_out" else "failed"
    failure_class = _CLASS.get(last)
    left = Tries(count=attempts, classes=tries.classes[:attempts], last_error=tries.last_error)
    recorded = (getattr(event, "outcome", "failed"), getattr(event, "failure_class", None))
    if isinstance(event, PlanFailed | AttemptFinished) and recorded == (outcome, failure_class):
        return None
    if isinstance(event, PlanProposed | PlanFailed | AttemptFinished):
        return outcome, failure_class, left
    return None


def _failed(
    view: GoalView, event: Event, outcome: str, failure_class: str | None, left: Tries
) -> list[Event]:
    """The cut run, recorded as the core records a failed run."""
    absent = failure_class in ("upstream", "environment")
    evidence = Evidence(
        effects="absent" if absent else "unknown",
        output="absent" if absent else "unknown",
        refusal="absent" if absent else "unknown",
        source="whatif:tries",
        ref=f"try {left.count}",
        tries=left,
    )
    error = left.last_error or f"in-agent try {left.count} came to {left.classes[-1]}"
    at: datetime = event.at
    if isinstance(event, AttemptFinished):
        return record_work.finish_attempt(
            view,
            work_id=event.work_id,
            run_id=event.run_id,
            at=at,
            outcome=outcome,  # type: ignore[arg-type]
            failure_class=failure_class,  # type: ignore[arg-type]
            error=error,
            evidence=evidence,
        )
    plan_id = getattr(event, "plan_id")  # noqa: B009 - a planner run's event
    return record.plan_failed(
        view,
        plan_id=plan_id,
        at=at,
        failure_class=failure_class,  # type: ignore[arg-type]
        evidence=evidence,
        error=error,
    )


def cut_history(
    events: Iterable[Event], profiles: dict[str, int]
) -> tuple[list[Event], int | None]:
    """The history as it would have been recorded up to the first run ``profiles`` change,
    that run cut (its seq second; None: no run changes, the history is whole).

    Raises:
        InputError: when a profile named is not the goal's.
    """
    kept: list[Event] = []
    view, planner, workers = GoalView(), "", dict[str, str]()
    for event in events:
        if isinstance(event, WorkCreated):
            workers[event.work_id] = event.profile
        if isinstance(event, GoalCreated):
            planner = event.planner
            unknown = sorted(set(profiles) - set(event.profiles))
            if unknown:
                raise InputError(
                    f"--profile: the goal has no profile {', '.join(unknown)}; "
                    f"its profiles: {', '.join(sorted(event.profiles))}"
                )
        if isinstance(event, PlanProposed | PlanFailed | AttemptFinished):
            name = workers[event.work_id] if isinstance(event, AttemptFinished) else planner
            attempts = profiles.get(name)
            cut = _cut(event, attempts) if attempts is not None else None
            if cut is not None:
                return [*kept, *_failed(view, event, *cut)], event.seq
        kept.append(event)
        evolve(view, event)
    return kept, None


def under_profiles(
    events: Iterable[Event],
    profiles: dict[str, int],
    policy: dict[str, Any] | None = None,
    *,
    now: datetime | None = None,
    source: str | None = None,
) -> WhatIf:
    """Re-fold a history under other profiles' ``max_attempts`` (and ``policy``'s overrides).

    Raises:
        InputError: when a profile is not the goal's; HistoryError: a broken history.
    """
    whole = list(events)
    recorded = Trace.of(whole, now=now, source=source)
    cut, seq = cut_history(whole, profiles)
    other: Policy = with_overrides(recorded.policy, policy) if policy else recorded.policy
    if seq is None:
        return recorded.named(recorded.under(other, now=now))
    trace = Trace.of(cut, source=source)
    result = trace.named(trace.under(other))
    if result.divergence is not None and result.divergence.seq < seq:
        return replace(result, recorded_final=recorded.recorded_final)
    final = result.final
    outcome: Outcome = "stopped_earlier" if final.is_stopped else "censored"
    divergence = Divergence(seq, cut[-1].type, _kind(final), final)
    return replace(
        result, outcome=outcome, divergence=divergence, recorded_final=recorded.recorded_final
    )
