"""What the service tells its operators: JSON log lines and counters derived from events.

Rules:
    * Counters are derived from the events a worker appended (the runner's observer)
      and from what the worker itself saw (lease takeovers, step errors), never kept
      beside the code that does the work. Charged or not is ``is_uncharged``, the
      core's one definition, applied to the recorded outcome, class and evidence.
    * One log line per decision and per agent call (a planner or worker run that
      finished), plus lease takeovers, step errors, the worker's life cycle, and each
      upstream that goes down, comes back or refuses a probe (SPEC §11.10).
    * Every string written to a log line goes through the ``Redactor`` of the
      service's environment first: secrets never reach a log (``governor.service.logs``).
    * Durations are histograms summed like the counters: each finished agent call (by
      role, harness, class and charged) and each step that acted (by node).
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Final, TypeVar

from governor.core.charges import is_charged_run
from governor.core.decision import Decision
from governor.core.events import Event, PlanContinued, PlanFailed, PlanProposed, PlanRequested
from governor.core.evidence import Evidence, FailureClass
from governor.core.route import Action, acts, name_of
from governor.core.text import stamp
from governor.core.upstream import ChangeKind, UpstreamHealth
from governor.core.view import GoalView
from governor.core.work_events import AttemptContinued, AttemptFinished, AttemptStarted
from governor.service.logs import JsonLog

Labels = tuple[tuple[str, str], ...]
Snapshot = dict[str, dict[Labels, float]]
"""Counter name -> labels -> value: what a worker reports to the supervisor."""
Buckets = list[float]
"""A histogram's count in each bucket (``le`` its bound, not cumulative), then its sum."""
Histograms = dict[str, dict[Labels, Buckets]]
"""Histogram name -> labels -> buckets and sum."""

HISTOGRAMS: Final[dict[str, tuple[str, tuple[float, ...]]]] = {
    "governor_agent_call_duration_seconds": (
        "Planner and worker runs that finished: how long each took, by role, harness, class "
        "and whether charged.",
        (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400),
    ),
    "governor_step_duration_seconds": (
        "Goal steps that acted: how long each took, by the node that acted.",
        (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600),
    ),
}
"""Every histogram the service keeps: its help text and bucket bounds (``+Inf`` follows)."""

COUNTERS: Final[dict[str, str]] = {
    "governor_steps_total": "Goal steps taken, by the node that acted.",
    "governor_attempts_total": "Worker runs that finished, by outcome, class and whether charged.",
    "governor_planner_calls_total": "Planner runs that finished, by outcome, class and whether charged.",
    "governor_continuations_total": "Runs found lost and continued (uncharged), by kind.",
    "governor_lease_takeovers_total": "Goals taken over from a worker whose lease expired.",
    "governor_step_errors_total": "Steps that raised (infrastructure errors; nothing charged).",
    "governor_upstream_changes_total": (
        "Upstreams that went down, came back, refused a probe, or whose probe made no contact."
    ),
}
"""Every counter the service keeps, with its help text."""


class Counters:
    """Monotonic counters and histograms with labels, safe to bump from several threads."""

    def __init__(self) -> None:
        self._values: Snapshot = {name: {} for name in COUNTERS}
        self._histograms: Histograms = {name: {} for name in HISTOGRAMS}
        self._lock = threading.Lock()

    def observe(self, name: str, value: float, **labels: str) -> None:
        """Count one observation of ``value`` in the histogram ``name``."""
        key = tuple(sorted(labels.items()))
        bounds = HISTOGRAMS[name][1]
        slot = bisect.bisect_left(bounds, value)
        with self._lock:
            buckets = self._histograms[name].setdefault(key, [0.0] * (len(bounds) + 2))
            buckets[slot] += 1
            buckets[-1] += value

    def histograms(self) -> Histograms:
        with self._lock:
            return {
                name: {k: list(v) for k, v in h.items()} for name, h in self._histograms.items()
            }

    def add(self, name: str, **labels: str) -> None:
        """Count one more of ``name`` with these labels."""
        key = tuple(sorted(labels.items()))
        with self._lock:
            family = self._values[name]
            family[key] = family.get(key, 0) + 1

    def snapshot(self) -> Snapshot:
        with self._lock:
            return {name: dict(family) for name, family in self._values.items()}


V = TypeVar("V")


def _summed(
    snapshots: Sequence[dict[str, dict[Labels, V]]],
    names: Iterable[str],
    add: Callable[[V | None, V], V],
) -> dict[str, dict[Labels, V]]:
    total: dict[str, dict[Labels, V]] = {name: {} for name in names}
    for snapshot in snapshots:
        for name, family in snapshot.items():
            into = total.setdefault(name, {})
            for labels, value in family.items():
                into[labels] = add(into.get(labels), value)
    return total


def merge(snapshots: Sequence[Snapshot]) -> Snapshot:
    """The sum of several workers' snapshots."""
    return _summed(snapshots, COUNTERS, lambda have, value: (have or 0) + value)


def merge_histograms(snapshots: Sequence[Histograms]) -> Histograms:
    """The sum of several workers' histograms (bucket by bucket, and the sums)."""
    return _summed(
        snapshots,
        HISTOGRAMS,
        lambda have, value: (
            [a + b for a, b in zip(have, value, strict=True)] if have else list(value)
        ),
    )


class Observation:
    """Turns what a worker appended and decided into log lines and counters."""

    def __init__(self, log: JsonLog, counters: Counters) -> None:
        self.log, self.counters = log, counters
        self._started: dict[tuple[str, str], datetime] = {}

    def decided(self, goal_id: str, decision: Decision, action: Action, at: datetime) -> None:
        """The decision a step acts on, and the action it routes to."""
        node = name_of(action)
        self.log.write(
            "decision",
            at,
            goal=goal_id,
            status=decision.status,
            next_action=decision.next_action,
            node=node,
            blocked_on=decision.blocked_on,
            rule=decision.rule,
            reason=decision.reason,
        )
        if acts(action):
            self.counters.add("governor_steps_total", node=node)

    def upstream(self, kind: ChangeKind, record: UpstreamHealth) -> None:
        """An upstream went down, came back, or refused a probe or made it no contact (the
        runner's monitor)."""
        self.counters.add("governor_upstream_changes_total", change=kind)
        outage = (
            (record.recovered_at - record.outage_started).total_seconds()
            if record.recovered_at and record.outage_started
            else None
        )
        self.log.write(
            f"upstream.{kind.replace('_', '.')}",
            record.updated_at,
            upstream=record.upstream,
            failing_since=stamp(record.failing_since) if record.failing_since else None,
            last_status=record.last_status,
            retry_after_s=record.retry_after_s,
            next_probe_at=stamp(record.next_probe_at) if record.next_probe_at else None,
            probes_refused=record.probes if kind != "up" else None,
            refusals=record.refusals,
            recovered_by=record.recovered_by if kind == "up" else None,
            outage_s=outage if kind == "up" else None,
        )

    def stepped(self, node: str, duration_s: float) -> None:
        """A step that acted, and how long it took (the worker measures it)."""
        self.counters.observe("governor_step_duration_seconds", duration_s, node=node)

    def appended(self, events: Sequence[Event], view: GoalView | None = None) -> None:
        """Every batch the runner appended (its observer); ``view``, the goal's view after
        them, names the harness of each run (for the duration histogram)."""
        for event in events:
            self._event(event, view)

    def _event(self, event: Event, view: GoalView | None) -> None:
        match event:
            case PlanRequested() | PlanContinued():
                self._started[(event.goal_id, event.plan_id)] = event.at
                if isinstance(event, PlanContinued):
                    self.counters.add("governor_continuations_total", kind="plan")
            case AttemptStarted() | AttemptContinued():
                self._started[(event.goal_id, event.run_id)] = event.at
                if isinstance(event, AttemptContinued):
                    self.counters.add("governor_continuations_total", kind="attempt")
            case PlanProposed():
                self._call(event, "planner", "proposed", None, event.evidence, key=event.plan_id, harness=_harness(view, None))  # fmt: skip
            case PlanFailed():
                self._call(event, "planner", "failed", event.failure_class, event.evidence, key=event.plan_id, harness=_harness(view, None))  # fmt: skip
            case AttemptFinished():
                self._call(event, "worker", event.outcome, event.failure_class, event.evidence, key=event.run_id, harness=_harness(view, event.work_id))  # fmt: skip
            case _:
                pass

    def _call(
        self,
        event: Event,
        role: str,
        outcome: str,
        cls: FailureClass | None,
        evidence: Evidence | None,
        *,
        key: str,
        harness: str,
    ) -> None:
        """One finished agent run: a count, its duration, and a log line with its class,
        rule and charge."""
        charged = is_charged_run(outcome, cls, evidence)
        started = self._started.pop((event.goal_id, key), None)
        family = "governor_planner_calls_total" if role == "planner" else "governor_attempts_total"
        labels = {"outcome": outcome, "class": cls or "none"}
        labels["charged"] = str(charged).lower()
        self.counters.add(family, **labels)
        if started is not None:
            self.counters.observe(
                "governor_agent_call_duration_seconds",
                (event.at - started).total_seconds(),
                role=role,
                harness=harness,
                charged=labels["charged"],
                **{"class": labels["class"]},
            )
        self.log.write(
            "agent_call",
            event.at,
            goal=event.goal_id,
            role=role,
            plan=getattr(event, "plan_id", None),
            item=getattr(event, "work_id", None),
            attempt=getattr(event, "attempt", None),
            run=getattr(event, "run_id", None),
            outcome=outcome,
            **{"class": cls},
            rule=evidence.rule if evidence is not None else None,
            charged=charged,
            tries=evidence.tries.model_dump(mode="json")
            if evidence is not None and evidence.tries
            else None,
            duration_s=None if started is None else (event.at - started).total_seconds(),
            error=getattr(event, "error", None),
        )


def _harness(view: GoalView | None, work_id: str | None) -> str:
    """The harness of the profile that ran the planner (``work_id`` None) or the item."""
    created = view.created if view is not None else None
    if created is None or view is None:
        return "unknown"
    name = created.planner if work_id is None else view.work[work_id].spec.profile
    profile = created.profiles.get(name)
    return profile.harness if profile is not None else "unknown"
