"""The goals list: one page of summaries, the filter by status, paging, and the upstreams.

Pure: a ``GoalList`` and the upstream rows in, ``Html`` out.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import quote, urlencode

from governor.core.summary import GoalSummary, Usage
from governor.ui.data import GOAL_STATUSES, GoalList, UpstreamRow
from governor.ui.layout import badge, bar, link, relative, when
from governor.ui.markup import Html, el, join


def list_url(status: str | None, page: int = 1) -> str:
    """The address of a page of the list."""
    query = {k: v for k, v in (("status", status), ("page", page if page > 1 else None)) if v}
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


def _row(goal: GoalSummary, now: datetime) -> Html:
    return el(
        "tr",
        el(
            "td",
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
        el("td", when(goal.updated_at, now), class_="updated"),
        data_goal=goal.goal_id,
        data_status=goal.status,
    )


def _filters(goals: GoalList) -> Html:
    everything = sum(goals.counts.values())
    links = [
        link(
            list_url(None), "all ", el("span", everything, class_="count"), current=not goals.status
        )
    ]
    for status in GOAL_STATUSES:
        n = goals.counts.get(status, 0)
        links.append(
            link(
                list_url(status),
                badge(status),
                " ",
                el("span", n, class_="count"),
                current=goals.status == status,
            )
        )
    return el("nav", *links, class_="filters", aria_label="filter by status")


def _pager(goals: GoalList) -> Html:
    if goals.pages == 1:
        return Html("")
    page, last, status = goals.page, goals.pages, goals.status

    def step(label: str, to: int, rel: str) -> Html:
        if to == page or not 1 <= to <= last:
            return el("span", label, class_="off")
        return el("a", label, href=list_url(status, to), rel=rel)

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
    def health(row: UpstreamRow) -> Html:
        return badge("succeeded", "healthy") if row.healthy else badge("blocked", "failing")

    body = [
        el(
            "tr",
            el("td", row.name),
            el("td", health(row)),
            el("td", when(row.since, now)),
            el("td", relative(row.next_probe, now)),
            el("td", row.parked),
            el("td", row.detail),
        )
        for row in rows
    ]
    head = el(
        "tr",
        *(
            el("th", h)
            for h in ("upstream", "health", "failing since", "next probe", "parked goals", "detail")
        ),
    )
    table = (
        el("table", el("thead", head), el("tbody", body))
        if rows
        else el("p", "no upstream recorded yet", class_="none")
    )
    return el("section", el("h2", "Upstreams"), table, id="upstreams")


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


def list_main(goals: GoalList, upstreams: list[UpstreamRow], now: datetime) -> Html:
    """The ``main`` of the list page."""
    noun = "goal" if goals.total == 1 else "goals"
    heading = noun if goals.status is None else f"{noun} {goals.status.replace('_', ' ')}"
    if goals.rows:
        table = el(
            "table",
            el("thead", el("tr", *(el("th", h, scope="col") for h in HEADINGS))),
            el("tbody", (_row(g, now) for g in goals.rows)),
            class_="goals",
        )
    else:
        table = el(
            "p",
            f"No goal is {goals.status.replace('_', ' ')}."
            if goals.status
            else "No goals in this store yet.",
            class_="empty",
        )
    return join(
        [
            el("h1", "Goals ", el("span", f"{goals.total} {heading}", class_="sub")),
            _upstreams(upstreams, now),
            _filters(goals),
            table,
            _pager(goals),
        ]
    )
