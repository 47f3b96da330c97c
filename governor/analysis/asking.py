"""How much a goal asks for when a budget stops it (SPEC §13.7): what the forecast says it
needs to finish, from the store's similar goals.

Rules:
    * The default amount of a ``budget.requested`` is the median of what the goal needs to
      finish from where it is (``need_to_finish``: its own budgets lifted, the model fitted
      to the similar goals' histories): cost in USD for a cost budget, charged attempts for
      an attempts budget.
    * Only goals of the same profiles count (``similar``), the ``HISTORIES`` most recent
      among the store's ``LOOK_AT`` most recently updated goals, as ``governor new``'s
      forecast line; with none, or a need of nothing, there is no data and the driver asks
      one more of the spent unit.
    * A forecast that fails to read a history is no data either: asking never stops a goal.
"""

from __future__ import annotations

import math
from typing import Final

from governor.analysis.corpus import Corpus
from governor.core.pools import Figure
from governor.core.view import GoalView
from governor.drive.pools import NeedToFinish
from governor.errors import GovernorError
from governor.store.base import EventStore

HISTORIES: Final = 100
"""At most this many similar goals (the most recently updated ones) fit the model."""
LOOK_AT: Final = 300
"""They are looked for among the store's this many most recently updated goals."""


def need_in(store: EventStore) -> NeedToFinish:
    """What a goal of ``store`` needs to finish, by the forecast of its similar goals there
    (None: no data)."""

    def need(view: GoalView) -> Figure | None:
        from governor.analysis.forecast import (  # noqa: PLC0415 - only a budget stop asks
            need_to_finish,
            similar_corpus,
            subset,
        )

        created = view.created
        if created is None:
            return None
        try:
            rows = [s for s in store.goals() if s.goal_id != view.goal_id]
            rows.sort(key=lambda s: s.updated_at)
            recent = Corpus(goal_ids=tuple(s.goal_id for s in rows[-LOOK_AT:]), opened=store)
            alike = similar_corpus(recent, created, exclude=view.goal_id)
            if not len(alike):
                return None
            if len(alike) > HISTORIES:
                alike = subset(alike, range(len(alike) - HISTORIES, len(alike)))
            found = need_to_finish(view, alike)
        except GovernorError:
            return None
        usd = found.median["cost_usd"]
        attempts = math.ceil(found.median["charged_attempts"])
        if usd <= 0 and attempts <= 0:
            return None
        return Figure(usd=usd, attempts=attempts)

    return need
