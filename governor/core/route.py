"""Routing: the one action a goal's decision asks of the shell, from a small closed set.

Rules (SPEC §8):
    * ``route(decision)`` returns exactly one of ``Plan``, ``Apply``, ``Dispatch``,
      ``Accept``, ``Park``, ``Resume``, ``Wait``, ``Ask`` or ``Stop``. It reads the
      decision's status, next action, what it is blocked on and the plan or items it
      names — never the rule that fired.
    * ``Plan`` asks the planner (``plan_id`` set: the plan was requested but its run was
      lost, so it is continued under that id). ``Dispatch`` runs worker attempts on the
      items named (an item whose attempt is in flight was lost: it is continued).
      ``Park`` records that the goal waits on a failing upstream; ``Resume`` records that
      it goes on once that upstream is back (SPEC §11.10). ``Wait`` sleeps until
      ``until`` (``None``: until something else changes). ``Ask`` puts the question of a
      goal stopped on a decision to a person, if the driver has one to ask (LangGraph's
      ``interrupt``); the answer is an operator verb. ``Stop`` ends the drive: ``review``
      when an operator must review, else ``stopped``.
    * The drivers — the LangGraph graph, ``tick``, the service and the simulator —
      perform these actions and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from governor.core.decision import Decision
from governor.core.event_fields import PlanTrigger
from governor.core.upstream import Outage


@dataclass(frozen=True, slots=True)
class Plan:
    """Ask the planner for a new plan, or continue the lost run of the plan in flight."""

    trigger: PlanTrigger | None
    """Why a new plan is asked for; ``None`` for a continuation (it keeps its own)."""
    plan_id: str | None = None
    """The plan in flight, to continue; ``None`` for a new plan."""


@dataclass(frozen=True, slots=True)
class Apply:
    """Materialise a valid proposal."""

    plan_id: str


@dataclass(frozen=True, slots=True)
class Dispatch:
    """Run the next attempt of each item (or continue the lost attempt in flight)."""

    work_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Accept:
    """Accept items whose attempt passed."""

    work_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Park:
    """Record that the goal waits, uncharged, on a failing upstream (``goal.parked``)."""

    outage: Outage


@dataclass(frozen=True, slots=True)
class Resume:
    """Record that the goal goes on now that its upstream is back (``goal.resumed``, and
    ``work.retried`` for the items it refused)."""

    outage: Outage


@dataclass(frozen=True, slots=True)
class Wait:
    """Nothing to do before ``until`` (an outside service's cooldown)."""

    until: datetime | None


@dataclass(frozen=True, slots=True)
class Ask:
    """A person must answer the planner's or a worker's question before the goal goes on."""

    work_id: str | None
    """The item whose worker asked; ``None`` when the planner asked."""
    question: str
    """The question as the decision's reason gives it (one line)."""


@dataclass(frozen=True, slots=True)
class Stop:
    """Nothing to do without a person: the goal stopped, or awaits a review."""

    reason: Literal["stopped", "review"]


Action = Plan | Apply | Dispatch | Accept | Park | Resume | Wait | Ask | Stop
ACTING: Final = (Plan, Apply, Dispatch, Accept, Park, Resume)
"""The actions that append events; after each the goal is decided again."""


def route(decision: Decision) -> Action:  # noqa: PLR0911 - one return per action
    """The one action a decision asks for."""
    match decision.next_action:
        case "plan":
            return Plan(decision.trigger or "initial")
        case "apply" if decision.plan_id is not None:
            return Apply(decision.plan_id)
        case "run":
            return Dispatch(decision.work_ids)
        case "accept":
            return Accept(decision.work_ids)
        case "park" if decision.outage is not None:
            return Park(decision.outage)
        case "resume" if decision.outage is not None:
            return Resume(decision.outage)
        case "wait" if decision.status == "running" and decision.plan_id is not None:
            return Plan(None, decision.plan_id)
        case "wait" if decision.status == "running":
            return Dispatch(decision.work_ids)
        case "wait" if decision.status == "waiting":
            return Wait(decision.not_before)
        case "none" if decision.status == "blocked" and decision.blocked_on == "decision":
            return Ask(decision.work_ids[0] if decision.work_ids else None, decision.reason)
    return Stop("review" if decision.status == "awaiting_review" else "stopped")


def acts(action: Action) -> bool:
    """Whether an action appends events (then the goal is decided again)."""
    return isinstance(action, ACTING)


def name_of(action: Action) -> str:
    """The action's one name: ``plan``, ``apply``, ``dispatch``, ``accept``, ``park``,
    ``resume``, ``wait``, ``ask``, ``stop``."""
    return type(action).__name__.lower()
