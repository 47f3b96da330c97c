"""Generate long, valid histories quickly (raw JSON Lines, no pydantic) for benchmarks.

The story: one goal with a few plans of a handful of items; each item is attempted
many times through vendor outages (uncharged), charged failures, continuations after
lost runs, and finally success. Budgets are raised so the goal keeps going, exactly as
an operator would do it (``budget.raised``). Every line validates.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ABSENT = {
    "effects": "absent",
    "output": "absent",
    "refusal": "absent",
    "source": "codex:jsonl",
    "ref": "events 0-2",
    "rule": "vendor-status",
}
OBSERVED = {
    "effects": "observed",
    "output": "observed",
    "refusal": "unknown",
    "source": "codex:jsonl",
    "ref": "events 0-40",
    "rule": "default",
}


class _Writer:
    def __init__(self, goal_id: str) -> None:
        self.goal_id, self.seq, self.t = goal_id, 0, T0

    def event(self, type_: str, **fields: Any) -> dict[str, Any]:
        self.seq += 1
        self.t += timedelta(seconds=7)
        at = self.t.strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "schema_version": 1,
            "goal_id": self.goal_id,
            "seq": self.seq,
            "at": at,
            "actor": "governor",
            "type": type_,
            **fields,
        }


def events(n: int, goal_id: str = "bench", *, cycles: int = 400) -> Iterator[dict[str, Any]]:
    """About ``n`` events of one long goal (it stops at a natural boundary past ``n``).

    Each item goes through ``cycles`` rounds of outage, charged failure and timeout; more
    cycles means fewer plans and items for the same number of events.
    """
    w = _Writer(goal_id)
    profiles = {"p": {"harness": "codex", "model": "gpt-5-codex"}}
    policy = {
        "max_attempts": 10**9,
        "max_uncharged_attempts": 10**9,
        "max_total_attempts": 10**9,
        "max_replans": 10**6,
        "max_plan_records": 10**6,
        "max_total_work_items": 10**6,
        "max_runtime_s": 1e10,
    }
    yield w.event(
        "goal.created",
        title="A long goal",
        objective="Keep going.",
        acceptance=["done"],
        policy=policy,
        profiles=profiles,
        planner="p",
        worker="p",
    )
    plan, run = 0, 0
    while w.seq < n:
        plan += 1
        pid = f"p{plan}"
        yield w.event(
            "plan.requested",
            plan_id=pid,
            sequence=plan,
            trigger="initial" if plan == 1 else "milestone",
            fingerprint="0" * 64,
        )
        keys = [f"k{i}" for i in range(5)]
        yield w.event(
            "plan.proposed",
            plan_id=pid,
            decision="apply",
            rationale="r",
            work=[{"key": k, "title": k, "objective": k} for k in keys],
        )
        for k in keys:
            yield w.event(
                "work.created",
                work_id=f"{pid}-{k}",
                plan_id=pid,
                title=k,
                objective=k,
                profile="p",
                max_attempts=10**9,
                max_uncharged_attempts=10**9,
            )
        yield w.event("plan.applied", plan_id=pid, work_ids=[f"{pid}-{k}" for k in keys])
        for k in keys:
            wid, attempt = f"{pid}-{k}", 0
            for cycle in range(cycles):
                for outcome, cls, ev in (
                    ("failed", "upstream", ABSENT),
                    ("failed", None, OBSERVED),
                    ("succeeded" if cycle == cycles - 1 else "timed_out", None, None),
                ):
                    attempt += 1
                    run += 1
                    yield w.event(
                        "attempt.started",
                        work_id=wid,
                        attempt=attempt,
                        run_id=f"r{run}",
                        trigger="retry" if attempt > 1 else "initial",
                    )
                    if cycle % 4 == 0:
                        run += 1
                        yield w.event(
                            "attempt.continued", work_id=wid, attempt=attempt, run_id=f"r{run}"
                        )
                    fields: dict[str, Any] = {
                        "work_id": wid,
                        "attempt": attempt,
                        "run_id": f"r{run}",
                        "outcome": outcome,
                    }
                    if cls:
                        fields["class"] = cls
                    if ev:
                        fields["evidence"] = ev
                    if outcome != "succeeded":
                        fields["error"] = (
                            "HTTP/1.1 503 Service Unavailable" if cls else "tests failed: 3 of 12"
                        )
                    else:
                        fields["cost_usd"] = 0.01
                    yield w.event("attempt.finished", **fields)
            yield w.event("work.accepted", work_id=wid)


def write(path: Path, n: int, *, cycles: int = 400) -> int:
    """Write about ``n`` events to ``path``; returns the number written."""
    count = 0
    with path.open("wb") as out:
        for event in events(n, cycles=cycles):
            out.write(orjson.dumps(event) + b"\n")
            count += 1
    return count
