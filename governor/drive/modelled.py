"""A modelled goal: the actions every generative world performs the same way.

Rules:
    * A world (governor's own simulator, the rival world in ``bench/worlds``) drives a
      goal through ``governor.drive.act.follow`` with a model in place of agents. What
      differs between worlds is how plans and attempts turn out (``plan``, ``attempt``);
      applying, dispatching, accepting, parking, resuming, waiting and asking are the
      core's verbs recorded at the world's clock, the same for every world.
    * The clock is seconds since the world's ``epoch``; nothing reads the wall clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, ClassVar

from governor.core import record, record_work, verbs
from governor.core.event_fields import Outcome
from governor.core.events import Event
from governor.core.evidence import Evidence, FailureClass
from governor.core.fold import fold
from governor.core.record_park import park_goal, resume_goal
from governor.core.route import Accept, Apply, Ask, Dispatch, Park, Resume, Wait
from governor.core.view import GoalView


class ModelledGoal:
    """The shared half of a world's ``Actor``: a view, its events and a model clock."""

    epoch: ClassVar[datetime]
    view: GoalView
    events: list[Event]
    t: float

    @property
    def now(self) -> datetime:
        return self.epoch + timedelta(seconds=self.t)

    def add(self, events: list[Event]) -> None:
        self.events.extend(events)
        fold(self.view, events)

    def plan_failed(
        self,
        plan_id: str,
        failure_class: FailureClass | None,
        evidence: Evidence,
        error: str,
        retry_after_s: float | None = None,
    ) -> None:
        """Record the plan's failure, classified by the world."""
        self.add(
            record.plan_failed(
                self.view,
                plan_id=plan_id,
                at=self.now,
                failure_class=failure_class,
                evidence=evidence,
                error=error,
                retry_after_s=retry_after_s,
            )
        )

    def finish(self, work_id: str, run_id: str, outcome: Outcome, **fields: Any) -> None:
        """Record the attempt's finish as the world decided it."""
        self.add(
            record_work.finish_attempt(
                self.view, work_id=work_id, run_id=run_id, at=self.now, outcome=outcome, **fields
            )
        )

    def attempt(self, work_id: str) -> None:
        """One attempt of the world's worker on the item (the one in flight, if any)."""
        raise NotImplementedError

    def apply(self, action: Apply) -> None:
        self.add(record.apply_plan(self.view, plan_id=action.plan_id, at=self.now))

    def dispatch(self, action: Dispatch) -> None:
        for work_id in action.work_ids:
            self.attempt(work_id)

    def accept(self, action: Accept) -> None:
        for work_id in action.work_ids:
            self.add(verbs.accept_work(self.view, work_id=work_id, at=self.now, actor="governor"))

    def park(self, action: Park) -> None:
        self.add(park_goal(self.view, action.outage, at=self.now))

    def resume(self, action: Resume) -> None:
        self.add(resume_goal(self.view, action.outage, at=self.now))

    def wait(self, action: Wait) -> bool:
        if action.until is None:
            return False
        self.t = max(self.t, (action.until - self.epoch).total_seconds())
        return True

    def ask(self, action: Ask) -> bool:
        """Nobody answers questions in a modelled world: the drive ends on one."""
        return False
