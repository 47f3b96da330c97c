"""The web view in a real headless Chromium, over a store with a goal in every status.

The store is made by the real runner and the scripted harness (``tests/ui/fleet.py``);
its agents wrote ``<script>`` tags, image handlers and ANSI escapes into questions,
errors, titles and summaries. No script of theirs may run: ``window.__pwned`` stays unset
and their text shows literally.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from governor.store.sqlite import SqliteEventStore
from tests.ui.fleet import ANSI, CLAUDE, CODEX, EXPECTED, IMG, QUESTION, SCRIPT, Fleet
from tests.ui.serve import GOVERNOR, Server, start_ui

VISIBLE_ANSI = "\\x1b[31mRED\\x1b[0m \\x1b]0;title\\x07"
"""How the page shows ``ANSI``: every control character spelled out."""


def rows(page: Any) -> dict[str, tuple[str, str]]:
    """Goal id -> (status badge, blocked on) of the list rows shown."""
    found = {}
    for row in page.locator("table.goals tbody tr[data-goal]").all():
        cells = row.locator("td")
        goal_id = cells.nth(0).locator("a.goal-id").inner_text()
        found[goal_id] = (cells.nth(1).locator(".badge").inner_text(), cells.nth(2).inner_text())
    return found


def assert_inert(page: Any) -> None:
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("window.__violations") == []
    assert page.errors == []


def test_the_list_shows_every_goal_with_its_status_across_its_pages(page: Any, ui: Server) -> None:
    page.goto(ui.url)
    seen: dict[str, tuple[str, str]] = {}
    for _ in range(10):
        seen |= rows(page)
        following = page.locator("nav.pager a[rel=next]")
        if following.count() == 0:
            break
        following.click()
        page.wait_for_load_state()
    assert page.locator("nav.pager .where").inner_text().endswith("page 3 of 3")
    assert seen == {
        goal_id: (status.replace("_", " "), blocked_on or "—")
        for goal_id, (status, blocked_on) in EXPECTED.items()
    }
    assert_inert(page)


def test_the_list_filters_by_status_with_counts(page: Any, ui: Server) -> None:
    page.goto(ui.url)
    page.locator("nav.filters a", has_text="blocked").first.click()
    page.wait_for_url("**/?status=blocked")
    blocked = {g for g, (status, _) in EXPECTED.items() if status == "blocked"}
    assert set(rows(page)) == blocked
    assert page.locator("nav.pager").count() == 0  # four goals: one page
    assert page.locator("nav.filters a[aria-current=page] .count").inner_text() == "4"
    assert page.locator("h1").inner_text() == "Goals 4 goals blocked"


def test_the_list_shows_rule_wake_up_and_budgets_from_the_summaries(page: Any, ui: Server) -> None:
    page.goto(ui.url + "?status=waiting")
    row = page.locator("tr[data-goal=g-waiting] td")
    assert row.nth(3).inner_text() == "goal.4"
    assert row.nth(5).inner_text().startswith("in 59 m")
    assert row.nth(6).inner_text().strip().endswith("0/5 (+1 uncharged)")
    assert row.nth(7).inner_text().strip().endswith("0/100")


def test_the_list_shows_each_vendor_its_outage_and_no_local_agent(page: Any, ui: Server) -> None:
    page.goto(ui.url)
    section = page.locator("details#upstreams")
    assert section.get_attribute("open") is not None  # a vendor is failing: shown unfolded
    assert section.locator("summary").inner_text() == (
        "Upstreams 1 of 2 vendors failing, 0 goals parked · 9 local agents not listed"
    )
    names = section.locator("tbody tr td:first-child").all_inner_texts()
    assert names == [CLAUDE.name, CODEX.name]  # the scenarios and commands are not vendors
    failing = section.locator("tbody tr", has_text=CLAUDE.name).locator("td")
    assert failing.nth(1).locator(".badge").inner_text() == "failing"
    assert failing.nth(3).inner_text().startswith("in ")  # its next probe
    assert failing.nth(5).inner_text() == "HTTP 529; 0 probes refused"
    healthy = section.locator("tbody tr", has_text=CODEX.name)
    assert healthy.locator(".badge").inner_text() == "healthy"
    page.goto(ui.url + "?status=waiting")
    parked = page.locator("tr[data-goal=g-parked] td")
    assert parked.nth(3).inner_text() == "fleet.3"  # parked on its scenario all the same
    assert_inert(page)


def test_a_goal_page_shows_its_timeline_and_ledger(page: Any, ui: Server) -> None:
    page.goto(ui.url + "goals/g-succeeded")
    runs = page.locator("table.timeline tr.run")
    assert [runs.nth(i).locator("strong").inner_text() for i in range(runs.count())] == [
        "plan p1 (initial)",
        "p1-a attempt 1",
        "p1-a attempt 2",
        "plan p2 (milestone)",
    ]
    outage = runs.nth(1)
    assert outage.locator("td").nth(4).inner_text() == "failed (upstream)"
    assert outage.locator("td").nth(5).inner_text() == "uncharged"
    assert "worker (scripted)" in outage.inner_text()
    outage.locator("summary").click()
    details = outage.locator("details").inner_text()
    assert "effects\nabsent" in details
    assert "vendor-status" in details
    assert "scripted:envelope" in details
    assert runs.nth(2).locator("td").nth(5).inner_text() == "charged"
    ledger = page.locator("table.ledger")
    assert ledger.locator("svg.bar").count() == 4
    assert "no limit" in ledger.locator("tr").nth(4).inner_text()  # cost: no max_cost_usd
    assert "2 of 5 charged, 0 uncharged" in ledger.inner_text()
    assert "1 of 100 charged, 1 uncharged" in ledger.inner_text()
    assert "$0.25" in ledger.inner_text()
    item = page.locator("table.work tr[data-work=p1-a]")
    assert "1 of 3 charged, 1 uncharged" in item.inner_text()
    advice = page.locator("#advice[data-ready=true]")  # at once, or at the next refresh
    assert advice.inner_text().endswith("the goal succeeded; nothing to change")
    assert_inert(page)


def test_a_decision_shows_the_question_literally_and_the_command_that_answers_it(
    page: Any, ui: Server, fleet: Fleet
) -> None:
    page.goto(ui.url + "goals/g-blocked-decision")
    pending = page.locator("#pending")
    question = pending.locator("blockquote.question").inner_text()
    assert question == QUESTION.replace(ANSI, VISIBLE_ANSI)
    assert SCRIPT in question
    assert IMG in question
    assert pending.locator("code.command").inner_text() == (
        f"governor resume g-blocked-decision --reason 'YOUR ANSWER' --store {fleet.db}"
    )
    assert "answer the question" in page.locator("#advice[data-ready=true]").inner_text()
    assert page.locator("#now dd").nth(1).inner_text() == "decision"
    assert_inert(page)


@pytest.mark.parametrize(
    "goal_id", ["g-blocked-work", "g-exhausted", "g-cancelled", "g-in-review", "g-review-plan"]
)
def test_hostile_agent_text_is_shown_inert_on_every_page(
    page: Any, ui: Server, goal_id: str
) -> None:
    page.goto(ui.url + f"goals/{goal_id}")
    for details in page.locator("details").all():
        details.locator("summary").first.click()
    text = page.locator("main").inner_text()
    assert SCRIPT in text
    assert VISIBLE_ANSI in text  # the objective's criteria
    assert page.locator("main script, main img").count() == 0
    assert_inert(page)


def test_review_pages_give_the_exact_commands(page: Any, ui: Server, fleet: Fleet) -> None:
    page.goto(ui.url + "goals/g-review-plan")
    commands = page.locator("#pending code.command").all_inner_texts()
    assert commands == [
        f"governor plan approve g-review-plan p1 --store {fleet.db}",
        f"governor plan reject g-review-plan p1 --reason WHY --store {fleet.db}",
    ]
    page.goto(ui.url + "goals/g-in-review")
    commands = page.locator("#pending code.command").all_inner_texts()
    assert commands[0] == f"governor work accept g-in-review p1-a --store {fleet.db}"


def test_a_huge_error_is_cut_to_its_tail_and_wraps(page: Any, ui: Server) -> None:
    page.goto(ui.url + "goals/g-exhausted")
    runs = page.locator("table.timeline tr.run")
    runs.nth(1).locator("summary").click()
    text = runs.nth(1).locator("pre").first.inner_text()
    assert text.startswith("…")  # the tail is kept: vendors put the reason last
    assert SCRIPT in text
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1400  # nothing runs off the side
    assert_inert(page)


def test_a_reply_with_a_lone_surrogate_never_reached_the_store(page: Any, ui: Server) -> None:
    page.goto(ui.url + "goals/g-exhausted")
    first = page.locator("table.timeline tr.run").first
    first.locator("summary").click()
    # the strict reply scanner (issue 9, item 3) refuses the object holding the surrogate;
    # what it then reports is the object it could read, never the surrogate
    error = first.locator("pre").inner_text()
    assert error.startswith("the reply could not be used:"), error
    assert "lone" not in error
    assert "charged" in first.locator("td").nth(5).inner_text()


def test_an_unknown_goal_is_a_page_that_says_so(page: Any, ui: Server) -> None:
    response = page.goto(ui.url + "goals/no-such-goal")
    assert response.status == 404
    assert "no-such-goal" in page.locator("p.error").inner_text()
    assert page.evaluate("window.__violations") == []
    assert page.errors == [
        "Failed to load resource: the server responded with a status of 404 (Not Found)"
    ]


def test_an_open_page_refreshes_itself_when_the_store_changes(page: Any, tmp_path: Path) -> None:
    own = build_small(tmp_path)
    server = start_ui("--store", str(own), "--refresh-s", "0.2")
    try:
        page.goto(server.url)
        page.evaluate("window.__same_document = true")
        row = page.locator("tr[data-goal=g-ready]")
        assert row.get_attribute("data-status") == "ready"
        cancel = subprocess.run(
            [GOVERNOR, "cancel", "g-ready", "--store", str(own), "--reason", "done with it"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert cancel.returncode == 0, cancel.stderr
        row.and_(page.locator("[data-status=cancelled]")).wait_for(timeout=30_000)
        assert page.evaluate("window.__same_document") is True  # swapped in place, not reloaded
        assert page.locator("#refreshed").inner_text().startswith("refreshed")
        assert_inert(page)
    finally:
        server.stop()


def build_small(root: Path) -> Path:
    """A store with one ready goal (made like the fleet's), for a test that changes it."""
    own = Fleet(root, SqliteEventStore(root / "governor.db"))
    own.goal("g-ready")
    own.store.close()
    return own.db
