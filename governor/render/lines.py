"""The lines of ``replay --json`` as bytes: the shape of ``records.step_record``, made in
time proportional to what changed since the previous step.

Rules:
    * A line is exactly ``orjson.dumps(records.step_record(step)) + b"\\n"`` (a test holds
      it to that); the shapes stay defined once, in ``governor.render.records``.
    * What a step shares with the one before is not rendered again: the ``work`` members
      of a ledger snapshot that follows the one rendered last (``WorkLedgers.serial``) are
      the kept ones with the rows it names as ``changed`` rendered again; the same
      snapshot is the same bytes. The goal's replan and attempt ledgers, the runtime and
      the cost are kept while they are the same objects.
    * A decision's head (``records.decision_head``) is kept by what it reads: status,
      next action, reason, blocked_on, not_before (with its UTC offset, which its stamp
      prints) and exhausted; a bounded table (replays repeat a few heads over and over).
    * ``StepLines.lines`` is ``line`` over the steps of the one replay loop
      (``governor.analysis.replay.replay``): every step's decision is the decider's, taken
      by the rules' tables; what is kept between lines is data (the bytes of what did not
      change), never a second way to decide (``tests/render/test_lines.py`` holds the lines
      to ``records.step_record``, byte for byte).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from operator import itemgetter
from typing import Final

import orjson

from governor.analysis.replay import ReplayStep, replay
from governor.core.events import Event
from governor.core.ledger import (
    AttemptLedger,
    ReplanLedger,
    WorkLedger,
    WorkLedgers,
)
from governor.render.records import (
    attempts_record,
    decision_head,
    replans_record,
    work_ledger_record,
)

_dumps = orjson.dumps

_HEAD: Final = itemgetter(0, 1, 2, 5, 6, 7)
"""What ``decision_head`` reads of a ``Decision``: status, next_action, reason,
blocked_on, not_before and exhausted (the fields by position, in one C call)."""

_HEADS_KEPT: Final = 4096
"""Decision heads kept at most (then the table starts again)."""

_LINE: Final = (
    b'{"seq":%d,"type":%b,%b,"ledger":{"replans":%b,"attempts":%b,"work":{%b},'
    b'"runtime_s":%b,"cost_usd":%b}}\n'
)
"""``step_record``'s line around its parts (``step_head`` then ``ledger_record``)."""


class StepLines:
    """Renders the steps of one replay, one after another (it keeps what it rendered)."""

    __slots__ = (
        "_attempts",
        "_cost",
        "_heads",
        "_keys",
        "_pieces",
        "_replans",
        "_runtime",
        "_types",
        "_work",
        "_work_json_kept",
        "last",
    )

    def __init__(self) -> None:
        self.last: ReplayStep | None = None
        """The step rendered last."""
        self._work: WorkLedgers | None = None
        """The work ledgers rendered last; ``_pieces`` holds their members, one per row."""
        self._pieces: list[bytes] = []
        self._work_json_kept = b""
        self._replans: tuple[ReplanLedger | None, bytes] = (None, b"")
        self._attempts: tuple[AttemptLedger | None, bytes] = (None, b"")
        self._runtime: tuple[object, bytes] = (None, b"")
        self._cost: tuple[object, bytes] = (None, b"")
        self._heads: dict[tuple[object, ...], bytes] = {}
        """A decision's head (what ``_HEAD`` reads) -> its members, without braces."""
        self._keys: dict[str, bytes] = {}
        """A work id -> its JSON string and the colon (the key of its ``work`` member)."""
        self._types: dict[str, bytes] = {}
        """An event type -> its JSON string."""

    def line(self, step: ReplayStep) -> bytes:
        """The step's line of ``replay --json``, its newline included."""
        self.last = step
        read, decision = step.read, step.decision  # (``step.seq`` is a property)
        ledger = decision.ledger
        key: tuple[object, ...] = _HEAD(decision)
        if (when := decision.not_before) is not None:
            key = (key, when.utcoffset())  # equal instants at other offsets stamp apart
        head = self._heads.get(key)
        if head is None:
            if len(self._heads) >= _HEADS_KEPT:
                self._heads.clear()
            head = self._heads[key] = _dumps(decision_head(decision))[1:-1]
        kind = read.type
        kind_json = self._types.get(kind)
        if kind_json is None:
            kind_json = self._types[kind] = _dumps(kind)
        replans, attempts = ledger.replans, ledger.attempts
        if self._replans[0] is not replans:
            self._replans = (replans, _dumps(replans_record(replans)))
        if self._attempts[0] is not attempts:
            self._attempts = (attempts, _dumps(attempts_record(attempts)))
        runtime, cost = ledger.runtime_s, ledger.cost_usd
        if self._runtime[0] is not runtime:
            self._runtime = (runtime, _dumps(float(runtime)))
        if self._cost[0] is not cost:
            self._cost = (cost, _dumps(float(cost)))
        work = ledger.work
        return _LINE % (
            read.seq,
            kind_json,
            head,
            self._replans[1],
            self._attempts[1],
            self._work_json_kept if work is self._work else self._work_json(work),
            self._runtime[1],
            self._cost[1],
        )

    def lines(
        self,
        events: Iterable[tuple[int, Event]],
        *,
        now: datetime | None = None,
        source: str | None = None,
    ) -> Iterator[bytes]:
        """The lines of ``replay --json``: ``line`` over every step of ``replay``.

        Raises:
            HistoryError: at the first line that breaks the history format (the lines
                of the steps before it come first).
        """
        line = self.line
        for step in replay(events, now=now, source=source):
            yield line(step)

    def _work_json(self, work: Mapping[str, WorkLedger]) -> bytes:
        """The members of the ``work`` object (without its braces)."""
        if not isinstance(work, WorkLedgers):
            return b",".join([_row_json(w, row) for w, row in work.items()])
        kept = self._work
        if work is kept:
            return self._work_json_kept
        pieces = self._pieces
        if kept is not None and work.origin is kept.origin and work.serial == kept.serial + 1:
            ids = work.ids_list()
            for position in work.changed:
                piece = _row_json(ids[position], work.row(position))
                if position < len(pieces):
                    pieces[position] = piece
                else:  # a new item: new positions come last, in order
                    pieces.append(piece)
        else:
            pieces[:] = [_row_json(w, row) for w, row in work.items()]
        self._work, self._work_json_kept = work, b",".join(pieces)
        return self._work_json_kept


def _row_json(work_id: str, row: WorkLedger) -> bytes:
    return _dumps(work_id) + b":" + _dumps(work_ledger_record(row))
