"""What the pages show, read from the store: small functions, each one read and one fold.

Rules:
    * Read only. Every function takes an open store and returns values; nothing here
      appends, leases or migrates (the server opens the store read-only besides).
    * The goals list reads the store's summaries, one page at a time, and the counts per
      status: never a fold per goal, so 10,000 goals cost what 50 do.
    * A goal page loads that goal's events once; the view, the decision now, the
      timeline and ``explain``'s advice are all computed from that one list.
    * The time is an argument (``now``), as in the core.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal, get_args

from governor.analysis.explain import Explanation, explain
from governor.analysis.runnable import command_line, naming_store
from governor.analysis.unblock import Unblock, unblocking
from governor.core.decision import Decision, Status
from governor.core.events import Event
from governor.core.fold import project
from governor.core.outage_text import shown_name
from governor.core.question import question
from governor.core.rules.decide import decide
from governor.core.summary import GoalSummary
from governor.core.text import count, stamp
from governor.core.upstream import UpstreamHealth
from governor.core.view import GoalView
from governor.errors import InputError
from governor.store.base import EventStore
from governor.ui.timeline import Entry, timeline

GOAL_STATUSES: Final = tuple(s for s in get_args(Status) if s != "in_review")
"""The statuses a goal can have (``in_review`` is a work item's, never a goal's)."""


SEARCH_LIMIT: Final = 200
"""The longest search text (a goal id is at most 100 characters, a title 200)."""


@dataclass(frozen=True, slots=True)
class GoalList:
    """One page of the goals list, what needs attention first."""

    rows: list[GoalSummary]
    counts: dict[str, int]
    """Goals per status, across the whole store."""
    status: str | None
    """The status filter, None for every goal."""
    page: int
    """1-based, within ``1..pages``."""
    pages: int
    total: int
    """Goals that pass the filters."""
    per_page: int
    needs_person: bool = False
    """Only the goals that wait on a person."""
    search: str | None = None
    """Text the goals' ids or titles hold."""
    waiting_on_people: int = 0
    """Goals that wait on a person, across the whole store."""


def goal_list(
    store: EventStore,
    *,
    status: str | None = None,
    page: int = 1,
    per_page: int = 50,
    needs_person: bool = False,
    search: str | None = None,
) -> GoalList:
    """A page of goal summaries, those that need a person first (``GoalSummary.attention``),
    then the most recently changed; filtered by status, by needing a person, by a search.

    A page past the end shows the last one.

    Raises:
        InputError: for a status no goal can have, or a search text too long.
    """
    if status is not None and status not in GOAL_STATUSES:
        raise InputError(f"unknown status {status!r}; one of {', '.join(GOAL_STATUSES)}")
    search = search.strip() if search and search.strip() else None
    if search is not None and len(search) > SEARCH_LIMIT:
        raise InputError(f"a search is at most {SEARCH_LIMIT} characters, not {len(search)}")
    statuses = None if status is None else (status,)
    counts = store.goal_counts()
    people = store.count_goals(needs_person=True)
    if needs_person or search:
        total = store.count_goals(statuses=statuses, needs_person=needs_person, search=search)
    else:
        total = counts.get(status, 0) if status else sum(counts.values())
    pages = max(1, math.ceil(total / per_page))
    page = min(max(page, 1), pages)
    rows = store.goals(
        statuses=statuses,
        needs_person=needs_person,
        search=search,
        order="attention",
        offset=(page - 1) * per_page,
        limit=per_page,
    )
    return GoalList(
        rows, counts, status, page, pages, total, per_page, needs_person, search, people
    )


@dataclass(frozen=True, slots=True)
class RunningCall:
    """An agent call in flight, as any process that reads the store sees it."""

    what: str
    """``plan p2`` or ``p1-a attempt 2``."""
    started_at: datetime
    """When the run started (or was last continued)."""
    holder: str | None
    """Who drives it: the goal's lease holder (``host:pid``), None when no lease is held."""
    heartbeat_at: datetime | None
    """The holder's last sign of life: its worker's registry heartbeat (``serve``), else
    the last renewal of the lease (``expires_at`` minus its time to live is not stored:
    the expiry stands for it)."""
    lease_expires_at: datetime | None
    last_line: str | None = None
    """The latest telling line of the call's agent, as its runner wrote it into the
    agent's row at its last heartbeat (redacted, bounded): agent text, shown quoted."""


def running_calls(store: EventStore, view: GoalView) -> tuple[RunningCall, ...]:
    """The goal's calls in flight: its plan requested and not answered, its items
    running; each with who drives it and when that driver was last heard of."""
    started: list[tuple[str, datetime, str | None]] = []
    plan = view.latest_plan
    if plan is not None and plan.status == "requested" and plan.run_started_at is not None:
        started.append((f"plan {plan.plan_id}", plan.run_started_at, plan.plan_id))
    started += [
        (f"{w} attempt {item.attempt}", item.run_started_at, item.run_id)
        for w, item in view.work.items()
        if item.running and item.run_started_at is not None
    ]
    if not started:
        return ()
    lease = store.current_lease(view.goal_id)
    holder = lease.holder if lease is not None else None
    beats = {w.worker_id: w.heartbeat_at for w in store.workers()} if holder else {}
    expires = lease.expires_at if lease is not None else None
    lines = {a.run: a.last_line for a in store.agents(view.goal_id) if a.last_line}
    return tuple(
        RunningCall(what, at, holder, beats.get(holder or ""), expires, lines.get(run or ""))
        for what, at, run in started
    )


@dataclass(frozen=True, slots=True)
class Pending:
    """A question that waits for a person, and the commands that answer it."""

    asker: str
    """``the planner`` or ``p1-api's worker``; for a review, what is to be reviewed."""
    question: str
    commands: tuple[tuple[str, str], ...]
    """(what it does, the exact command line)."""
    kind: Literal["question", "plan", "work"] = "question"
    """What answers it: an answer (``work retry`` / ``resume``), a plan's review, or a
    review of passed work."""
    plan_id: str | None = None
    """The plan to review."""
    work_ids: tuple[str, ...] = ()
    """The items to review."""


@dataclass(frozen=True, slots=True)
class GoalPage:
    """Everything the page of one goal shows."""

    view: GoalView
    decision: Decision
    """The decision at the time the page was made."""
    entries: list[Entry]
    explanation: Explanation | None
    """``explain``'s, or None while it is still being worked out."""
    pending: Pending | None
    events: int
    advice: str | None = None
    """``explain``'s advice, its commands naming the store (``naming_store``); None while
    it is worked out."""
    blockers: tuple[Unblock, ...] = ()
    """Every blocker of the goal, what unblocks most first (``governor.analysis.unblock``)."""
    running: tuple[RunningCall, ...] = ()
    """The agent calls in flight (their time is not in the ledger until they end)."""


def pending(
    goal_id: str, view: GoalView, decision: Decision, store_arg: str | None = None
) -> Pending | None:
    """The question a stopped goal asks a person, if any, with the commands that answer it.

    ``store_arg`` is the ``--store`` value the commands need (None for the default store).
    """

    def cmd(*words: str) -> str:
        return command_line(store_arg, *words)

    asked = question(view, decision)
    if asked is not None and asked.work_id is not None:
        answer = cmd("work", "retry", goal_id, asked.work_id, "--reason", "YOUR ANSWER")
        return Pending(
            f"{asked.work_id}'s worker", asked.text, (("answer and retry the item", answer),)
        )
    if asked is not None:
        answer = cmd("resume", goal_id, "--reason", "YOUR ANSWER")
        return Pending("the planner", asked.text, (("answer and plan again", answer),))
    if decision.next_action == "review_plan" and decision.plan_id:
        pid = decision.plan_id
        proposal = view.plans[pid].proposal
        items = ", ".join(f"{pid}-{w.key}" for w in proposal.work) if proposal else ""
        return Pending(
            f"plan {pid}",
            f"plan {pid} proposes {items or 'to complete the goal'}: approve or reject it",
            (
                ("approve", cmd("plan", "approve", goal_id, pid)),
                ("reject", cmd("plan", "reject", goal_id, pid, "--reason", "WHY")),
            ),
            kind="plan",
            plan_id=pid,
        )
    if decision.next_action == "review_work":
        commands = tuple(
            (f"{verb} {w}", cmd("work", verb, goal_id, w, *extra))
            for w in decision.work_ids
            for verb, extra in (("accept", ()), ("retry", ("--reason", "WHAT TO CHANGE")))
        )
        what = ", ".join(decision.work_ids)
        return Pending(
            what,
            f"{what} passed: accept, or retry with what to change",
            commands,
            kind="work",
            work_ids=tuple(decision.work_ids),
        )
    return None


class Explanations:
    """``explain`` of each goal's history, kept per (goal, last seq) for the latest goals.

    A history never changes below its last seq, so neither does its explanation. The
    counterfactual search behind a stopped goal's advice costs far more than the rest of
    its page (0.4 s for 500 events, see docs/performance.md), and an open page asks again
    every few seconds: each is computed once, in a worker thread, and a page waits for
    it at most ``wait_s`` — past that it is shown without the advice, which the next
    refresh brings. Thread-safe.
    """

    def __init__(self, size: int = 64, *, wait_s: float | None = None) -> None:
        self.size, self.wait_s = size, wait_s
        self._kept: OrderedDict[tuple[str, int], Future[Explanation]] = OrderedDict()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="explain")

    def of(self, events: Sequence[Event]) -> Explanation | None:
        """The explanation of a non-empty history; None while it is still being worked out."""
        key = (events[0].goal_id, events[-1].seq)
        with self._lock:
            future = self._kept.get(key)
            if future is None:
                future = self._pool.submit(explain, list(events))
                self._kept[key] = future
            self._kept.move_to_end(key)
            while len(self._kept) > max(self.size, 1):
                self._kept.popitem(last=False)
        try:
            return future.result(timeout=self.wait_s)
        except TimeoutError:
            return None

    def close(self) -> None:
        """Stop the worker thread (an explanation under way is finished first)."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def goal_page(
    store: EventStore,
    goal_id: str,
    now: datetime,
    *,
    store_arg: str | None = None,
    explanations: Explanations | None = None,
) -> GoalPage:
    """The page of one goal: its view, its decision at ``now``, timeline and advice.

    Raises:
        NotFoundError: when the store holds no such goal.
    """
    events: list[Event] = list(store.load(goal_id))
    view = project(events)
    decision = decide(view, now)
    explained = explain(events) if explanations is None else explanations.of(events)
    return GoalPage(
        view=view,
        decision=decision,
        entries=timeline(events),
        explanation=explained,
        pending=pending(goal_id, view, decision, store_arg),
        events=len(events),
        advice=None if explained is None else naming_store(explained.advice, store_arg),
        blockers=unblocking(view, decision, now, store_arg),
        running=running_calls(store, view),
    )


# --- upstreams: each vendor's shared health (SPEC §11.10, §12.9) ---------------------------

VENDOR_HARNESSES: Final = frozenset({"codex", "claude", "gemini"})
"""Harnesses whose upstream is a vendor's endpoint; the others run a local agent."""


@dataclass(frozen=True, slots=True)
class UpstreamRow:
    """One upstream as the page shows it."""

    name: str
    healthy: bool
    since: datetime | None
    """When its current outage began (None while healthy)."""
    next_probe: datetime | None
    detail: str | None
    """The last status it refused with, or how its last outage ended."""
    parked: int
    """Goals waiting parked on it."""
    vendor: bool = True
    """A vendor's endpoint (the page lists these); False for a local agent's record."""

    @classmethod
    def of(cls, record: UpstreamHealth) -> UpstreamRow:
        """The row of one health record (``governor.core.upstream.UpstreamHealth``), named
        as a person reads it (``shown_name``: never by an absolute path, SPEC §12.9)."""
        if record.healthy and not record.answered:
            detail: str | None = "never answered: no call has reached it yet"
        elif record.healthy:
            detail = (
                f"back since {stamp(record.recovered_at)} (by a {record.recovered_by})"
                if record.recovered_at
                else None
            )
        else:
            status = f"HTTP {record.last_status}" if record.last_status else "no status"
            detail = f"{status}; {count(record.probes, 'probe')} refused"
        return cls(
            name=shown_name(record.upstream),
            healthy=record.healthy,
            since=record.failing_since,
            next_probe=record.probe_due_at,
            detail=detail,
            parked=record.parked or 0,
            vendor=is_vendor(record),
        )


def is_vendor(record: UpstreamHealth) -> bool:
    """Whether a health record is a vendor's (SPEC §12.9), not a local script's or callable's:
    a ``codex`` or ``claude`` endpoint, or a name a profile or a failure declared for its
    upstream (any harness: the record is then not named by harness, endpoint and family)."""
    composed = f"{record.harness} {record.endpoint} {record.model_family}"
    return record.harness in VENDOR_HARNESSES or record.upstream != composed


def upstream_rows(store: EventStore) -> list[UpstreamRow]:
    """Each upstream's health, by name (vendors and local agents)."""
    return [UpstreamRow.of(record) for record in store.upstreams()]
