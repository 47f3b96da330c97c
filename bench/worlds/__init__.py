"""Worlds: generative models that produce goal histories through the real core.

Each world is a function ``(policy, seed, goal) -> events``: goal number ``goal`` of a
corpus seeded ``seed``, driven to its end under ``policy`` by the core's own decisions.
The same ``(seed, goal)`` under two policies tells the same story until the policies
diverge (common random numbers), so simulating a world directly under a candidate policy
gives the truth the tuner's estimate for that candidate is checked against.

    * ``simulate`` — governor's own model (``governor.analysis.simulate``), the one the
      tuner fits;
    * ``rival`` — an independent model with features the tuner does not assume
      (``bench.worlds.rival``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from bench.worlds.rival import RivalModel, rival_goal
from governor.analysis.simulate import Model, simulate_goal
from governor.core.events import Event
from governor.core.policy import Policy

GoalMaker = Callable[[Policy, int, int], list[Event]]


def simulate_world_goal(policy: Policy, seed: int, goal: int) -> list[Event]:
    """Goal ``goal`` of governor's own generative model, with its defaults."""
    return simulate_goal(Model(), policy, seed, goal)


def rival_world_goal(policy: Policy, seed: int, goal: int) -> list[Event]:
    """Goal ``goal`` of the rival world, with its defaults."""
    return rival_goal(RivalModel(), policy, seed, goal)


WORLDS: Final[dict[str, GoalMaker]] = {
    "simulate": simulate_world_goal,
    "rival": rival_world_goal,
}
"""The worlds by name (top-level functions, so worker processes can receive them)."""
