"""Replay: step through a history, deciding after every event, in bounded memory.

Rules (SPEC §9):
    * Each decision is taken with ``now`` = that event's ``at`` (replay is
      deterministic); a fixed ``now`` overrides it.
    * The stream is checked as it is read (``governor.core.history``): a replay never
      shows decisions for a history that breaks the format.
    * ``replay --json`` prints one ``governor.render.records.step_record`` per step.
    * It may read each event as its compiled struct (``LineDecoder(structs=True)``): the
      fold, the checks and the decisions take it alike, and a step gives the pydantic
      event only when asked (``ReplayStep.event``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import NamedTuple

from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.history import HistoryChecker, check_history, empty_history
from governor.core.rules.decide import decide
from governor.core.rules.decider import Decider
from governor.core.wire.decoder import event_of
from governor.errors import HistoryError


class ReplayStep(NamedTuple):
    """One event of a history and the decision right after it (a named tuple: one is
    made per event of a replay, and a frozen dataclass costs several times as much)."""

    line: int
    read: Event
    """The event as it was read: the event, or its compiled struct (which reads alike)."""
    decision: Decision

    @property
    def event(self) -> Event:
        """The event (a pydantic model, built from the struct when it was read as one)."""
        return event_of(self.read)

    @property
    def seq(self) -> int:
        return self.read.seq

    @property
    def type(self) -> str:
        return self.read.type

    @property
    def at(self) -> datetime:
        return self.read.at


def replay(
    events: Iterable[tuple[int, Event]],
    *,
    now: datetime | None = None,
    at_seq: int | None = None,
    source: str | None = None,
    ledgers: bool = True,
) -> Iterator[ReplayStep]:
    """Check and fold ``(line, event)`` pairs, yielding the decision after each event.

    Args:
        events: the history, as ``(line, event)`` pairs (see ``governor.store.jsonl``).
        now: decide every step at this time instead of at each event's ``at``.
        at_seq: yield only the step of this seq (and stop reading after it).
        source: the history's name, for error messages.
        ledgers: ``False``: each step's decision carries no ledger (``NO_LEDGER``; the
            same status, action, reason and rule) but the last step's, for a caller
            that shows only the last ledger (the text replay).

    Raises:
        HistoryError: at the first line that breaks the history format.
    """
    if at_seq is None:
        checker = HistoryChecker(source)
        decider = Decider(checker.view)  # the checker folds; the decider decides what changed
        step = None
        try:
            for line, event in events:
                checker.check(event, line)
                if step is not None:
                    yield step
                step = ReplayStep(line, event, decider.decide(now or event.at, with_ledger=ledgers))
        except HistoryError:  # the steps before the broken line are shown all the same
            if step is not None:
                yield step
            raise
        if step is None:
            raise empty_history(source)
        if not ledgers:  # the last step with its ledger
            step = step._replace(decision=decider.decide(now or step.at))
        yield step
        return
    for line, event, view in check_history(events, source=source):
        if event.seq == at_seq:
            yield ReplayStep(line, event, decide(view, now or event.at))
            return
