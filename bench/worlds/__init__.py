"""Worlds: generative models that produce goal histories through the real core.

Each world is a function ``(policy, seed, goal) -> events``: goal number ``goal`` of a
corpus seeded ``seed``, driven to its end under ``policy`` by the core's own decisions.
The same ``(seed, goal)`` under two policies tells the same story until the policies
diverge (common random numbers), so simulating a world directly under a candidate policy
gives the truth the tuner's estimate for that candidate is checked against.

    * ``simulate`` — governor's own model (``governor.analysis.simulate``), the one the
      tuner fits;
    * ``rival`` — an independent model with features the tuner does not assume
      (``bench.worlds.rival``);
    * ``drift`` — governor's own model whose items get harder with every replan
      (``bench.worlds.drift``): a structure the tuner's model does not have.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any, Final

from bench.worlds.drift import drift_goal
from bench.worlds.rival import RivalModel, rival_goal
from governor.analysis.model import Model
from governor.analysis.simulate import simulate_goal
from governor.core.events import Event
from governor.core.policy import Policy
from governor.errors import InputError

GoalMaker = Callable[[Policy, int, int], list[Event]]


def simulate_world_goal(policy: Policy, seed: int, goal: int) -> list[Event]:
    """Goal ``goal`` of governor's own generative model, with its defaults."""
    return simulate_goal(Model(), policy, seed, goal)


def rival_world_goal(policy: Policy, seed: int, goal: int) -> list[Event]:
    """Goal ``goal`` of the rival world, with its defaults."""
    return rival_goal(RivalModel(), policy, seed, goal)


def drift_world_goal(policy: Policy, seed: int, goal: int) -> list[Event]:
    """Goal ``goal`` of the drift world, with governor's model's defaults."""
    return drift_goal(Model(), policy, seed, goal)


WORLDS: Final[dict[str, GoalMaker]] = {
    "simulate": simulate_world_goal,
    "rival": rival_world_goal,
    "drift": drift_world_goal,
}
"""The worlds by name (top-level functions, so worker processes can receive them)."""


def world(name: str, settings: dict[str, str] | None = None) -> GoalMaker:
    """World ``name`` with some of its model's numbers changed (``{"hard_share": "0.5"}``).

    Raises:
        InputError: for an unknown world, a field its model does not have or holds no
            single number in, or a value that is not a number.
    """
    if name not in WORLDS:
        raise InputError(f"no world '{name}': choose {', '.join(sorted(WORLDS))}")
    if not settings:
        return WORLDS[name]
    model = RivalModel() if name == "rival" else Model()
    changes: dict[str, Any] = {}
    for field, text in settings.items():
        default = getattr(model, field, None)
        if isinstance(default, bool) or not isinstance(default, int | float):
            numbers = [
                f.name
                for f in dataclasses.fields(model)
                if type(getattr(model, f.name)) in (int, float)
            ]
            raise InputError(
                f"the {name} world has no number '{field}': one of {', '.join(numbers)}"
            )
        try:
            changes[field] = type(default)(text)
        except ValueError:
            raise InputError(f"{field}={text}: not a {type(default).__name__}") from None
    if isinstance(model, RivalModel):
        return partial(rival_goal, dataclasses.replace(model, **changes))
    if name == "drift":
        return partial(drift_goal, dataclasses.replace(model, **changes))
    return partial(simulate_goal, dataclasses.replace(model, **changes))
