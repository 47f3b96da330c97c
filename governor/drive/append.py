"""Appending from the shell: fold the events into the view, then append them with the summary.

Rules (SPEC §3, §8):
    * Events are built by a function of the current view, so a conflicting append (an
      operator verb or another runner landing meanwhile) is rebuilt on the reloaded
      view, never replayed stale; after ``tries`` conflicts in a row it gives up with
      ``ConcurrencyConflictError``.
    * The summary is the core's (``governor.core.summary``), taken at the clock's time
      and written in the append's transaction.
    * A failed append leaves the view holding events the store refused: the caller
      reloads it (``append_built`` does so on a conflict).
    * Each event is folded once: a build may fold the first of its events into the view
      itself (a finish, to decide whether it accepts the item: ``drive.outcomes``), and
      the append folds only those after the view's ``seq``. Given the view's ``Decider``,
      the summary's decision is the decider's (what changed decided again), not one from
      scratch.
    * An append may carry pool events (``Along``: a call's reservation with its start,
      its settlement with its finish), drafted from the events built and written in the
      append's own transaction (``EventStore.append``'s ``pools``): both land or neither.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from governor.clock import Clock
from governor.core.events import Event
from governor.core.fold import fold, project
from governor.core.rules.decider import Decider
from governor.core.summary import summarize
from governor.core.view import GoalView
from governor.errors import ConcurrencyConflictError
from governor.store.base import EventStore, Lease
from governor.store.pools import PoolWrite

Build = Callable[[GoalView], list[Event]]
"""Builds the events to append on the view they follow."""

Along = Callable[[Sequence[Event]], PoolWrite | None]
"""The pool events that ride in the transaction of an append, given its events."""


def append_folded(
    store: EventStore,
    view: GoalView,
    events: Sequence[Event],
    now: datetime,
    *,
    lease: Lease | None = None,
    expected_seq: int | None = None,
    decider: Decider | None = None,
    along: Along | None = None,
) -> None:
    """Append events built on ``view``, folding into it those it does not hold yet, with
    the summary after them (its decision the ``decider``'s when it is the view's).

    ``expected_seq``: the view's ``seq`` when the events were built (default: now);
    ``along``: the pool events written in the same transaction."""
    expected = view.seq if expected_seq is None else expected_seq
    fold(view, [e for e in events if e.seq > view.seq])
    decision = None
    if decider is not None and decider.view is view:
        decision = decider.decide(now, with_ledger=False)
    summary = summarize(view, now, decision=decision)
    pools = along(events) if along is not None else None
    if pools is None:
        store.append(view.goal_id, events, expected_seq=expected, lease=lease, summary=summary)
    else:
        store.append(
            view.goal_id, events, expected_seq=expected, lease=lease, summary=summary, pools=pools
        )


def append_built(
    store: EventStore,
    view: GoalView,
    build: Build,
    clock: Clock,
    *,
    lease: Lease | None = None,
    tries: int = 5,
    decider: Decider | None = None,
    along: Along | None = None,
) -> tuple[GoalView, list[Event]]:
    """Build events on ``view`` and append them; on a conflict reload the view and rebuild.

    Returns the view after the events (the given one, folded, or a reloaded one) and the
    events appended (none when ``build`` returned none). ``decider``: the view's, when
    it has one; ``along``: pool events for each try's transaction (``append_folded``).

    Raises:
        ConcurrencyConflictError: after ``tries`` conflicts in a row.
    """
    for _ in range(tries):
        expected = view.seq
        events = build(view)
        if not events:
            return view, events
        try:
            append_folded(
                store,
                view,
                events,
                clock(),
                lease=lease,
                expected_seq=expected,
                decider=decider,
                along=along,
            )
        except ConcurrencyConflictError:
            view = project(store.load(view.goal_id))
            continue
        return view, events
    raise ConcurrencyConflictError(
        view.goal_id, expected_seq=view.seq, actual_seq=store.last_seq(view.goal_id)
    )
