"""The lines of ``replay --json`` as bytes: the shape of ``records.step_record``, made in
time proportional to what changed since the previous step.

Rules:
    * A line is exactly ``orjson.dumps(records.step_record(step)) + b"\\n"`` (a test holds
      it to that); the shapes stay defined once, in ``governor.render.records``.
    * What a step shares with the one before is not rendered again: the rendering of each
      work item's ledger row is kept while the row is the same object, and that of each
      chunk of rows (``governor.core.ledger.WorkLedgers``) while the chunk is. The goal's
      replan and attempt ledgers are kept while they are equal.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from governor.analysis.replay import ReplayStep
from governor.core.ledger import AttemptLedger, ReplanLedger, WorkLedger, WorkLedgers
from governor.render.records import (
    attempts_record,
    decision_head,
    replans_record,
    work_ledger_record,
)

_dumps = orjson.dumps


class StepLines:
    """Renders the steps of one replay, one after another (it keeps what it rendered)."""

    __slots__ = ("_attempts", "_chunks", "_replans", "_rows")

    def __init__(self) -> None:
        self._rows: dict[str, tuple[WorkLedger, bytes]] = {}
        self._chunks: list[tuple[tuple[WorkLedger, ...], bytes]] = []
        self._replans: tuple[ReplanLedger | None, bytes] = (None, b"")
        self._attempts: tuple[AttemptLedger | None, bytes] = (None, b"")

    def line(self, step: ReplayStep) -> bytes:
        """The step's line of ``replay --json``, its newline included."""
        decision = step.decision
        ledger = decision.ledger
        head = _dumps({"seq": step.seq, "type": step.type, **decision_head(decision)})
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
            return b",".join(self._row_json(w, row) for w, row in work.items())
        kept, pieces = self._chunks, []
        for c, chunk in enumerate(work.chunks):
            if c < len(kept) and kept[c][0] is chunk:
                pieces.append(kept[c][1])
                continue
            piece = b",".join(
                self._row_json(w, row) for w, row in zip(work.ids(c), chunk, strict=True)
            )
            if c < len(kept):
                kept[c] = (chunk, piece)
            else:
                kept.append((chunk, piece))
            pieces.append(piece)
        return b",".join(pieces)

    def _row_json(self, work_id: str, row: WorkLedger) -> bytes:
        kept = self._rows.get(work_id)
        if kept is not None and kept[0] is row:
            return kept[1]
        piece = _dumps(work_id) + b":" + _dumps(work_ledger_record(row))
        self._rows[work_id] = (row, piece)
        return piece
