"""Benchmark: ``governor ui`` — the goals list over 10,000 goals, and a 500-event goal's page.

Run: ``.venv/bin/python -m bench.ui [--goals 10000] [--events 500] [--repeat 7] [--no-browser]``

Method (figures go to docs/performance.md):
    1. Two SQLite stores (``synchronous=FULL``): ``--goals`` goals and a tenth of that,
       written through the store's own primitives in one transaction (each goal's events
       and the summary ``summarize`` gives, as ``append`` would write them). The goals
       are copies of eight small histories made with the core's recording functions (ready,
       running, waiting, blocked on a decision, in review, exhausted, succeeded, cancelled).
       The large store also holds two long goals: ``long`` (about ``--events`` events, a
       plan of four items attempted through outages and charged failures until the goal's
       charged attempts are spent: ``budget_exhausted``, so ``explain`` searches for the
       smallest change) and ``short`` (the same story cut at a tenth of the events).
    2. The real ``governor ui`` serves each store (a subprocess on 127.0.0.1, port 0), and a
       copy of the large store without the attention indexes (``goals_attention``,
       ``goals_status_attention``: the list then sorts every summary per page). Each
       request is timed end to end over one kept-alive HTTP connection, ``--repeat``
       times, in an interleaved order; the median is kept. The list (ordered by
       attention): first page, a page in the middle, the last page, a status filter, the
       goals that need a person, a search that matches ten goals and one that matches
       none; the same first page on the small store and on the copy without the indexes.
       The goal pages: the first request (cold: ``explain`` starts, and the page
       waits for it at most 0.25 s), the time until a response holds its advice (asked
       again every 10 ms), and later requests (warm: the explanation is kept per last seq).
    3. In-process, the parts of the long goal's page: load and fold the events (what
       ``governor status`` does), the timeline, ``explain``, the rendering.
    4. With Chromium (unless ``--no-browser``): the browser's own clock for loading each
       page (navigation start to the load event, ``PerformanceNavigationTiming``), and one
       refresh of an open page (fetch the page again, parse it, swap ``main``) in the page.
    Ratios printed side by side: 10,000 vs 1,000 goals, deep vs first page, without vs with
    the attention indexes, the long goal's page vs loading and folding its events.
"""

from __future__ import annotations

import argparse
import http.client
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from datetime import timedelta
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

from bench.service import median_ms
from governor.analysis.explain import explain
from governor.core.events import Event
from governor.core.fold import project
from governor.core.rules.decide import decide
from governor.store import summarize
from governor.store.rows import StoredEvent, to_rows
from governor.store.sqlite import SqliteEventStore
from governor.store.stored import chain
from governor.ui.data import goal_page
from governor.ui.goal_page import goal_main
from governor.ui.timeline import timeline
from tests.story import ABSENT, Story
from tests.ui.serve import chromium, missing_browser, start_ui


def templates() -> list[Story]:
    """Eight small histories, one per status the list shows."""
    ready = Story("t")
    running = Story("t")
    running.plan("a")
    running.start("p1-a")
    waiting = Story("t")
    waiting.plan_fails("upstream", retry_after_s=3600)
    decision = Story("t")
    decision.plan_fails("decision", error="Postgres or SQLite?")
    review = Story("t", accept_passing=False)
    review.plan("a", "b")
    review.attempt("p1-a", "succeeded")
    exhausted = Story("t", max_replans=2, max_milestones=2)
    exhausted.plan_fails()
    exhausted.plan_fails()
    succeeded = Story("t")
    succeeded.plan("a")
    succeeded.succeed("p1-a")
    cancelled = Story("t")
    cancelled.op("cancel_goal", reason="not needed")
    return [ready, running, waiting, decision, review, exhausted, succeeded, cancelled]


def long_goal(goal_id: str, events: int) -> Story:
    """At least ``events`` events: four items through outages and charged failures until the
    goal's charged attempts are spent (the smallest such limit)."""
    for limit in range(events // 5, events):
        s = Story(goal_id, max_total_attempts=limit, max_attempts=events, max_uncharged_attempts=events)  # fmt: skip
        s.plan("api", "db", "ui", "docs")
        for i in range(2 * events):
            decision = s.decision()
            if decision.status == "budget_exhausted":
                break
            work_id = decision.work_ids[0]
            s.start(work_id)
            if i % 3 == 0:
                s.continue_(work_id)
            if i % 2:
                s.finish(
                    work_id,
                    failure_class="upstream",
                    evidence=ABSENT,
                    error="HTTP/1.1 503 Service Unavailable",
                )
            else:
                s.finish(work_id, error="tests failed: 3 of 12")
            s.tick()
        if len(s.events) >= events:
            return s
    raise AssertionError(f"no limit gives {events} events")


def chain_of(rows: list[StoredEvent]) -> int:
    return chain(0, (row.crc for row in rows))


def fill(path: Path, goals: int, extra: list[Story]) -> None:
    """``goals`` copies of the templates, and the extra stories, in one transaction."""
    stories = templates()
    store = SqliteEventStore(path)
    with store._write("bench") as tx:
        for n in range(goals):
            story = stories[n % len(stories)]
            goal_id = f"goal-{n:06d}"
            events: list[Event] = [e.model_copy(update={"goal_id": goal_id}) for e in story.events]
            rows = to_rows(goal_id, events, 0)
            store._insert(tx, goal_id, rows)
            store._put_summary(tx, summarize(project(events), story.now), chain_of(rows))
        for story in extra:
            rows = to_rows(story.view.goal_id, story.events, 0)
            store._insert(tx, story.view.goal_id, rows)
            store._put_summary(tx, summarize(project(story.events), story.now), chain_of(rows))
    store.close()


class Client:
    """One kept-alive HTTP connection to a server."""

    def __init__(self, url: str) -> None:
        where = urlsplit(url)
        self.conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=60)

    def get(self, path: str) -> bytes:
        self.conn.request("GET", path)
        response = self.conn.getresponse()
        body = response.read()
        assert response.status == 200, (path, response.status)
        return body

    def get_ms(self, path: str) -> float:
        start = time.perf_counter()
        self.get(path)
        return (time.perf_counter() - start) * 1000

    def cold_ms(self, path: str) -> tuple[float, float]:
        """The first response, and the time until a response holds explain's advice."""
        start = time.perf_counter()
        first = self.get_ms(path)
        while b'data-ready="true"' not in self.get(path):
            time.sleep(0.01)
        return first, (time.perf_counter() - start) * 1000


def medians(calls: dict[str, Callable[[], float]], repeat: int) -> dict[str, float]:
    """Each call ``repeat`` times, interleaved; the median of each, in ms."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            times[name].append(call())
    return {name: statistics.median(t) for name, t in times.items()}


def without_attention_indexes(source: Path, copy: Path) -> None:
    """A copy of a store whose listing by attention has no index to walk."""
    shutil.copyfile(source, copy)
    with closing(sqlite3.connect(copy)) as raw:
        raw.execute("DROP INDEX goals_attention")
        raw.execute("DROP INDEX goals_status_attention")
        raw.commit()


def over_http(urls: list[str], goals: int, per_page: int, repeat: int) -> dict[str, float]:
    """``urls``: the large store's server, the small store's, the one without the indexes."""
    pages = -(-(goals + 2) // per_page)
    a, b, c = (Client(url) for url in urls)
    long_first, long_advice = a.cold_ms("/goals/long")
    short_first, short_advice = a.cold_ms("/goals/short")
    first = {
        "long (cold)": long_first,
        "long (cold), until the advice is shown": long_advice,
        "short (cold)": short_first,
        "short (cold), until the advice is shown": short_advice,
    }
    calls = {
        "list, first page": lambda: a.get_ms("/"),
        "list, middle page": lambda: a.get_ms(f"/?page={pages // 2}"),
        "list, last page": lambda: a.get_ms(f"/?page={pages}"),
        "list, status=blocked": lambda: a.get_ms("/?status=blocked"),
        "list, status=blocked, last page": lambda: a.get_ms("/?status=blocked&page=9999"),
        "list, needs a person": lambda: a.get_ms("/?needs=person"),
        "list, needs a person, last page": lambda: a.get_ms("/?needs=person&page=9999"),
        "list, search matching 10 goals": lambda: a.get_ms("/?q=goal-00999"),
        "list, search matching none": lambda: a.get_ms("/?q=no-such-goal"),
        "list, first page, small store": lambda: b.get_ms("/"),
        "list, first page, no attention index": lambda: c.get_ms("/"),
        "list, middle page, no attention index": lambda: c.get_ms(f"/?page={pages // 2}"),
        "list, needs a person, no attention index": lambda: c.get_ms("/?needs=person"),
        "goal page, long (warm)": lambda: a.get_ms("/goals/long"),
        "goal page, short (warm)": lambda: a.get_ms("/goals/short"),
    }
    return {**{f"goal page, {k}": v for k, v in first.items()}, **medians(calls, repeat)}


def in_process(path: Path, repeat: int) -> dict[str, float]:
    store = SqliteEventStore(path, read_only=True)
    events = list(store.load("long"))
    now = events[-1].at + timedelta(seconds=1)
    parts = {
        "load + fold (governor status)": lambda: decide(project(store.load("long")), now),
        "timeline": lambda: timeline(events),
        "explain": lambda: explain(events),
        "whole page, cold (load, fold, timeline, explain, render)": lambda: goal_main(
            goal_page(store, "long", now), now
        ),
    }
    found = {name: median_ms(call, repeat) for name, call in parts.items()}
    store.close()
    return found


def listing_queries(stores: dict[str, Path], per_page: int, repeat: int) -> dict[str, float]:
    """The list's store queries alone, in process: one page by attention, and its count."""
    found: dict[str, float] = {}
    for label, path in stores.items():
        store = SqliteEventStore(path, read_only=True)
        middle: int = (store.count_goals() // per_page // 2) * per_page
        page = partial(store.goals, order="attention", limit=per_page)
        calls: dict[str, Callable[[], object]] = {
            "first page": page,
            "middle page": partial(page, offset=middle),
            "needs a person": partial(page, needs_person=True),
            "status=blocked": partial(page, statuses=["blocked"]),
            "count needing a person": partial(store.count_goals, needs_person=True),
            "counts per status": store.goal_counts,
            "search, matching none": partial(page, search="no-such-goal"),
        }
        found |= {f"{name}, {label}": median_ms(call, repeat * 5) for name, call in calls.items()}
        store.close()
    return found


def in_browser(big: str, repeat: int) -> dict[str, float]:
    found: dict[str, list[float]] = {}
    refresh = """async () => {
        const t0 = performance.now();
        const text = await (await fetch(location.href, {cache: "no-store"})).text();
        const fresh = new DOMParser().parseFromString(text, "text/html").querySelector("main");
        document.querySelector("main").replaceWith(document.importNode(fresh, true));
        return performance.now() - t0;
    }"""
    load = "() => { const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime; }"
    with chromium() as browser:
        page = browser.new_page()
        for _ in range(repeat):
            for name, path in (
                ("list, first page", ""),
                ("list, last page", "?page=9999"),
                ("goal page, long", "goals/long"),
            ):
                page.goto(big + path)
                found.setdefault(f"load: {name}", []).append(page.evaluate(load))
                found.setdefault(f"refresh in place: {name}", []).append(page.evaluate(refresh))
    return {name: statistics.median(t) for name, t in found.items()}


def report(title: str, figures: dict[str, float]) -> None:
    print(f"\n{title}")
    for name, ms in figures.items():
        print(f"  {name:<58} {ms:9.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--goals", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--per-page", type=int, default=50)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ui-") as folder:
        big, small, bare = (Path(folder) / f"{n}.db" for n in ("big", "small", "bare"))
        started = time.perf_counter()
        long, short = long_goal("long", args.events), long_goal("short", args.events // 10)
        fill(big, args.goals, [long, short])
        fill(small, args.goals // 10, [])
        without_attention_indexes(big, bare)
        print(f"stores: {args.goals} and {args.goals // 10} goals; long goal {len(long.events)} events "
              f"({long.decision().status}), short {len(short.events)}; made in {time.perf_counter() - started:.1f} s")  # fmt: skip
        flags = ("--page-size", str(args.per_page), "--refresh-s", "0")
        servers = [start_ui("--store", str(path), *flags) for path in (big, small, bare)]
        try:
            urls = [server.url for server in servers]
            http_ms = over_http(urls, args.goals, args.per_page, args.repeat)
            report(f"over HTTP (median of {args.repeat}, ms)", http_ms)
            stores = {
                f"{args.goals} goals": big,
                "no attention index": bare,
                f"{args.goals // 10} goals": small,
            }
            queries = listing_queries(stores, args.per_page, args.repeat)
            report(
                f"the list's store queries, in process (median of {args.repeat * 5}, ms)", queries
            )
            parts = in_process(big, args.repeat)
            report(f"the long goal's page, in process ({len(long.events)} events)", parts)
            browser = (
                {}
                if args.no_browser or missing_browser()
                else in_browser(servers[0].url, args.repeat)
            )
            if browser:
                report("in Chromium (median, ms)", browser)
        finally:
            for server in servers:
                server.stop()
    ratio = lambda a, b: http_ms[a] / http_ms[b]  # noqa: E731
    print("\nratios")
    print(
        f"  first page, {args.goals} vs {args.goals // 10} goals:      {ratio('list, first page', 'list, first page, small store'):.2f}x"
    )
    print(
        f"  middle page vs first page:                   {ratio('list, middle page', 'list, first page'):.2f}x"
    )
    for what in ("first page", "middle page", "needs a person"):
        slower = ratio(f"list, {what}, no attention index", f"list, {what}")
        print(f"  {what} over HTTP, without vs with the attention index: {slower:.2f}x")
    big_label, small_label = f"{args.goals} goals", f"{args.goals // 10} goals"
    for what in ("first page", "middle page", "needs a person", "status=blocked"):
        bare_ms, with_ms = queries[f"{what}, no attention index"], queries[f"{what}, {big_label}"]
        print(
            f"  the query of {what}, without vs with the attention index: {bare_ms / with_ms:.1f}x"
        )
        print(
            f"  the query of {what}, {big_label} vs {small_label}: {with_ms / queries[f'{what}, {small_label}']:.2f}x"
        )
    print(
        f"  long goal page (warm) vs short:              {ratio('goal page, long (warm)', 'goal page, short (warm)'):.2f}x"
    )
    print(
        f"  long goal page (cold) vs load + fold:        {http_ms['goal page, long (cold)'] / parts['load + fold (governor status)']:.1f}x"
    )
    print(f"  long goal page (warm) vs load + fold:        {http_ms['goal page, long (warm)'] / parts['load + fold (governor status)']:.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
