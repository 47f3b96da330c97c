"""Story: build goal histories for tests with the core's own recording functions.

A story keeps a clock that advances one second per step (or as told), a view folded
as it goes, and the list of events; ``decision()`` decides at the story's clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from governor.core import record, record_work, verbs
from governor.core.decision import Decision
from governor.core.event_fields import AcceptanceReport, PlanTrigger, Profile, WorkSpec
from governor.core.events import Event, GoalCreated
from governor.core.evidence import UNKNOWN, Evidence, FailureClass, nothing_happened
from governor.core.fold import fold, project
from governor.core.policy import MAX_SAME_FAILURES, Policy, completion_problem
from governor.core.policy_input import policy_from
from governor.core.rules.decide import decide
from governor.core.view import GoalView

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ABSENT = nothing_happened("test:probe", "observed nothing", rule="test")
"""Positive no-effect evidence: passes the gate."""
OBSERVED = Evidence(effects="observed", output="observed", source="test:probe", ref="tool call")


class Story:
    """A goal history under construction."""

    def __init__(self, goal_id: str = "g", **policy: Any) -> None:
        self.now = T0
        given = policy_from(policy)
        fields: dict[str, Any] = {
            "title": "Test goal",
            "objective": "Do the thing.",
            "acceptance": ["it is done"],
            "profiles": {
                "planner": Profile(harness="scripted"),
                "worker": Profile(harness="scripted"),
            },
            "planner": "planner",
            "worker": "worker",
        }
        if completion_problem(given) is None:
            self.events: list[Event] = record.create_goal(
                goal_id, at=self.now, policy=given, **fields
            )
        else:  # a goal recorded before SPEC §12.1 refused such a policy: read as recorded
            recorded = given.model_copy(update={"max_same_failures": MAX_SAME_FAILURES})
            if "max_same_failures" in given.model_fields_set:
                recorded = given
            self.events = [
                GoalCreated(goal_id=goal_id, seq=1, at=self.now, policy=recorded, **fields)
            ]
        self.view: GoalView = project(self.events)
        self._plans = 0
        self._runs = 0

    # -- plumbing
    def tick(self, seconds: float = 1.0) -> Story:
        self.now += timedelta(seconds=seconds)
        return self

    def add(self, events: Sequence[Event]) -> Story:
        self.events.extend(events)
        fold(self.view, events)
        return self

    def decision(self, now: datetime | None = None) -> Decision:
        return decide(self.view, now or self.now)

    @property
    def policy(self) -> Policy:
        return self.view.policy

    # -- planner
    def request(self, trigger: PlanTrigger | None = None) -> str:
        self._plans += 1
        plan_id = f"p{self._plans}"
        self.tick().add(
            record.request_plan(
                self.view, plan_id=plan_id, trigger=trigger or "initial", at=self.now
            )
        )
        return plan_id

    def plan_fails(
        self,
        failure_class: FailureClass | None = None,
        evidence: Evidence | None = ABSENT,
        error: str = "planner failed",
        retry_after_s: float | None = None,
        run_s: float = 1.0,
    ) -> str:
        plan_id = self.request()
        self.tick(run_s).add(
            record.plan_failed(
                self.view,
                plan_id=plan_id,
                at=self.now,
                failure_class=failure_class,
                evidence=evidence if failure_class else UNKNOWN,
                error=error,
                retry_after_s=retry_after_s,
            )
        )
        return plan_id

    def propose(self, *keys: str, deps: dict[str, tuple[str, ...]] | None = None) -> str:
        plan_id = self.request()
        work = [
            WorkSpec(
                key=k,
                title=k.title(),
                objective=f"do {k}",
                acceptance=(f"{k} works",),
                depends_on=(deps or {}).get(k, ()),
            )
            for k in keys
        ]
        decision = "apply" if keys else "complete"
        self.tick().add(
            record.plan_proposed(
                self.view,
                plan_id=plan_id,
                at=self.now,
                decision=decision,
                rationale="because",
                work=work,
            )
        )
        return plan_id

    def apply(self, plan_id: str) -> Story:
        return self.tick().add(record.apply_plan(self.view, plan_id=plan_id, at=self.now))

    def plan(self, *keys: str, deps: dict[str, tuple[str, ...]] | None = None) -> str:
        plan_id = self.propose(*keys, deps=deps)
        self.apply(plan_id)
        return plan_id

    # -- workers
    def start(self, work_id: str) -> str:
        self._runs += 1
        run_id = f"r{self._runs}"
        self.tick().add(
            record_work.start_attempt(self.view, work_id=work_id, run_id=run_id, at=self.now)
        )
        return run_id

    def finish(
        self,
        work_id: str,
        outcome: str = "failed",
        failure_class: FailureClass | None = None,
        evidence: Evidence | None = None,
        error: str | None = "it broke",
        retry_after_s: float | None = None,
        run_s: float = 1.0,
        cost_usd: float | None = None,
    ) -> Story:
        item = self.view.work[work_id]
        assert item.run_id is not None
        acceptance = (
            AcceptanceReport(satisfied=(f"{work_id} works",)) if outcome == "succeeded" else None
        )
        return self.tick(run_s).add(
            record_work.finish_attempt(
                self.view,
                work_id=work_id,
                run_id=item.run_id,
                at=self.now,
                outcome=outcome,  # type: ignore[arg-type]
                failure_class=failure_class,
                evidence=evidence
                if evidence is not None
                else (ABSENT if failure_class else UNKNOWN),
                error=None if outcome == "succeeded" else error,
                retry_after_s=retry_after_s,
                acceptance=acceptance,
                cost_usd=cost_usd,
            )
        )

    def attempt(self, work_id: str, outcome: str = "failed", **kwargs: Any) -> Story:
        self.start(work_id)
        return self.finish(work_id, outcome, **kwargs)

    def accept(self, work_id: str) -> Story:
        return self.tick().add(
            verbs.accept_work(self.view, work_id=work_id, at=self.now, actor="governor")
        )

    def succeed(self, work_id: str) -> Story:
        return self.attempt(work_id, "succeeded").accept(work_id)

    def continue_(self, work_id: str) -> Story:
        self._runs += 1
        return self.tick().add(
            record_work.continue_attempt(
                self.view, work_id=work_id, run_id=f"r{self._runs}", at=self.now
            )
        )

    # -- operator
    def op(self, verb: str, **kwargs: Any) -> Story:
        fn = getattr(verbs, verb)
        return self.tick().add(fn(self.view, at=self.now, actor="operator:test", **kwargs))


# -- stories a goal is often in, for the decision and routing tables


def proposed(*keys: str, **policy: Any) -> Story:
    """A first plan proposed (not applied)."""
    s = Story(**policy)
    s.propose(*keys or ("a",))
    return s


def planned(*keys: str, **policy: Any) -> Story:
    """A first plan applied; its items ready."""
    s = Story(**policy)
    s.plan(*keys or ("a",))
    return s


def requested() -> Story:
    """A first plan requested, its run in flight (or lost)."""
    s = Story()
    s.request()
    return s


def started() -> Story:
    """The first attempt of ``p1-a`` in flight (or lost)."""
    s = planned()
    s.start("p1-a")
    return s
