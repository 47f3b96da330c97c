"""Every table besides ``events``, as ``governor.store.columns`` reads it: columns, kinds,
keys, remedies, and the values their rows make.

Rules (docs/store.md "Damaged rows"):
    * One ``Table`` per table, its columns in the order every backend selects them; the
      bounds are those the code that writes them keeps (``governor.core.limits``), so a
      row governor wrote always reads back, and a row that does not read back was changed
      behind the store's back.
    * What mends a damaged row is said with it: a summary is rebuilt from its events, a
      lease is released, and what is only operational — a health record, a registry row,
      an agent row — is dropped (the next call, heartbeat or spawn writes it again).
      ``governor store check --repair`` does each (``governor.store.checks``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, get_args

from governor.core.decision import Action, BlockedOn, Status
from governor.core.limits import MAX_FACTOR, MAX_INT64, MAX_WAIT_S
from governor.core.summary import NEEDS_PERSON, GoalSummary, Usage
from governor.registry import AgentRecord, ServiceError, WorkerBeat
from governor.store.base import Lease
from governor.store.columns import (
    MAYBE_TIME,
    TIME,
    Table,
    Times,
    flag,
    maybe_text,
    number,
    one_of,
    text,
    whole,
)
from governor.store.stored import LeaseRecord, StreamHead

if TYPE_CHECKING:  # imported where used: reading summaries imports no model (start-up)
    from governor.core.upstream import UpstreamHealth

REPAIR: Final = "`governor store check --repair`"
COUNT: Final = whole(0, MAX_INT64 - 1)
"""A count that is still incremented (a token, a probe count): its successor fits too."""
MAYBE_COUNT: Final = whole(0, MAX_INT64 - 1, null=True)
WAIT: Final = number(0, MAX_WAIT_S)
PID: Final = whole(2, 2**31 - 1)
"""A process id: never 0 or 1, whose process groups (``killpg``) are not an agent's."""

SUMMARIES: Final = Table(
    "goals",
    (
        ("goal_id", text), ("title", text), ("seq", whole(1, MAX_INT64)),
        ("status", one_of(get_args(Status))), ("next_action", one_of(get_args(Action))),
        ("blocked_on", one_of(get_args(BlockedOn), null=True)), ("not_before", MAYBE_TIME),
        ("updated_at", TIME), ("rule", maybe_text), ("reason", maybe_text),
        ("replans_used", MAYBE_COUNT), ("replans_charged", MAYBE_COUNT),
        ("replans_limit", MAYBE_COUNT), ("attempts_used", MAYBE_COUNT),
        ("attempts_charged", MAYBE_COUNT), ("attempts_limit", MAYBE_COUNT),
        ("upstream", maybe_text),
    ),
    (0,),
    f"{REPAIR} rebuilds it from the goal's events",
)  # fmt: skip
"""A goal's summary row (``GoalSummary``), as ``goals()`` and ``due()`` read it."""

DUE: Final = Table("goals", (("goal_id", text), ("due", TIME)), (0,), SUMMARIES.remedy)
"""A waiting goal's due time (``soonest_wakeup``)."""
STATUS_COUNT: Final = Table(
    "goals", (("goal_id", text), ("status", SUMMARIES.columns[3][1])), (0,), SUMMARIES.remedy
)
PARKED: Final = Table("goals", (("goal_id", text), ("upstream", text)), (0,), SUMMARIES.remedy)

SUMMARY_EXTRA: Final = Table(
    "goals",
    (("goal_id", text), ("due", TIME), ("chain", whole(0, 2**32 - 1, null=True))),
    (0,),
    SUMMARIES.remedy,
)
"""The summary row's columns a list does not read: the due time and the chain head."""

HEADS: Final = Table(
    "goals",
    (("goal_id", text), ("seq", whole(1, MAX_INT64, null=True)),
     ("chain", whole(0, 2**32 - 1, null=True))),
    (0,),
    SUMMARIES.remedy,
)  # fmt: skip
LAST_SEQ: Final = Table(
    "events",
    (("goal_id", text), ("seq", whole(1, MAX_INT64, null=True))),
    (0,),
    "restore the store from a backup or an export",
)

LEASES: Final = Table(
    "leases",
    (("goal_id", text), ("token", whole(1, MAX_INT64 - 1)), ("holder", maybe_text),
     ("expires_at", MAYBE_TIME)),
    (0,),
    f"{REPAIR} releases the lease (a runner that holds it is refused at its next write)",
)  # fmt: skip

UPSTREAMS: Final = Table(
    "upstreams",
    (
        ("name", text), ("harness", text), ("endpoint", text), ("model_family", text),
        ("healthy", flag), ("updated_at", TIME), ("failing_since", MAYBE_TIME),
        ("last_status", whole(0, MAX_INT64, null=True)), ("retry_after_s", number(0, MAX_WAIT_S, null=True)),
        ("next_probe_at", MAYBE_TIME), ("probes", COUNT), ("refusals", COUNT),
        ("probing_until", MAYBE_TIME), ("prober", maybe_text),
        ("backoff_initial_s", WAIT), ("backoff_factor", number(1, MAX_FACTOR)),
        ("backoff_max_s", WAIT), ("outage_started", MAYBE_TIME), ("recovered_at", MAYBE_TIME),
        ("recovered_by", one_of(("probe", "call", "reset"), null=True)), ("answered", flag),
    ),
    (0,),
    f"{REPAIR} drops the record (the next agent call records the upstream's health again)",
)  # fmt: skip

WORKERS: Final = Table(
    "workers",
    (("worker_id", text), ("host", text), ("pid", whole(1, MAX_INT64)), ("started_at", TIME),
     ("heartbeat_at", TIME), ("goal_id", maybe_text), ("step_started_at", MAYBE_TIME)),
    (0,),
    f"{REPAIR} drops the row (a live worker writes it again at its next heartbeat)",
)  # fmt: skip

SERVICE_ERRORS: Final = Table(
    "service_errors",
    (("id", whole(1, MAX_INT64)), ("at", TIME), ("worker_id", text),
     ("goal_id", maybe_text), ("error", text)),
    (0,),
    f"{REPAIR} drops the row",
)  # fmt: skip

AGENTS: Final = Table(
    "agents",
    (("goal_id", text), ("host", text), ("boot_id", text), ("pid", PID),
     ("start_ticks", whole(0, MAX_INT64)), ("run", text), ("holder", text),
     ("started_at", TIME), ("last_line", maybe_text)),
    (0, 1, 2, 3, 4),
    f"{REPAIR} drops the row (if that agent still runs, end it by hand)",
)  # fmt: skip

CHECKED: Final = (SUMMARIES, LEASES, UPSTREAMS, WORKERS, SERVICE_ERRORS, AGENTS)
"""The tables ``governor store check`` reads row by row (summaries are also compared with
their events)."""


def summary_of(row: Sequence[object], times: Times) -> GoalSummary:
    """A goal's summary row as its value; a stored ``attention`` after the columns of
    ``SUMMARIES`` (a listing reads it) says whether the goal waits on a person."""
    width = len(SUMMARIES.columns)
    (goal_id, title, seq, status, action, blocked_on, not_before, updated_at, rule, reason,
     *usage, upstream) = SUMMARIES.decode(row[:width], times)  # fmt: skip
    rank = row[width] if len(row) > width else None
    return GoalSummary(
        goal_id, title, seq, status, action, blocked_on, not_before, updated_at, rule, reason,
        _usage(usage[0:3]), _usage(usage[3:6]), upstream,
        None if not isinstance(rank, int) else rank == NEEDS_PERSON,
    )  # fmt: skip


def _usage(columns: Sequence[object]) -> Usage | None:
    """The usage three stored columns hold; None when the row predates them."""
    used, charged, limit = columns
    if not isinstance(used, int) or not isinstance(charged, int) or not isinstance(limit, int):
        return None
    return Usage(used, charged, limit)


def status_count(row: Sequence[Any]) -> tuple[str, int]:
    """``(status, goals with it, one of them)`` as ``(status, count)``."""
    status, count, goal_id = row
    (_, checked) = STATUS_COUNT.decode((goal_id, status), _NO_TIMES)
    return checked, int(count)


def parked_count(row: Sequence[Any]) -> tuple[str, int]:
    """``(upstream, goals parked on it, one of them)`` as ``(upstream, count)``."""
    upstream, count, goal_id = row
    (_, checked) = PARKED.decode((goal_id, upstream), _NO_TIMES)
    return checked, int(count)


def wakeup_of(row: Sequence[object], times: Times) -> datetime:
    """The due time of ``(goal_id, due)``: the soonest wake-up."""
    when: datetime = DUE.decode(row, times)[1]
    return when


def head_of(goal_id: str, last: object, recorded: object, chain: object) -> StreamHead:
    """The stream's head: its highest stored seq, and the seq and chain its summary
    recorded, read together."""
    (_, found) = LAST_SEQ.decode((goal_id, last), _NO_TIMES)
    (_, seq, head) = HEADS.decode((goal_id, recorded, chain), _NO_TIMES)
    return StreamHead(found or 0, seq, head)


def lease_of(goal_id: str, row: Sequence[object], times: Times) -> LeaseRecord:
    """A goal's lease row (token, holder, expiry) as its record."""
    (_, token, holder, expires_at) = LEASES.decode((goal_id, *row), times)
    if holder is None or expires_at is None:
        return LeaseRecord(token, None)
    return LeaseRecord(token, Lease(goal_id, holder, token, expires_at))


def upstream_of(row: Sequence[object], times: Times) -> UpstreamHealth:
    """An upstream's health row as its record."""
    from governor.core.policy import UpstreamBackoff  # noqa: PLC0415 - start-up (see the imports)
    from governor.core.upstream import UpstreamHealth  # noqa: PLC0415 - start-up

    (name, harness, endpoint, family, healthy, updated, since, status, retry, next_probe,
     probes, refusals, probing, prober, initial, factor, max_s, started, back, by, answered) = (
        UPSTREAMS.decode(row, times))  # fmt: skip
    if max_s < initial:
        raise UPSTREAMS.damaged(
            row, "backoff_max_s", f"holds {max_s}, below backoff_initial_s {initial}"
        )
    backoff = UpstreamBackoff.model_construct(initial_s=initial, factor=factor, max_s=max_s)
    return UpstreamHealth(
        upstream=name, harness=harness, endpoint=endpoint, model_family=family,
        healthy=healthy, updated_at=updated, failing_since=since, last_status=status,
        retry_after_s=retry, next_probe_at=next_probe, probes=probes, refusals=refusals,
        probing_until=probing, prober=prober, backoff=backoff, outage_started=started,
        recovered_at=back, recovered_by=by, answered=answered,
    )  # fmt: skip


def worker_of(row: Sequence[object], times: Times) -> WorkerBeat:
    """A registry row of a service worker."""
    return WorkerBeat(*WORKERS.decode(row, times))


def error_of(row: Sequence[object], times: Times) -> ServiceError:
    """A row of the service's recent errors (its id first)."""
    return ServiceError(*SERVICE_ERRORS.decode(row, times)[1:])


def agent_of(row: Sequence[object], times: Times) -> AgentRecord:
    """A row of an agent process a runner has running."""
    return AgentRecord(*AGENTS.decode(row, times))


def _no_time(value: object) -> datetime:
    raise AssertionError("a head has no time column")


_NO_TIMES: Final = Times("", _no_time)
