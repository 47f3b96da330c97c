"""The pool pages (SPEC §13.6, §13.7): every pool (``/pools``) and one pool
(``/pools/NAME``) — its spend over the current period against its limit, its goals, the
requests for more budget waiting on it, its latest events and, with ``--allow-actions``,
the form that grants the pool more budget or declines what waits on it.

Pure: values in, ``Html`` out. A request's reason is governor's own words (the pool's
spend); goal titles go through ``markup.text`` like every other text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final
from urllib.parse import quote

from governor.core.pools import (
    UNITS,
    Figure,
    PoolEvent,
    PoolGranted,
    PoolReleased,
    PoolReserved,
    PoolSettled,
)
from governor.core.view import BudgetRequest
from governor.ui.forms import Acting, budget_fields, outcome
from governor.ui.layout import badge, bar, link, relative, when
from governor.ui.markup import Html, el, join, void
from governor.ui.pool_data import PoolGoal, PoolPage

_UNIT_WORDS: Final = {"usd": "cost", "attempts": "charged attempts", "run_time_s": "run time"}


def pool_url(name: str) -> str:
    return f"/pools/{quote(name, safe='')}"


def amount(unit: str, value: float) -> str:
    """A figure of a unit as a person reads it: ``$0.25``, ``3 attempts``, ``40 s``."""
    if unit == "usd":
        return f"${value:.4g}"
    if unit == "attempts":
        return f"{value:g} attempts"
    return f"{value:g} s"


def _period(record: dict[str, Any]) -> str:
    limits = record["limits"]
    period = limits.get("period", "total")
    if period == "every":
        return f"every {limits['every_s']:g} s"
    return "in total (never renews)" if period == "total" else f"per {period}"


def _limits(record: dict[str, Any]) -> list[str]:
    return [u for u in UNITS if record["limits"].get(u) is not None]


def pools_main(records: list[dict[str, Any]], now: datetime) -> Html:
    """The ``main`` of ``/pools``: one row per pool, its spend of each limit."""
    crumbs = el("nav", link("/", "« all goals"), class_="crumbs")
    if not records:
        empty = el(
            "p",
            "No pools: ",
            el("code", "governor pool set NAME --usd 200 --per day", class_="command"),
            " makes one.",
            class_="empty",
        )
        return join([crumbs, el("h1", "Pools"), empty])
    rows = [
        el(
            "tr",
            el("th", link(pool_url(r["pool"]), r["pool"]), scope="row"),
            el("td", _period(r), " (", r["limits"].get("tz", "UTC"), ")"),
            el("td", join(_spend_line(r, u) for u in _limits(r))),
            el("td", _renews(r, now)),
            data_pool=r["pool"],
        )
        for r in records
    ]
    heads = ("pool", "period", "spent this period", "renews")
    table = el(
        "table",
        el("thead", el("tr", *(el("th", h, scope="col") for h in heads))),
        el("tbody", rows),
        class_="pools",
    )
    return join([crumbs, el("h1", "Pools ", el("span", f"({len(records)})", class_="sub")), table])


def _renews(record: dict[str, Any], now: datetime) -> Html:
    renews = record["period"]["renews_at"]
    if renews is None:
        return el("span", "never", class_="none")
    return relative(datetime.fromisoformat(renews), now)


def _spend_line(record: dict[str, Any], unit: str) -> Html:
    """One unit's spend of its limit: a bar, and the figures in words."""
    limit = record["limits"][unit] + record["granted"][unit]
    spent, reserved = record["spent"][unit], record["reserved"][unit]
    words = f"{amount(unit, spent)} of {amount(unit, limit)}"
    if reserved:
        words += f" (+{amount(unit, reserved)} reserved)"
    if record["granted"][unit]:
        words += f" (a grant of {amount(unit, record['granted'][unit])} included)"
    return el(
        "div",
        el("span", _UNIT_WORDS[unit], class_="unit"),
        " ",
        bar(spent + reserved, limit, label=f"{_UNIT_WORDS[unit]}: "),
        " ",
        el("span", words, class_="figures"),
        class_="spend",
        data_unit=unit,
    )


def _spend(page: PoolPage, now: datetime) -> Html:
    record = page.record
    start = record["period"]["start"]
    facts = [
        ("period", join([_period(record), " (", record["limits"].get("tz", "UTC"), ")"])),
        ("began", when(datetime.fromisoformat(start), now) if start else None),
        ("renews", _renews(record, now)),
        ("calls in flight", str(record["in_flight"])),
        ("grants made", ", ".join(f"{n} by {by}" for by, n in record["grants"].items()) or None),
    ]
    grants = record["limits"].get("grants")
    if grants:
        facts.append(
            (
                "grants by itself",
                f"up to ${grants.get('auto_usd', 0):g} and {grants.get('auto_attempts', 0)} "
                "attempts a request",
            )
        )
    listed = el("dl", join(join([el("dt", k), el("dd", v)]) for k, v in facts if v is not None))
    lines = join(_spend_line(record, u) for u in _limits(record))
    return el("section", el("h2", "Spend this period"), lines, listed, id="spend")


def _asked(request: BudgetRequest) -> str:
    parts = []
    if request.usd is not None:
        parts.append(amount("usd", request.usd))
    if request.attempts is not None:
        parts.append(f"{request.attempts} attempt" + ("s" if request.attempts != 1 else ""))
    return " and ".join(parts) or "—"


def _request(goal: PoolGoal, now: datetime) -> Html:
    request = goal.request
    assert request is not None
    if request.renews_at is not None:
        waits = join(["goes on by itself ", relative(request.renews_at, now), " (the pool renews)"])
    else:
        waits = Html("only a grant moves it")
    return el(
        "li",
        el("strong", link(f"/goals/{quote(goal.goal_id, safe='')}", goal.goal_id)),
        " asks for ",
        el("span", _asked(request), class_="asked"),
        " — ",
        el("span", "waits on a person" if goal.person else "governor goes on alone",
           class_="whose"),
        el("p", request.reason, class_="reason"),
        el("p", "asked ", relative(request.at, now), "; ", waits,
           " (declined)" if request.declined else "", class_="when"),
        el("ul", [el("li", el("code", c, class_="command")) for c in goal.commands],
           class_="commands") if goal.commands else Html(""),
        el("p", link(f"/goals/{quote(goal.goal_id, safe='')}#blockers", "answer it on its page")),
        data_goal=goal.goal_id,
    )  # fmt: skip


def _requests(page: PoolPage, now: datetime) -> Html:
    asked = page.requests
    head = el("h2", "Open requests ", el("span", f"({len(asked)})", class_="sub"))
    if not asked:
        return el("section", head, el("p", "No goal waits on this pool.", class_="none"),
                  id="requests")  # fmt: skip
    return el(
        "section", head, el("ol", [_request(g, now) for g in asked], class_="requests"),
        id="requests",
    )  # fmt: skip


def _goals(page: PoolPage) -> Html:
    head = el("h2", "Goals ", el("span", f"({len(page.goals)})", class_="sub"))
    if not page.goals:
        return el("section", head, el("p", "No goal names this pool.", class_="none"), id="goals")
    units = _limits(page.record)
    rows = [
        el(
            "tr",
            el("th", link(f"/goals/{quote(g.goal_id, safe='')}", g.goal_id), scope="row"),
            el("td", g.title),
            el("td", badge(g.status)),
            *(el("td", amount(u, g.spent[u]), data_unit=u) for u in units),
            data_goal=g.goal_id,
        )
        for g in page.goals
    ]
    heads = ("goal", "title", "status", *(f"{_UNIT_WORDS[u]} this period" for u in units))
    table = el(
        "table",
        el("thead", el("tr", *(el("th", h, scope="col") for h in heads))),
        el("tbody", rows),
        class_="pool-goals",
    )
    return el("section", head, table, id="goals")


def _figure_words(figure: Figure) -> str:
    return ", ".join(amount(u, figure.of(u)) for u in UNITS if figure.of(u)) or "nothing"


def _event_line(event: PoolEvent) -> str:
    match event:
        case PoolReserved() | PoolSettled():
            return f"{event.type} {event.goal_id}: {_figure_words(event.figure)}"
        case PoolGranted():
            return f"pool.granted {_figure_words(event.figure)} by {event.actor}"
        case PoolReleased():
            return f"pool.released {event.goal_id}"
        case _:
            return event.type


def _history(page: PoolPage, now: datetime) -> Html:
    rows = [
        el("li", relative(e.at, now), " ", el("span", _event_line(e), class_="event"),
           el("span", f" — {e.reason}", class_="reason") if e.reason else Html(""),
           data_type=e.type)
        for e in page.recent
    ]  # fmt: skip
    return el(
        "section",
        el("h2", "Latest events ", el("span", f"(newest first; `governor pool show {page.name} "
                                               "--events` has them all)", class_="sub")),
        el("ol", rows, class_="pool-events"),
        id="history",
    )  # fmt: skip


def pool_act_url(name: str) -> str:
    return f"{pool_url(name)}/act"


def _grant_form(page: PoolPage, acting: Acting) -> Html:
    """Grant the pool more budget (every goal waiting on it goes on), or decline every
    request waiting on it: ``governor grant POOL`` / ``governor decline POOL``."""
    head = el("h2", "Grant ", el("span", f"(recorded as {acting.actor})", class_="sub"))
    if acting.csrf is None:
        how = (
            "To act from this page, open the address with the access token that "
            "governor ui printed when it started (…/?token=…); this browser has none."
        )
        return el("section", head, el("p", how, class_="none"), id="act", data_ready="false")
    fields = [("csrf", acting.csrf), ("form", "pool")]
    form = el(
        "form",
        *(void("input", type="hidden", name=n, value=v) for n, v in fields),
        budget_fields(acting, "pool", asked=None),
        el(
            "div",
            el("button", "grant to the pool", type="submit", name="verb", value="grant"),
            el("button", "decline every request", type="submit", name="verb", value="decline",
               class_="danger"),
            class_="buttons",
        ),
        method="post",
        action=pool_act_url(page.name),
        class_="act",
        data_form="pool",
    )  # fmt: skip
    said = (
        "A grant raises the pool's limit (until it expires or the period renews) and "
        "answers every request waiting on it; a decline answers them all with no."
    )
    return el("section", head, el("p", said), form, id="act", data_ready="true")


def pool_main(page: PoolPage, now: datetime, acting: Acting | None = None) -> Html:
    """The ``main`` of a pool's page; with ``acting``, its grant form."""
    return join(
        [
            el("nav", link("/", "« all goals"), " · ", link("/pools", "all pools"),
               class_="crumbs"),
            el("h1", "pool ", el("span", page.name, class_="pool-name")),
            outcome(acting) if acting else Html(""),
            _spend(page, now),
            _requests(page, now),
            _grant_form(page, acting) if acting else Html(""),
            _goals(page),
            _history(page, now),
        ]
    )  # fmt: skip
