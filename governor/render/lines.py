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
    * ``StepLines.lines`` is ``replay`` and ``line`` in one loop, for ``replay --json``
      (docs/decisions/0012-lean-replay-json-steps.md): where the short path of rules 8
      and 9 decides (``Decider.head``) it renders the step from the head, the rows the
      decider decided again (``Decider.relaid``) and the goal's ledgers, without the
      ``Decision``, ``Ledger`` and ``WorkLedgers`` of the step; elsewhere it takes
      ``Decider.decide`` and ``line``. Its lines are the lines of ``line`` over ``replay``, byte
      for byte (``tests/test_lean_steps.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from operator import itemgetter
from typing import Final

import orjson

from governor.analysis.replay import ReplayStep
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.history import HistoryChecker, empty_history
from governor.core.ledger import (
    NO_LEDGER,
    AttemptLedger,
    ReplanLedger,
    WorkLedger,
    WorkLedgers,
)
from governor.core.rules.decider import Decider
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

    def lines(  # noqa: PLR0912, PLR0915 - one loop for every step (a call per step costs)
        self,
        events: Iterable[tuple[int, Event]],
        *,
        now: datetime | None = None,
        source: str | None = None,
    ) -> Iterator[bytes]:
        """The lines of ``map(self.line, replay(events, now=now, source=source))``, made
        without the step's API values where the short path of rules 8 and 9 decides.

        Raises:
            HistoryError: at the first line that breaks the history format.
        """
        checker = HistoryChecker(source)
        decider = Decider(checker.view)  # the checker folds; the decider decides what changed
        check, heads, types = checker.check, self._heads, self._types
        pieces, keys = self._pieces, self._keys
        # what the lines share, kept in locals here (``line`` keeps it on ``self``)
        replans, replans_json = self._replans
        attempts, attempts_json = self._attempts
        runtime, runtime_json = self._runtime
        cost, cost_json = self._cost
        work_json = self._work_json_kept
        count = 0
        try:
            for number, event in events:
                count += 1
                view = check(event, number)
                when = now or event.at
                head = decider.head(when)
                if head is None:
                    self._replans, self._attempts = (
                        (replans, replans_json),
                        (attempts, attempts_json),
                    )
                    self._runtime, self._cost = (runtime, runtime_json), (cost, cost_json)
                    self._work_json_kept = work_json
                    yield self.line(ReplayStep(number, event, decider.decide(when)))
                    replans, replans_json = self._replans
                    attempts, attempts_json = self._attempts
                    runtime, runtime_json = self._runtime
                    cost, cost_json = self._cost
                    work_json = self._work_json_kept
                    continue
                rows = decider.relaid()
                if rows:
                    for position, work_id, row in rows:
                        key = keys.get(work_id)
                        if key is None:
                            key = keys[work_id] = _dumps(work_id) + b":"
                        piece = key + _dumps(work_ledger_record(row))
                        if position < len(pieces):
                            pieces[position] = piece
                        else:  # a new item: new positions come last, in order
                            pieces.append(piece)
                    work_json = b",".join(pieces)
                head_json = heads.get(head)
                if head_json is None:
                    if len(heads) >= _HEADS_KEPT:
                        heads.clear()
                    status, action, reason, _, _, exhausted = head
                    shown = Decision(status, action, reason, "", NO_LEDGER, exhausted=exhausted)
                    head_json = heads[head] = _dumps(decision_head(shown))[1:-1]
                kind = event.type
                kind_json = types.get(kind)
                if kind_json is None:
                    kind_json = types[kind] = _dumps(kind)
                # (one name read, then compared: mypyc reads ``x is not (x := f())`` after the
                # assignment, so that form would never see a change once compiled)
                replans_now = decider.replans()
                if replans_now is not replans:
                    replans, replans_json = replans_now, _dumps(replans_record(replans_now))
                attempts_now = decider.attempts()
                if attempts_now is not attempts:
                    attempts, attempts_json = attempts_now, _dumps(attempts_record(attempts_now))
                runtime_now = view.runtime_s
                if runtime_now is not runtime:
                    runtime, runtime_json = runtime_now, _dumps(float(runtime_now))
                cost_now = view.cost_usd
                if cost_now is not cost:
                    cost, cost_json = cost_now, _dumps(float(cost_now))
                yield _LINE % (
                    event.seq,
                    kind_json,
                    head_json,
                    replans_json,
                    attempts_json,
                    work_json,
                    runtime_json,
                    cost_json,
                )
        finally:  # (a step of ``line`` after these starts from them)
            self._replans, self._attempts = (replans, replans_json), (attempts, attempts_json)
            self._runtime, self._cost = (runtime, runtime_json), (cost, cost_json)
            self._work_json_kept = work_json
        if count == 0:
            raise empty_history(source)

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
