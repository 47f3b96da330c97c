"""The drift world: governor's own model, except that work gets harder as a goal replans.

An item's success probability is its Beta(``item_a``, ``item_b``) draw times
``DECAY ** r``, ``r`` the goal's charged replans when the item is first tried: the items a
planner proposes after failures are harder than the first ones (a goal that needs many
replans is one whose work resists). The tuner's model assumes every item is drawn alike,
so a corpus recorded under few replans shows little of the drift, and a policy that
allows many more extrapolates past it: the case the holdout's widening
(``governor.analysis.holdout``) is for. Everything else is ``governor.analysis.simulate``.
"""

from __future__ import annotations

import random
from typing import Final

from governor.analysis.model import Model
from governor.analysis.simulate import Episode, new_goal, world
from governor.core.events import Event
from governor.core.fold import project
from governor.core.policy import Policy
from governor.core.view import GoalView

DECAY: Final = 0.75
"""How much an item's success probability shrinks per charged replan before it."""


def drift_goal(
    model: Model, policy: Policy, seed: int, goal: int, decay: float = DECAY
) -> list[Event]:
    """Goal ``goal`` of a corpus seeded ``seed``, under ``policy``, in the drift world."""
    w = world(model, seed, goal)

    def prior(view: GoalView, _work_id: str, rng: random.Random) -> float:
        return rng.betavariate(model.item_a, model.item_b) * decay**view.charged_replans

    w.prior = prior
    events = new_goal(goal, policy)
    episode = Episode(w, project(events), events, 0.0)
    episode.run()
    return episode.events
