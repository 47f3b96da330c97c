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
      service's environment first: secrets never reach a log.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Final

import orjson

from governor.core.charges import is_charged_run
from governor.core.decision import Decision, stamp
from governor.core.events import (
    AttemptContinued,
    AttemptFinished,
    AttemptStarted,
    Event,
    PlanContinued,
    PlanFailed,
    PlanProposed,
    PlanRequested,
)
from governor.core.evidence import Evidence, FailureClass
from governor.core.route import Action, acts, name_of
from governor.core.upstream import UpstreamHealth
from governor.drive.upstreams import ChangeKind
from governor.exec.environment import Redactor
from governor.store.url import ENV_VAR, mask_password

Labels = tuple[tuple[str, str], ...]
Snapshot = dict[str, dict[Labels, float]]
"""Counter name -> labels -> value: what a worker reports to the supervisor."""

COUNTERS: Final[dict[str, str]] = {
    "governor_steps_total": "Goal steps taken, by the node that acted.",
    "governor_attempts_total": "Worker runs that finished, by outcome, class and whether charged.",
    "governor_planner_calls_total": "Planner runs that finished, by outcome, class and whether charged.",
    "governor_continuations_total": "Runs found lost and continued (uncharged), by kind.",
    "governor_lease_takeovers_total": "Goals taken over from a worker whose lease expired.",
    "governor_step_errors_total": "Steps that raised (infrastructure errors; nothing charged).",
    "governor_upstream_changes_total": "Upstreams that went down, came back, or refused a probe.",
}
"""Every counter the service keeps, with its help text."""


class Counters:
    """Monotonic counters with labels, safe to bump from several threads."""

    def __init__(self) -> None:
        self._values: Snapshot = {name: {} for name in COUNTERS}
        self._lock = threading.Lock()

    def add(self, name: str, **labels: str) -> None:
        """Count one more of ``name`` with these labels."""
        key = tuple(sorted(labels.items()))
        with self._lock:
            family = self._values[name]
            family[key] = family.get(key, 0) + 1

    def snapshot(self) -> Snapshot:
        with self._lock:
            return {name: dict(family) for name, family in self._values.items()}


def merge(snapshots: Sequence[Snapshot]) -> Snapshot:
    """The sum of several workers' snapshots."""
    total: Snapshot = {name: {} for name in COUNTERS}
    for snapshot in snapshots:
        for name, family in snapshot.items():
            into = total.setdefault(name, {})
            for labels, value in family.items():
                into[labels] = into.get(labels, 0) + value
    return total


class JsonLog:
    """JSON Lines on stderr or appended to a file, one ``write`` per line, secrets redacted."""

    def __init__(self, path: Path | None, env: Mapping[str, str], *, worker: str = "") -> None:
        self._redact = Redactor(env)
        self._store_url = env.get(ENV_VAR)
        self._stream: IO[bytes] = open(path, "ab") if path else sys.stderr.buffer  # noqa: SIM115 - closed by close()
        self._owned = path is not None
        self._lock = threading.Lock()
        self.worker = worker

    def write(self, kind: str, at: datetime, **fields: Any) -> None:
        """One line: ``{"at", "kind", "worker", **fields}`` (None fields are left out)."""
        record = {"at": stamp(at), "kind": kind, "worker": self.worker or None, **fields}
        clean = {k: self._clean(v) for k, v in record.items() if v is not None}
        line = orjson.dumps(clean) + b"\n"
        with self._lock:
            if self._owned:  # one write(2) per line: processes appending never interleave
                os.write(self._stream.fileno(), line)
            else:
                self._stream.write(line)
                self._stream.flush()

    def redact(self, text: str) -> str:
        """``text`` with the secrets of the service's environment and store passwords replaced."""
        return mask_password(self._redact(text), self._store_url)

    def _clean(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._clean(v) for v in value]
        return self.redact(value) if isinstance(value, str) else value

    def close(self) -> None:
        if self._owned:
            self._stream.close()


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
        """An upstream went down, came back, or refused a probe (the runner's monitor)."""
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

    def appended(self, events: Sequence[Event]) -> None:
        """Every batch the runner appended (its observer)."""
        for event in events:
            self._event(event)

    def _event(self, event: Event) -> None:
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
                self._call(event, "planner", "proposed", None, event.evidence, key=event.plan_id)
            case PlanFailed():
                self._call(event, "planner", "failed", event.failure_class, event.evidence, key=event.plan_id)  # fmt: skip
            case AttemptFinished():
                self._call(event, "worker", event.outcome, event.failure_class, event.evidence, key=event.run_id)  # fmt: skip
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
    ) -> None:
        """One finished agent run: a count, and a log line with its class, rule and charge."""
        charged = is_charged_run(outcome, cls, evidence)
        started = self._started.pop((event.goal_id, key), None)
        family = "governor_planner_calls_total" if role == "planner" else "governor_attempts_total"
        labels = {"outcome": outcome, "class": cls or "none"}
        labels["charged"] = str(charged).lower()
        self.counters.add(family, **labels)
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
