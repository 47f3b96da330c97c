"""The page shell and the small pieces every page shares: times, durations, badges, bars.

Rules:
    * Pure: values in, ``Html`` out. Nothing here reads the store or the clock.
    * No inline script or style anywhere (the Content-Security-Policy forbids them):
      behaviour is ``/static/ui.js``, looks are ``/static/ui.css``, bars are SVG shapes
      whose sizes are attributes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final, get_args

from governor.core.decision import Status
from governor.core.text import stamp
from governor.ui.markup import Html, el, join, void

KNOWN_STATUSES: Final = frozenset(get_args(Status))
"""Statuses with a colour of their own in the style sheet."""


def document(
    title: str,
    main: Html,
    *,
    subtitle: str,
    refresh_s: float,
    mode: str = "read-only",
    referrer: str = "no-referrer",
) -> Html:
    """A whole page: the shell, the header, and ``main`` (which the refresh replaces).

    ``mode`` is the header's note (``read-only``, or who acts); ``referrer`` the page's
    referrer policy (the server sends the same in its header).
    """
    head = el(
        "head",
        void("meta", charset="utf-8"),
        void("meta", name="viewport", content="width=device-width, initial-scale=1"),
        void("meta", name="referrer", content=referrer),
        el("title", f"{title} · governor"),
        void("link", rel="stylesheet", href="/static/ui.css"),
        void("link", rel="icon", href="/static/favicon.svg", type="image/svg+xml"),
        el("script", src="/static/ui.js", defer=True),
    )
    header = el(
        "header",
        el("a", "governor", href="/", class_="brand"),
        el("span", subtitle, class_="store"),
        el("span", mode, class_="readonly" if mode == "read-only" else "acting"),
        el("span", "", id="refreshed", aria_live="polite"),
    )
    body = el("body", header, el("main", main), data_refresh_s=f"{refresh_s:g}")
    return Html("<!doctype html>\n" + el("html", head, body, lang="en"))


def when(moment: datetime | None, now: datetime) -> Html:
    """A time as ``2026-01-01 12:00:03Z``, with how far it is from now on hover."""
    if moment is None:
        return el("span", "—", class_="none")
    seconds = (moment - now).total_seconds()
    said = f"in {duration(seconds)}" if seconds > 0 else f"{duration(-seconds)} ago"
    return el("time", moment.strftime("%Y-%m-%d %H:%M:%SZ"), datetime=stamp(moment), title=said)


def relative(moment: datetime | None, now: datetime) -> Html:
    """``in 4 m 10 s`` / ``3 s ago``, with the exact time on hover."""
    if moment is None:
        return el("span", "—", class_="none")
    seconds = (moment - now).total_seconds()
    said = f"in {duration(seconds)}" if seconds > 0 else f"{duration(-seconds)} ago"
    return el("time", said, datetime=stamp(moment), title=stamp(moment))


def duration(seconds: float | None) -> str:
    """``0.42 s``, ``12 s``, ``3 m 20 s``, ``2 h 5 m``, ``3 d 4 h``."""
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.2g} s" if seconds < 1 else f"{seconds:.1f} s"
    total = round(seconds)
    for unit, size, sub, sub_size in (("d", 86400, "h", 3600), ("h", 3600, "m", 60)):
        if total >= size:
            return f"{total // size} {unit} {(total % size) // sub_size} {sub}"
    return f"{total // 60} m {total % 60} s" if total >= 60 else f"{total} s"


def badge(status: str, label: str | None = None) -> Html:
    """A status, coloured by the style sheet (unknown statuses stay plain)."""
    kind = status if status in KNOWN_STATUSES else "other"
    return el("span", label or status.replace("_", " "), class_=f"badge s-{kind}")


def bar(charged: float, limit: float | None, uncharged: float = 0.0, *, label: str = "") -> Html:
    """A budget as a bar: the charged share of the limit, the uncharged runs after it.

    Over the limit, the bar is full and marked over. Without a limit it says so.
    """
    if limit is None:
        return el("span", "no limit", class_="none")
    full = max(limit, 1e-9)
    used_w = min(charged / full, 1.0) * 100
    free_w = min(uncharged / full, 1.0) * (100 - used_w)
    state = "over" if charged > limit else ("spent" if charged >= limit else "ok")
    title = f"{label}{charged:g} charged of {limit:g}" + (
        f", {uncharged:g} uncharged" if uncharged else ""
    )
    shapes = join(
        [
            el("rect", class_="track", width="100", height="8", rx="2"),
            el("rect", class_=f"charged {state}", width=f"{used_w:.2f}", height="8", rx="2"),
            el(
                "rect",
                class_="uncharged",
                x=f"{used_w:.2f}",
                width=f"{free_w:.2f}",
                height="8",
                rx="2",
            ),
            el("title", title),
        ]
    )
    return el(
        "svg",
        shapes,
        class_=f"bar {state}",
        viewBox="0 0 100 8",
        preserveAspectRatio="none",
        role="img",
        aria_label=title,
    )


def link(href: str, *children: object, current: bool = False) -> Html:
    """A link; the current one is marked for screen readers and the style sheet."""
    return el("a", *children, href=href, aria_current="page" if current else None)
