"""Many goals at once for the service tests: scenario kinds, creation, waiting, history checks."""

from __future__ import annotations

import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from governor.core.events import Event, PlanRequested
from governor.core.evidence import is_uncharged
from governor.core.summary import ACTIVE_STATUSES
from governor.core.work_events import AttemptContinued, AttemptFinished, AttemptStarted
from governor.drive import goals
from governor.store import EventStore, export_history, open_store
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

FAST = {"upstream_backoff": {"initial_s": 0.05, "factor": 1, "max_s": 0.05}}
OUTAGE = {"vendor_error": {"status": 503, "message": "HTTP/1.1 503 Service Unavailable"}}
BROKEN = {"stderr": "tests failed\n", "exit_code": 1}


@dataclass(frozen=True)
class Kind:
    """One scenario: what its planner and workers do, and the goal's policy."""

    name: str
    scripts: list[dict[str, Any]]
    policy: dict[str, Any] = field(default_factory=dict)
    planner: dict[str, Any] | None = None
    """Overrides the planner profile (default: the kind's scripted scenario)."""


KINDS = (
    Kind("plain", [planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
                   worker_script("a", [{"effects": True, "reply": done("a")}])]),
    Kind("outage", [planner_script([OUTAGE, {"reply": plan("a")}, {"reply": COMPLETE}]),
                    worker_script("a", [OUTAGE, {"effects": True, "reply": done("a")}])], FAST),
    Kind("replan", [planner_script([{"reply": plan("a")}, {"reply": plan("b")}, {"reply": COMPLETE}]),
                    worker_script("a", [{**BROKEN, "effects": True}]),
                    worker_script("b", [{"effects": True, "reply": done("b")}])], {"max_attempts": 2}),
    Kind("exhaust", [planner_script([BROKEN])], {"max_replans": 2}),
    Kind("environment", [], planner={"harness": "command", "args": ["bin/no-such-planner"]}),
)  # fmt: skip
"""Plain success, outages that recover, charged failures that replan, a spent budget,
and a missing binary."""


def write_goal(project: Project, goal_id: str, kind: Kind) -> Path:
    scenario = f"scenario-{kind.name}.json"
    agents = {"harness": "scripted", "args": [scenario]}
    if not (project.root / scenario).exists():
        project.scenario(scenario, kind.scripts)
    return project.goal_file(goal_id, kind.planner or agents, agents, **kind.policy)


def create_goals(project: Project, url: str, names: Iterable[tuple[str, Kind]]) -> list[str]:
    """Create goals through the library (one process, one store): fast for hundreds."""
    created = []
    with closing(open_store(url)) as store:
        for goal_id, kind in names:
            goals.create(store, write_goal(project, goal_id, kind))
            created.append(goal_id)
    return created


def wait_until_settled(url: str, *, timeout_s: float = 120.0) -> dict[str, int]:
    """Poll the store until no goal is ready, running or waiting; the final counts.

    ``timeout_s`` bounds the time *without progress* (no event appended to any goal), not
    the whole wait: a loaded machine slows the service down but never fails the test,
    while a service that stopped moving still does (issue 9, item 13).
    """
    with closing(open_store(url)) as store:
        seen, stalled_at = -1, time.monotonic()
        while True:
            counts = store.goal_counts()
            if not any(counts.get(s) for s in ACTIVE_STATUSES):
                return counts
            progress = sum(row.seq for row in store.goals())
            if progress != seen:
                seen, stalled_at = progress, time.monotonic()
            assert time.monotonic() - stalled_at < timeout_s, (
                f"no goal moved for {timeout_s}s: {counts}"
            )
            time.sleep(0.1)


def mid_run(
    store: EventStore, goal_ids: list[str], timeout_s: float = 60.0
) -> tuple[int, AttemptStarted]:
    """Wait for a goal whose last event is ``attempt.started`` under a lease: its agent runs.

    Returns the pid of the lease's holder (a worker id is ``host:pid``) and that event.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for goal_id in goal_ids:
            last = list(store.load(goal_id, after_seq=max(store.last_seq(goal_id) - 1, 0)))[-1]
            lease = store.current_lease(goal_id)
            if isinstance(last, AttemptStarted) and lease is not None:
                return int(lease.holder.rsplit(":", 1)[1]), last
        time.sleep(0.02)
    raise AssertionError("no worker was caught in the middle of an agent run")


def stop(serve: subprocess.Popen[str], *, timeout_s: float = 60.0) -> int:
    """SIGTERM the service and wait for it; its exit code."""
    serve.send_signal(signal.SIGTERM)
    return serve.wait(timeout=timeout_s)


@contextmanager
def reaped(process: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """Kill the service if the test left it running (its orphaned workers then stop too)."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def outcome(store: Any, goal_id: str) -> tuple[Any, ...]:
    """What must be the same however the goal was driven: status, why, and its charges."""
    _, d = goals.status(store, goal_id)
    ledger = d.ledger
    return (
        d.status,
        d.blocked_on,
        d.exhausted,
        ledger.replans.charged,
        ledger.replans.uncharged,
        ledger.attempts.charged,
        ledger.attempts.used - ledger.attempts.charged,
    )


def check_runs(goal_id: str, events: list[Event]) -> None:
    """No attempt started twice, numbers gapless per item, every run id used once."""
    starts = [e for e in events if isinstance(e, AttemptStarted)]
    keys = Counter((e.work_id, e.attempt) for e in starts)
    assert all(n == 1 for n in keys.values()), (goal_id, keys)
    numbers: dict[str, list[int]] = {}
    for e in starts:
        numbers.setdefault(e.work_id, []).append(e.attempt)
    assert all(n == list(range(1, len(n) + 1)) for n in numbers.values()), (goal_id, numbers)
    runs = [e.run_id for e in events if isinstance(e, AttemptStarted | AttemptContinued)]
    assert len(runs) == len(set(runs)), (goal_id, runs)
    plans = [e.plan_id for e in events if isinstance(e, PlanRequested)]
    assert len(plans) == len(set(plans)), (goal_id, plans)


def charged_finishes(events: list[Event]) -> Counter[str]:
    """Per item: finished attempts the gate charges (what the ledger must say, no more)."""
    return Counter(
        e.work_id
        for e in events
        if isinstance(e, AttemptFinished)
        and not is_uncharged(e.outcome, e.failure_class, e.evidence)
    )


def export_all(url: str, goal_ids: Iterable[str], folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    with closing(open_store(url)) as store:
        for goal_id in goal_ids:
            with open(folder / f"{goal_id}.jsonl", "wb") as out:
                export_history(store, goal_id, out)


def metric(text: str, name: str, **labels: str) -> float:
    """The sum of a metric's samples whose labels include ``labels``."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        if head.split("{")[0] == name and all(f'{k}="{v}"' in head for k, v in labels.items()):
            total += float(value)
    return total
