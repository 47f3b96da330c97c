"""Acting: the one place a routed action becomes a call on whoever drives the goal.

Rules (SPEC §8):
    * The core routes a decision to one action (``governor.core.route``); ``act`` performs
      it on an ``Actor`` — the runner (real agents, the store, the lease) or the
      simulator (a generative model) — and says whether to decide again.
    * Every driver goes through here: the LangGraph graph's nodes, ``tick``, the service
      (through ``tick``) and the simulator (through ``follow``). None of them reads a
      decision's next action itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, assert_never

from governor.core.decision import Decision
from governor.core.route import (
    Accept,
    Action,
    Apply,
    Dispatch,
    Park,
    Plan,
    Resume,
    Stop,
    Wait,
    route,
)


class Actor(Protocol):
    """What performs the actions of one goal."""

    def plan(self, action: Plan) -> None:
        """Request a plan (or continue the lost one), run the planner, record its outcome."""

    def apply(self, action: Apply) -> None:
        """Materialise the proposal."""

    def dispatch(self, action: Dispatch) -> None:
        """Start (or continue) the items' attempts, run the workers, record each finish."""

    def accept(self, action: Accept) -> None:
        """Accept the items."""

    def park(self, action: Park) -> None:
        """Record that the goal waits on a failing upstream."""

    def resume(self, action: Resume) -> None:
        """Record that the goal goes on now that its upstream is back."""

    def wait(self, action: Wait) -> bool:
        """Wait until ``action.until``; False when it will not wait that long (nor at all)."""
        ...


def act(actor: Actor, action: Action) -> bool:
    """Perform one action; True when the goal should be decided again, False when the
    drive ends here (a stop, or a wait the actor will not sit through)."""
    match action:
        case Plan():
            actor.plan(action)
        case Apply():
            actor.apply(action)
        case Dispatch():
            actor.dispatch(action)
        case Accept():
            actor.accept(action)
        case Park():
            actor.park(action)
        case Resume():
            actor.resume(action)
        case Wait():
            return actor.wait(action)
        case Stop():
            return False
        case _:
            assert_never(action)
    return True


def follow(
    actor: Actor, decide: Callable[[], Decision], *, max_steps: int
) -> tuple[Decision, Action]:
    """Decide, route and act until the drive ends (or ``max_steps``); the last decision and action."""
    decision = decide()
    action = route(decision)
    for _ in range(max_steps):
        if not act(actor, action):
            break
        decision = decide()
        action = route(decision)
    return decision, action
