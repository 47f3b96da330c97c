"""The budget ledger every decision carries: each budget's counter, limit and remainder.

Rules (SPEC §6; the shape ``replay --json`` pins):
    * Counts come from ``governor.core.budgets``, the one definition of charged and
      remaining; this module only lays them out.
    * The ledger lists every work item ever created in the goal, in creation order.
    * Ledgers are values (cheap immutable records). Successive decisions share what did not change: the same
      ``ReplanLedger`` and ``AttemptLedger`` objects, and the chunks of ``WorkLedgers``
      that hold no changed item, so a decision costs what changed, not the goal's size.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import islice
from typing import Final, NamedTuple

from governor.core.headroom import item_remaining, replans_remaining, total_attempts_remaining
from governor.core.view import GoalView, WorkState


class ReplanLedger(NamedTuple):
    used: int
    charged: int
    uncharged: int
    consecutive_uncharged: int
    limit: int
    remaining: int


class AttemptLedger(NamedTuple):
    used: int
    charged: int
    limit: int
    remaining: int


class WorkLedger(NamedTuple):
    status: str
    next_action: str
    attempts_used: int
    charged_attempts: int
    consecutive_uncharged: int
    continuations: int
    limit: int
    remaining: int


CHUNK: Final = 32
"""Work items per chunk of ``WorkLedgers``."""


class WorkLedgers(Mapping[str, WorkLedger]):
    """The work items' ledgers, in creation order: an immutable mapping.

    The ledgers sit in chunks of ``CHUNK`` items (tuples). Successive decisions share the
    chunks in which no item changed. The ids and their positions are shared append-only
    lists: a mapping sees the first ``len`` of them.

    Successive snapshots of one memo (``governor.core.rules.memo``) share ``origin`` and count
    ``serial`` up by one; ``changed`` lists the positions whose ledgers differ from the
    snapshot before (new items included), so a renderer that kept what it made of that
    snapshot redoes only those rows. A snapshot in which nothing changed is the previous
    object itself.
    """

    __slots__ = ("_chunks", "_ids", "_index", "_size", "changed", "origin", "serial")

    def __init__(  # noqa: PLR0917 - one per slot; made by the memo and ``laid_out`` only
        self,
        ids: list[str],
        index: dict[str, int],
        chunks: tuple[tuple[WorkLedger, ...], ...],
        size: int,
        origin: object = None,
        serial: int = 0,
        changed: tuple[int, ...] = (),
    ) -> None:
        self._ids, self._index, self._chunks, self._size = ids, index, chunks, size
        self.origin, self.serial, self.changed = origin, serial, changed

    def ids_list(self) -> list[str]:
        """Every work id in creation order: a shared list, longer than ``len`` when later
        snapshots hold more items (read only the first ``len``; never change it)."""
        return self._ids

    def row(self, position: int) -> WorkLedger:
        """The ledger of the item at ``position`` (creation order)."""
        return self._chunks[position // CHUNK][position % CHUNK]

    @property
    def chunks(self) -> tuple[tuple[WorkLedger, ...], ...]:
        """The ledgers in chunks of ``CHUNK``, in creation order."""
        return self._chunks

    def ids(self, chunk: int) -> list[str]:
        """The work ids of chunk number ``chunk``."""
        return self._ids[chunk * CHUNK : chunk * CHUNK + len(self._chunks[chunk])]

    def __getitem__(self, work_id: str) -> WorkLedger:
        position = self._index[work_id]
        if position >= self._size:
            raise KeyError(work_id)
        return self._chunks[position // CHUNK][position % CHUNK]

    def __iter__(self) -> Iterator[str]:
        return islice(self._ids, self._size)

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"WorkLedgers({dict(self.items())!r})"


class Ledger(NamedTuple):
    """The budget ledger carried by every decision (SPEC §6, the shape of ``replay --json``)."""

    replans: ReplanLedger
    attempts: AttemptLedger
    work: Mapping[str, WorkLedger]
    runtime_s: float
    cost_usd: float


def replan_ledger(view: GoalView) -> ReplanLedger:
    return ReplanLedger(
        used=view.plans_used,
        charged=view.charged_replans,
        uncharged=view.plans_uncharged,
        consecutive_uncharged=view.consecutive_uncharged_plans,
        limit=view.policy.max_replans,
        remaining=replans_remaining(view),
    )


def attempt_ledger(view: GoalView) -> AttemptLedger:
    return AttemptLedger(
        used=view.attempts_used,
        charged=view.charged_attempts,
        limit=view.policy.max_total_attempts,
        remaining=total_attempts_remaining(view),
    )


def work_ledger(view: GoalView, item: WorkState, status: str, next_action: str) -> WorkLedger:
    return WorkLedger(
        status=status,
        next_action=next_action,
        attempts_used=item.attempts_used,
        charged_attempts=item.charged_attempts,
        consecutive_uncharged=item.consecutive_uncharged,
        continuations=item.continuations,
        limit=item.max_attempts,
        remaining=item_remaining(view, item),
    )


def laid_out(rows: Mapping[str, WorkLedger]) -> WorkLedgers:
    """Every item's row laid out from scratch, in creation order: a snapshot of its own
    (``decide``'s; the decider's memo lays out only the rows that changed)."""
    ids, values = list(rows), list(rows.values())
    chunks = tuple(tuple(values[start : start + CHUNK]) for start in range(0, len(values), CHUNK))
    return WorkLedgers(ids, {work_id: k for k, work_id in enumerate(ids)}, chunks, len(ids))


NO_LEDGER = Ledger(
    replans=ReplanLedger(
        used=0, charged=0, uncharged=0, consecutive_uncharged=0, limit=0, remaining=0
    ),
    attempts=AttemptLedger(used=0, charged=0, limit=0, remaining=0),
    work={},
    runtime_s=0.0,
    cost_usd=0.0,
)
"""The ledger of a decision taken with ``with_ledger=False``: not computed (all zeros)."""
