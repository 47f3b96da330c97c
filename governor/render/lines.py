"""The lines of ``replay --json`` as bytes: the shape of ``records.step_record``, made in
time proportional to what changed since the previous step.

Rules:
    * A line is exactly ``orjson.dumps(records.step_record(step)) + b"\\n"`` (a test holds
      it to that); the shapes stay defined once, in ``governor.render.records``.
    * What a step shares with the one before is not rendered again: the ``work`` members
      of a ledger snapshot that follows the one rendered last (``WorkLedgers.serial``) are
      the kept ones with the rows it names as ``changed`` rendered again; the same
      snapshot is the same bytes. The goal's replan and attempt ledgers are kept while
      they are equal.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from governor.analysis.replay import ReplayStep
from governor.core.ledger import AttemptLedger, ReplanLedger, WorkLedger, WorkLedgers
from governor.render.records import (
    attempts_record,
    replans_record,
    step_head,
    work_ledger_record,
)

_dumps = orjson.dumps


class StepLines:
    """Renders the steps of one replay, one after another (it keeps what it rendered)."""

    __slots__ = ("_attempts", "_pieces", "_replans", "_work", "_work_json_kept")

    def __init__(self) -> None:
        self._work: WorkLedgers | None = None
        """The work ledgers rendered last; ``_pieces`` holds their members, one per row."""
        self._pieces: list[bytes] = []
        self._work_json_kept = b""
        self._replans: tuple[ReplanLedger | None, bytes] = (None, b"")
        self._attempts: tuple[AttemptLedger | None, bytes] = (None, b"")

    def line(self, step: ReplayStep) -> bytes:
        """The step's line of ``replay --json``, its newline included."""
        read, decision = step.read, step.decision  # (``step.seq`` is a property)
        ledger = decision.ledger
        head = _dumps(step_head(read.seq, read.type, decision))
        return b"".join(
            (
                head[:-1],
                b',"ledger":{"replans":',
                self._replans_json(ledger.replans),
                b',"attempts":',
                self._attempts_json(ledger.attempts),
                b',"work":{',
                self._work_json(ledger.work),
                b'},"runtime_s":',
                _dumps(float(ledger.runtime_s)),
                b',"cost_usd":',
                _dumps(float(ledger.cost_usd)),
                b"}}\n",
            )
        )

    def _replans_json(self, replans: ReplanLedger) -> bytes:
        if self._replans[0] != replans:
            self._replans = (replans, _dumps(replans_record(replans)))
        return self._replans[1]

    def _attempts_json(self, attempts: AttemptLedger) -> bytes:
        if self._attempts[0] != attempts:
            self._attempts = (attempts, _dumps(attempts_record(attempts)))
        return self._attempts[1]

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
