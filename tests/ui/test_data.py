"""What the pages read: the list's pages, a goal's timeline, its pending question, upstreams.

Histories are built with the core's own recording functions (``tests/story.py``); stores
are the in-memory backend, which keeps the store contract.
"""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from functools import partial
from typing import Any

import pytest

from governor.analysis.runnable import naming_store
from governor.core.evidence import Evidence, Tries
from governor.core.fold import project
from governor.core.policy import UpstreamBackoff
from governor.core.upstream import Seen, Upstream, UpstreamHealth, observed
from governor.errors import InputError, NotFoundError
from governor.store import summarize
from governor.store.memory import MemoryEventStore
from governor.ui.data import (
    Explanations,
    UpstreamRow,
    goal_list,
    goal_page,
    pending,
    upstream_rows,
)
from governor.ui.goal_page import goal_main
from governor.ui.list_page import list_main, list_url
from governor.ui.timeline import Note, Run, timeline
from tests.story import ABSENT, T0, Story

DECIDE: dict[str, Any] = {"failure_class": "decision", "error": "Postgres or SQLite?"}


def put(store: MemoryEventStore, story: Story) -> None:
    view = project(story.events)
    store.append(view.goal_id, story.events, expected_seq=0, summary=summarize(view, story.now))


# --- the goals list --------------------------------------------------------------------------


def test_the_list_pages_through_the_summaries_and_counts_every_status() -> None:
    store = MemoryEventStore()
    for n in range(7):
        s = Story(f"g{n}")
        if n % 2:
            s.op("cancel_goal")
        put(store, s)
    first = goal_list(store, per_page=3)  # the ready ones first, then the ended ones
    assert ([r.goal_id for r in first.rows], first.page, first.pages, first.total) == (
        ["g0", "g2", "g4"], 1, 3, 7,
    )  # fmt: skip
    assert first.counts == {"ready": 4, "cancelled": 3}
    last = goal_list(store, per_page=3, page=99)
    assert ([r.goal_id for r in last.rows], last.page) == (["g5"], 3)
    cancelled = goal_list(store, status="cancelled", per_page=2, page=2)
    assert ([r.goal_id for r in cancelled.rows], cancelled.pages, cancelled.total) == (
        ["g5"], 2, 3,
    )  # fmt: skip
    assert goal_list(store, page=0).page == 1
    empty = goal_list(MemoryEventStore())
    assert (empty.rows, empty.pages, empty.total) == ([], 1, 0)


def people_first() -> MemoryEventStore:
    """A goal waiting on a decision, one on a review, a blocked one, a ready one, an ended
    one — each changed a second after the one before it."""
    store = MemoryEventStore()
    stories = [Story(g) for g in ("ended", "ready", "asks", "blocked", "review")]
    stories[0].op("cancel_goal")
    stories[2].plan_fails(**DECIDE)
    stories[3].plan_fails("environment", evidence=ABSENT, error="no codex")
    review = Story("review", accept_passing=False)
    review.plan("a")
    review.attempt("p1-a", "succeeded")
    stories[4] = review
    for delay, story in enumerate(stories):
        story.tick(10 * delay)
        put(store, story)
    return store


def test_the_list_puts_people_first_then_stopped_moving_and_ended_goals() -> None:
    store = people_first()
    found = goal_list(store)
    assert [r.goal_id for r in found.rows] == ["review", "asks", "blocked", "ready", "ended"]
    assert found.waiting_on_people == 3  # a blocked goal waits on a person, whatever blocks it
    page = list_main(found, [], T0)
    heads = re.findall(r'<tbody data-rank="(\d)"><tr class="group"><th colspan="9">([^<]*)<', page)
    assert heads == [
        ("0", "waiting on a person"),
        ("2", "moving: running, waiting or ready"),
        ("3", "ended"),
    ]


def test_the_list_filters_those_that_need_a_person_and_searches_ids_and_titles() -> None:
    store = people_first()
    people = goal_list(store, needs_person=True)
    assert ([r.goal_id for r in people.rows], people.total) == (["review", "asks", "blocked"], 3)
    assert "3 goals that wait on a person" in list_main(people, [], T0)
    found = goal_list(store, search="  ASK ")
    assert ([r.goal_id for r in found.rows], found.total, found.search) == (["asks"], 1, "ASK")
    assert goal_list(store, search="test goal").total == 5  # every title is "Test goal"
    both = goal_list(store, search="e", status="cancelled")
    assert [r.goal_id for r in both.rows] == ["ended"]
    nothing = list_main(goal_list(store, search="zzz"), [], T0)
    assert "No goal&#x27;s id or title holds that text." in nothing
    with pytest.raises(InputError, match="a search is at most 200 characters"):
        goal_list(store, search="x" * 201)


def test_the_list_links_keep_the_filters_and_the_search() -> None:
    assert list_url(None) == "/"
    assert list_url("blocked", 2, search="db") == "/?status=blocked&q=db&page=2"
    assert list_url(None, needs_person=True, search="a b&c") == "/?needs=person&q=a+b%26c"
    page = list_main(goal_list(people_first(), needs_person=True, search="a"), [], T0)
    assert '<input type="hidden" name="needs" value="person">' in page
    assert 'value="a"' in page  # the search box shows what was searched


def test_a_status_no_goal_can_have_is_refused() -> None:
    with pytest.raises(InputError, match="unknown status 'in_review'"):
        goal_list(MemoryEventStore(), status="in_review")


# --- a goal's timeline -----------------------------------------------------------------------


def test_the_timeline_has_each_run_with_its_charge_and_each_act_of_governance() -> None:
    s = Story()
    s.plan_fails("upstream", retry_after_s=1, run_s=2)
    s.plan("a")
    s.start("p2-a")
    s.tick(5).continue_("p2-a")
    s.finish("p2-a", "failed", run_s=3, error="boom")
    s.op("retry_work", work_id="p2-a", reason="try harder")
    s.start("p2-a")
    entries = timeline(s.events)
    runs = [e for e in entries if isinstance(e, Run)]
    assert [(r.what, r.outcome, r.charged) for r in runs] == [
        ("plan p1 (initial)", "failed", False),
        ("plan p2 (initial)", "proposed", True),
        ("p2-a attempt 1", "failed", True),
        ("p2-a attempt 2", "in flight", True),
    ]
    assert runs[0].duration_s == 2.0
    assert runs[0].why.startswith("uncharged: upstream, and the evidence shows the run did nothing")
    assert runs[0].evidence == ABSENT
    assert (runs[2].continuations, runs[2].duration_s, runs[2].error) == (1, 3.0, "boom")
    assert runs[2].why == "charged: the run failed: “boom”"
    assert runs[3].duration_s is None
    assert runs[1].detail == "apply: because\np2-a: A"
    assert runs[2].who == "worker (scripted)"
    notes = [(e.text, e.actor, e.reason) for e in entries if isinstance(e, Note)]
    assert notes == [
        ("goal created: Test goal", "governor", None),
        ("plan p2 applied: p2-a", "governor", None),
        ("p2-a retried", "operator:test", "try harder"),
    ]
    assert [e.seq for e in entries] == sorted(e.seq for e in entries)


# --- the question a goal asks ----------------------------------------------------------------


def test_a_planner_decision_is_answered_by_resume() -> None:
    s = Story("g")
    s.plan_fails(**DECIDE)
    asked = pending("g", s.view, s.decision(), "/srv/my store.db")
    assert asked is not None
    assert (asked.asker, asked.question) == ("the planner", "Postgres or SQLite?")
    assert asked.commands == (
        (
            "answer and plan again",
            "governor resume g --reason 'YOUR ANSWER' --store '/srv/my store.db'",
        ),
    )


def test_a_worker_decision_is_answered_by_a_retry_of_the_item() -> None:
    s = Story("g")
    s.plan("a")
    s.attempt("p1-a", evidence=ABSENT, **DECIDE)
    asked = pending("g", s.view, s.decision())
    assert asked is not None
    assert (asked.asker, asked.question) == ("p1-a's worker", "Postgres or SQLite?")
    assert asked.commands[0][1] == "governor work retry g p1-a --reason 'YOUR ANSWER'"


def test_reviews_are_answered_by_approve_reject_accept_or_retry() -> None:
    s = Story("g", auto_apply=False)
    s.propose("a", "b")
    asked = pending("g", s.view, s.decision())
    assert asked is not None
    assert asked.question == "plan p1 proposes p1-a, p1-b: approve or reject it"
    assert [c for _, c in asked.commands] == [
        "governor plan approve g p1",
        "governor plan reject g p1 --reason WHY",
    ]
    s = Story("g", accept_passing=False)
    s.plan("a")
    s.attempt("p1-a", "succeeded")
    asked = pending("g", s.view, s.decision())
    assert asked is not None
    assert [c for _, c in asked.commands] == [
        "governor work accept g p1-a",
        "governor work retry g p1-a --reason 'WHAT TO CHANGE'",
    ]


@pytest.mark.parametrize(
    "build",
    [
        lambda s: s,
        lambda s: s.plan_fails("environment"),
        lambda s: s.plan_fails("upstream", retry_after_s=60),
        lambda s: s.op("cancel_goal"),
    ],
    ids=["ready", "blocked on the environment", "waiting", "cancelled"],
)
def test_nothing_is_asked_when_no_person_is_needed_to_answer(build) -> None:
    s = Story("g")
    build(s)
    assert pending("g", s.view, s.decision()) is None


def test_a_goal_page_reads_one_goal_once_and_an_unknown_goal_is_not_found() -> None:
    store = MemoryEventStore()
    s = Story("g")
    s.plan_fails(**DECIDE)
    put(store, s)
    page = goal_page(store, "g", s.now + timedelta(seconds=1))
    assert (page.events, page.decision.blocked_on) == (len(s.events), "decision")
    assert page.explanation is not None  # without a cache, the page waits for it
    assert page.explanation.advice.startswith("no policy change helps: a person must act")
    assert page.pending is not None
    with pytest.raises(NotFoundError):
        goal_page(store, "nope", T0)


def test_a_run_shows_its_in_agent_tries_whatever_its_outcome() -> None:
    store = MemoryEventStore()
    s = Story("g")
    s.plan("a")
    s.start("p1-a")
    tries = Tries(count=3, classes=("upstream", "upstream", "ok"), vendor_retries=(503, None))
    s.finish("p1-a", "succeeded", evidence=Evidence(tries=tries), error=None)
    put(store, s)
    html = str(goal_main(goal_page(store, "g", s.now), s.now))
    assert "in-agent tries" in html
    assert (
        "3 in-agent tries: upstream, upstream, ok; the agent CLI retried 2 refused requests "
        "itself (503,no status)"
    ) in html
    assert html.count("in-agent tries</h4>") == 1  # the planner's run took one try


# --- upstreams: each one's shared health ---------------------------------------------------


def test_the_upstreams_section_shows_each_vendor_folded_while_all_are_healthy() -> None:
    store = MemoryEventStore()
    assert upstream_rows(store) == []
    empty = list_main(goal_list(store), upstream_rows(store), T0)
    assert "no vendor recorded yet" in empty
    assert '<details id="upstreams" data-default="closed">' in empty
    claude = Upstream("claude", "https://api.anthropic.com", "claude-sonnet-4-5")
    codex = Upstream("codex", "https://api.openai.com/v1", "gpt-5-codex")
    script = Upstream("command", "/home/a/bin/agent.sh", "default")
    backoff = UpstreamBackoff()
    for upstream in (codex, script):
        answered = partial(
            observed, upstream=upstream, seen=Seen("answered"), now=T0, backoff=backoff
        )
        store.change_upstream(upstream.name, answered)
    declared = UpstreamHealth(
        "acme-llm", "command", "/home/a/bin/llm.sh", "default", True, T0, answered=True
    )
    store.change_upstream("acme-llm", lambda r: declared)  # SPEC §12.9: a declared name
    healthy = list_main(goal_list(store), upstream_rows(store), T0)
    assert '<details id="upstreams" data-default="closed">' in healthy  # folded
    assert "2 vendors, all healthy" in healthy
    assert ">acme-llm<" in healthy  # a command that declares its vendor is one
    assert "1 local agent not listed" in healthy
    assert "agent.sh" not in healthy  # a local script is not a vendor (SPEC §12.9)
    store.change_upstream(
        claude.name, lambda r: observed(r, claude, Seen("refused", 529), T0, backoff)
    )
    rows = upstream_rows(store)
    assert [row for row in rows if row.vendor] == [
        UpstreamRow("acme-llm", True, None, None, None, 0),
        UpstreamRow(
            claude.name, False, T0, T0 + timedelta(seconds=30), "HTTP 529; 0 probes refused", 0
        ),
        UpstreamRow(codex.name, True, None, None, None, 0),
    ]
    page = list_main(goal_list(store), rows, T0 + timedelta(seconds=5))
    assert '<details id="upstreams" open data-default="open">' in page  # a vendor fails: open
    assert "1 of 3 vendors failing, 0 goals parked" in page
    assert "claude https://api.anthropic.com claude-sonnet-4-5" in page
    assert ">failing<" in page
    assert ">healthy<" in page


def test_upstreams_are_never_shown_by_an_absolute_path_and_say_when_never_answered() -> None:
    """SPEC §12.9: a record named before by its executable's path is shown as a short
    name and a digest; a vendor never reached says so (SPEC §12.7)."""
    store = MemoryEventStore()
    old = Upstream("command", "/home/ann/goals/bin/agent.sh", "default")
    never = Upstream("codex", "http://127.0.0.1:9/v1", "gpt-5-codex")
    backoff = UpstreamBackoff()
    store.change_upstream(old.name, lambda r: observed(r, old, Seen("refused", 503), T0, backoff))
    unreached = Seen("none", unreachable=True)
    store.change_upstream(never.name, lambda r: observed(r, never, unreached, T0, backoff))
    rows = {row.name: row for row in upstream_rows(store)}
    [shown] = [name for name in rows if name.startswith("command ")]
    assert shown.startswith("command agent.sh#")
    assert "/home/ann" not in shown
    assert rows[never.name].detail == "never answered: no call has reached it yet"
    page = list_main(goal_list(store), list(rows.values()), T0)
    assert "/home/ann" not in page


def test_a_planner_runs_cost_is_shown_like_a_workers() -> None:
    """SPEC §12.5: every agent call's cost, planner or worker, charged or not."""
    s = Story()
    s.plan_fails("upstream")
    costly = s.events[-1].model_copy(update={"cost_usd": 0.0125})
    runs = [e for e in timeline([*s.events[:-1], costly]) if isinstance(e, Run)]
    assert runs[0].cost_usd == 0.0125


# --- a goal's page: its header, its advice with real ids --------------------------------------


def test_advice_names_the_store() -> None:
    """explain names the real ids itself; the page adds the store it shows to each command."""
    advice = "answer with `governor resume g-1 --reason ANSWER` (or `governor status g-1`)"
    assert naming_store(advice, "/srv/my store.db") == (
        "answer with `governor resume g-1 --reason ANSWER --store '/srv/my store.db'` "
        "(or `governor status g-1 --store '/srv/my store.db'`)"
    )
    assert naming_store(advice, None) == advice  # no store was named
    told = "`governor raise g-1 --ledger replans --to 6 --store x.db`"
    assert naming_store(told, "x.db") == told  # already named: unchanged


def test_a_goal_page_has_a_header_with_start_last_update_duration_and_cost() -> None:
    store = MemoryEventStore()
    s = Story("g")
    s.plan("a")
    s.start("p1-a")
    s.tick(125)
    s.finish("p1-a", "succeeded", cost_usd=0.5)
    put(store, s)
    now = s.now + timedelta(hours=1)
    page = goal_main(goal_page(store, "g", now), now)
    header = re.search(r'<dl class="header" id="header">(.*?)</dl>', page)
    assert header is not None
    text = re.sub(r"<[^>]+>", "|", header.group(1))
    assert "started|||2026-01-01 00:00:00Z" in text
    assert "last update|||2026-01-01 00:02:10Z| (|1 h 0 m ago|)" in text
    assert "duration||1 h 2 m so far" in text  # the goal goes on: its clock runs
    assert "cost||$0.50" in text
    s.op("cancel_goal")
    store = MemoryEventStore()
    put(store, s)
    page = goal_main(goal_page(store, "g", now), now)
    assert ">duration</dt><dd>2 m 11 s</dd>" in page  # ended: from its start to its end


def test_a_charged_run_that_did_its_work_is_not_painted_as_an_error() -> None:
    store = MemoryEventStore()
    s = Story("g")
    s.plan("a")
    s.attempt("p1-a", "failed", error="tests failed")
    s.attempt("p1-a", "succeeded")
    put(store, s)
    page = goal_main(goal_page(store, "g", s.now), s.now)
    spans = re.findall(r'<span class="(charged [a-z]+|uncharged)">', page)
    assert spans == ["charged ok", "charged spent", "charged ok"]  # plan, failure, success


def test_explanations_are_computed_once_per_last_seq_and_only_the_latest_are_kept() -> None:
    kept = Explanations(size=2)
    a, b, c = Story("a"), Story("b"), Story("c")
    a.plan_fails(**DECIDE)
    first = kept.of(a.events)
    assert kept.of(list(a.events)) is first  # same goal, same last seq: not explained again
    a.op("resume_goal", reason="SQLite")
    after = kept.of(a.events)
    assert after is not None
    assert after is not first
    assert after.decision.status == "ready"
    kept.of(b.events)
    kept.of(c.events)  # a's is the oldest: dropped
    assert kept.of(a.events) is not after


def test_a_page_does_not_wait_past_its_bound_for_the_advice_and_a_later_one_gets_it() -> None:
    kept = Explanations(wait_s=0)
    gate = threading.Event()
    kept._pool.submit(gate.wait)  # the one worker thread is busy: nothing is explained yet
    s = Story("g")
    s.plan_fails(**DECIDE)
    assert kept.of(s.events) is None
    gate.set()
    kept.wait_s = None
    found = kept.of(s.events)
    assert found is not None
    assert found.decision.blocked_on == "decision"
    kept.close()
