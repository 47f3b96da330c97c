"""The goals list: what needs a person first, the filters and the search, paging, and the
vendors' health, folded while all are healthy.

Pure: a ``GoalList`` and the upstream rows in, ``Html`` out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Final
from urllib.parse import quote, urlencode

from governor.core.summary import (
    ACTIVE_RANK,
    ENDED_RANK,
    NEEDS_PERSON,
    STOPPED_RANK,
    GoalSummary,
    Usage,
)
from governor.core.text import count
from governor.ui.data import GOAL_STATUSES, SEARCH_LIMIT, GoalList, UpstreamRow
from governor.ui.layout import badge, bar, link, relative, when
from governor.ui.markup import Html, el, join, void


def list_url(
    status: str | None, page: int = 1, *, needs_person: bool = False, search: str | None = None
) -> str:
    """The address of a page of the list."""
    pairs = (
        ("needs", "person" if needs_person else None),
        ("status", status),
        ("q", search),
        ("page", page if page > 1 else None),
    )
    query = {k: v for k, v in pairs if v}
    return "/" + (f"?{urlencode(query)}" if query else "")


def goal_url(goal_id: str) -> str:
    return f"/goals/{quote(goal_id, safe='')}"


def _usage(usage: Usage | None, label: str) -> Html:
    if usage is None:
        return el("span", "—", class_="none", title="recorded before the store kept it")
    uncharged = usage.used - usage.charged
    note = f" (+{uncharged} uncharged)" if uncharged else ""
    return el(
        "span",
        bar(usage.charged, usage.limit, uncharged, label=f"{label}: "),
        el("span", f"{usage.charged}/{usage.limit}{note}", class_="num"),
        class_="usage",
    )


@dataclass(frozen=True, slots=True)
class Bulk:
    """The list's bulk form (``--allow-actions``, a browser that may act), and what the
    last bulk action came to."""

    csrf: str
    actor: str
    done: str | None = None
    count: int = 0
    error: str | None = None


def _tick(goal: GoalSummary) -> Html:
    """The row's box of the bulk form."""
    return void(
        "input", type="checkbox", name="goal", value=goal.goal_id, form="bulk",
        aria_label=f"select {goal.goal_id}", class_="tick",
    )  # fmt: skip


def _row(goal: GoalSummary, now: datetime, ticks: bool = False) -> Html:
    return el(
        "tr",
        el(
            "td",
            _tick(goal) if ticks else Html(""),
            el("a", goal.goal_id, href=goal_url(goal.goal_id), class_="goal-id"),
            el("div", goal.title, class_="title"),
        ),
        el("td", badge(goal.status), el("div", goal.next_action, class_="action")),
        el("td", goal.blocked_on, class_="blocked-on"),
        el("td", el("code", goal.rule) if goal.rule else None, class_="rule"),
        el("td", el("div", goal.reason, class_="reason")),
        el("td", relative(goal.not_before, now), class_="wake"),
        el("td", _usage(goal.replans, "replans")),
        el("td", _usage(goal.attempts, "attempts")),
        el("td", relative(goal.updated_at, now), class_="updated"),
        data_goal=goal.goal_id,
        data_status=goal.status,
    )


RANKS: Final = {
    NEEDS_PERSON: "waiting on a person",
    STOPPED_RANK: "stopped: out of budget",
    ACTIVE_RANK: "moving: running, waiting or ready",
    ENDED_RANK: "ended",
}
"""The heading of each group of the list (``governor.core.summary.attention``)."""


def _body(rows: list[GoalSummary], now: datetime, ticks: bool = False) -> Html:
    """The rows, under a heading per attention rank (the list is in that order)."""
    groups: list[Html] = []
    for rank, members in groupby(rows, key=lambda g: g.attention):
        head = el("tr", el("th", RANKS.get(rank, ""), colspan=len(HEADINGS)), class_="group")
        groups.append(el("tbody", head, (_row(g, now, ticks) for g in members), data_rank=rank))
    return join(groups)


def _bulk_form(bulk: Bulk) -> Html:
    """One verb on every goal ticked, after one confirmation."""
    said = el("p", "recorded: ", bulk.done, f" of {count(bulk.count, 'goal')}, by {bulk.actor}",
              class_="done", id="action-done", role="status") if bulk.done else Html("")  # fmt: skip
    error = (
        el("p", "error: ", bulk.error, class_="error", id="action-error", role="alert")
        if bulk.error
        else Html("")
    )
    return join(
        [
            said,
            error,
            el(
                "form",
                void("input", type="hidden", name="csrf", value=bulk.csrf),
                el("label", "why (needed to resume or retry)", for_="bulk-reason"),
                el("textarea", "", id="bulk-reason", name="reason", rows="1"),
                el("label", void("input", type="checkbox", name="confirm", value="yes"),
                   " yes, to every goal ticked"),
                el("div", el("button", "cancel the goals ticked", type="submit", name="verb",
                             value="cancel", class_="danger"),
                   el("button", "resume the goals ticked", type="submit", name="verb",
                      value="resume"),
                   el("button", "retry the stopped items of the goals ticked", type="submit",
                      name="verb", value="retry"), class_="buttons"),
                method="post", action="/bulk", id="bulk", class_="act bulk",
            ),
        ]
    )  # fmt: skip


def _filters(goals: GoalList) -> Html:
    everything = sum(goals.counts.values())
    plain = not goals.status and not goals.needs_person

    def to(status: str | None, needs_person: bool = False) -> str:
        return list_url(status, needs_person=needs_person, search=goals.search)

    links = [
        link(
            to(None, needs_person=True),
            el("span", "needs a person", class_="person"),
            " ",
            el("span", goals.waiting_on_people, class_="count"),
            current=goals.needs_person,
        ),
        link(to(None), "all ", el("span", everything, class_="count"), current=plain),
    ]
    for status in GOAL_STATUSES:
        n = goals.counts.get(status, 0)
        links.append(
            link(
                to(status),
                badge(status),
                " ",
                el("span", n, class_="count"),
                current=goals.status == status,
            )
        )
    return el("nav", *links, class_="filters", aria_label="filter by status")


def _search(goals: GoalList) -> Html:
    keep = [
        void("input", type="hidden", name=name, value=value)
        for name, value in (
            ("needs", "person" if goals.needs_person else None),
            ("status", goals.status),
        )
        if value
    ]
    clear = (
        link(list_url(goals.status, needs_person=goals.needs_person), "clear", current=False)
        if goals.search
        else Html("")
    )
    return el(
        "form",
        *keep,  # first, so the address reads as list_url writes it
        el("label", "search ids and titles", for_="q", class_="hidden-label"),
        void(
            "input",
            type="search",
            id="q",
            name="q",
            value=goals.search or "",
            placeholder="search ids and titles",
            maxlength=SEARCH_LIMIT,
            autocomplete="off",
        ),
        el("button", "search", type="submit"),
        clear,
        method="get",
        action="/",
        role="search",
        class_="search",
    )


def _pager(goals: GoalList) -> Html:
    if goals.pages == 1:
        return Html("")
    page, last = goals.page, goals.pages

    def step(label: str, to: int, rel: str) -> Html:
        if to == page or not 1 <= to <= last:
            return el("span", label, class_="off")
        href = list_url(goals.status, to, needs_person=goals.needs_person, search=goals.search)
        return el("a", label, href=href, rel=rel)

    first = (page - 1) * goals.per_page + 1
    shown = (
        f"goals {first} to {first + len(goals.rows) - 1} of {goals.total} · page {page} of {last}"
    )
    return el(
        "nav",
        step("first", 1, "first"),
        step("« previous", page - 1, "prev"),
        el("span", shown, class_="where"),
        step("next »", page + 1, "next"),
        step("last", last, "last"),
        class_="pager",
        aria_label="pages",
    )


def _upstreams(rows: list[UpstreamRow], now: datetime) -> Html:
    """The vendors' health (SPEC §12.9: local agents are not vendors), folded while every
    vendor is healthy."""
    vendors = [row for row in rows if row.vendor]
    failing = [row for row in vendors if not row.healthy]
    local = len(rows) - len(vendors)
    if not vendors:
        said = "no vendor recorded yet"
    elif failing:
        parked = sum(row.parked for row in failing)
        said = f"{len(failing)} of {count(len(vendors), 'vendor')} failing, {count(parked, 'goal')} parked"
    else:
        said = f"{count(len(vendors), 'vendor')}, all healthy"
    aside = f" · {count(local, 'local agent')} not listed" if local else ""
    summary = el(
        "summary",
        el("span", "Upstreams ", class_="label"),
        el("span", said, class_="failing" if failing else "healthy" if vendors else "none"),
        el("span", aside, class_="none"),
    )
    body = [
        el(
            "tr",
            el("td", row.name),
            el("td", badge("succeeded", "healthy") if row.healthy else badge("blocked", "failing")),
            el("td", when(row.since, now)),
            el("td", relative(row.next_probe, now)),
            el("td", row.parked),
            el("td", row.detail),
        )
        for row in vendors
    ]
    head = el(
        "tr",
        *(
            el("th", h)
            for h in ("vendor", "health", "failing since", "next probe", "parked goals", "detail")
        ),
    )
    table = el("table", el("thead", head), el("tbody", body)) if vendors else Html("")
    default = "open" if failing else "closed"
    return el("details", summary, table, id="upstreams", open=bool(failing), data_default=default)


HEADINGS = (
    "goal",
    "status",
    "blocked on",
    "rule",
    "why",
    "next wake-up",
    "replans",
    "attempts",
    "updated",
)


def _heading(goals: GoalList) -> str:
    noun = "goal" if goals.total == 1 else "goals"
    if goals.needs_person:
        noun += " that wait on a person" if goals.total != 1 else " that waits on a person"
    if goals.status is not None:
        noun += f" {goals.status.replace('_', ' ')}"
    return f"{goals.total} {noun}" + (f" matching “{goals.search}”" if goals.search else "")


def _empty(goals: GoalList) -> str:
    if goals.search:
        return "No goal's id or title holds that text."
    if goals.needs_person:
        return "No goal waits on a person."
    if goals.status:
        return f"No goal is {goals.status.replace('_', ' ')}."
    return "No goals in this store yet."


def list_main(
    goals: GoalList, upstreams: list[UpstreamRow], now: datetime, bulk: Bulk | None = None
) -> Html:
    """The ``main`` of the list page; with ``bulk``, a box per row and the bulk form."""
    if goals.rows:
        table = el(
            "table",
            el("thead", el("tr", *(el("th", h, scope="col") for h in HEADINGS))),
            _body(goals.rows, now, ticks=bulk is not None),
            class_="goals",
        )
    else:
        table = el("p", _empty(goals), class_="empty")
    return join(
        [
            el("h1", "Goals ", el("span", _heading(goals), class_="sub")),
            el("nav", link("/pools", "budget pools"), class_="crumbs pools-link"),
            _upstreams(upstreams, now),
            el("div", _filters(goals), _search(goals), class_="tools"),
            _bulk_form(bulk) if bulk is not None else Html(""),
            table,
            _pager(goals),
        ]
    )
