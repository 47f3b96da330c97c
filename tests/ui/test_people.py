"""The web view puts people first (issue 27 §2), in a real headless Chromium over the fleet.

The list is ordered by what needs attention — a goal waiting on a person first, then the
other stopped ones, the moving ones, the ended ones, each the latest change first — with
a filter for the goals that need a person, the status filters and a search over ids and
titles. Goal pages carry a header (started, last update, duration, cost), paint a charge
as an error only where budget went to a failure, never break a word in the middle, and
show ``explain``'s advice with the goal's real ids.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from governor.store.sqlite import SqliteEventStore
from tests.ui.fleet import EXPECTED, Fleet, vendors
from tests.ui.serve import Server, start_ui
from tests.ui.test_browser import assert_inert, rows

PEOPLE = {g for g, (status, _) in EXPECTED.items() if status == "blocked"} | {
    "g-review-plan",
    "g-in-review",
}
"""The fleet's goals that wait on a person: every blocked one (a decision, a missing
binary, a stop to resume), a plan and work to review."""
RANK = {"budget_exhausted": 1, "ready": 2, "running": 2, "waiting": 2}


def rank(goal_id: str) -> int:
    status, _ = EXPECTED[goal_id]
    return 0 if goal_id in PEOPLE else RANK.get(status, 3)


def test_the_list_puts_people_first_then_stopped_moving_and_ended_goals(
    page: Any, ui: Server
) -> None:
    page.goto(ui.url)
    order: list[str] = []
    groups: list[str] = []
    for _ in range(5):
        order += page.locator("table.goals tbody tr[data-goal]").evaluate_all(
            "rows => rows.map(r => r.dataset.goal)"
        )
        groups += page.locator("table.goals tr.group th").all_inner_texts()
        following = page.locator("nav.pager a[rel=next]")
        if following.count() == 0:
            break
        following.click()
        page.wait_for_load_state()
    assert sorted(order) == sorted(EXPECTED)  # every goal, once
    assert set(order[: len(PEOPLE)]) == PEOPLE
    assert [rank(g) for g in order] == sorted(rank(g) for g in order)
    assert groups[0] == "WAITING ON A PERSON" or groups[0] == "waiting on a person"
    assert {g.lower() for g in groups} == {
        "waiting on a person",
        "stopped: out of budget",
        "moving: running, waiting or ready",
        "ended",
    }
    assert_inert(page)


def test_within_a_group_the_latest_change_comes_first(page: Any, ui: Server) -> None:
    page.goto(ui.url + "?status=blocked")
    times = page.locator("tr[data-goal] td.updated time").evaluate_all(
        "ts => ts.map(t => t.getAttribute('datetime'))"
    )
    # every blocked goal waits on a person (issue 35): one group, the latest change first
    assert times == sorted(times, reverse=True)


def test_the_needs_a_person_filter_shows_only_them_with_their_count(page: Any, ui: Server) -> None:
    page.goto(ui.url)
    person = page.locator("nav.filters a", has_text="needs a person")
    assert person.locator(".count").inner_text() == str(len(PEOPLE))
    person.click()
    page.wait_for_url("**/?needs=person")
    shown = rows(page)  # five a page
    assert set(shown) <= PEOPLE
    assert len(shown) == min(5, len(PEOPLE))
    shown = page.locator("nav.filters a[aria-current=page]").inner_text()
    assert shown == f"needs a person {len(PEOPLE)}"
    assert page.locator("h1 .sub").inner_text() == f"{len(PEOPLE)} goals that wait on a person"
    assert_inert(page)


def test_the_search_box_finds_goals_by_id_and_title_within_the_filter(
    page: Any, ui: Server
) -> None:
    page.goto(ui.url)
    page.fill("input[name=q]", "DECISION")
    page.press("input[name=q]", "Enter")
    page.wait_for_url("**/?q=DECISION")
    assert set(rows(page)) == {"g-blocked-decision"}
    assert page.input_value("input[name=q]") == "DECISION"
    page.locator("nav.filters a", has_text="blocked").first.click()  # the filter keeps it
    page.wait_for_url("**/?status=blocked&q=DECISION")
    assert set(rows(page)) == {"g-blocked-decision"}
    page.fill("input[name=q]", "Goal g-blocked")  # titles are "Goal <id>"
    page.press("input[name=q]", "Enter")
    page.wait_for_url("**/?status=blocked&q=Goal+g-blocked")
    assert set(rows(page)) == {g for g, (s, _) in EXPECTED.items() if s == "blocked"}
    page.fill("input[name=q]", "no such goal")
    page.press("input[name=q]", "Enter")
    assert page.locator("p.empty").inner_text() == "No goal's id or title holds that text."
    page.locator("form.search a", has_text="clear").click()
    page.wait_for_url("**/?status=blocked")
    assert len(rows(page)) == 4
    assert_inert(page)


def test_a_goal_page_has_a_header_with_start_last_update_duration_and_cost(
    page: Any, ui: Server
) -> None:
    page.goto(ui.url + "goals/g-succeeded")
    facts = dict(
        zip(
            page.locator("#header dt").all_inner_texts(),
            page.locator("#header dd").all_inner_texts(),
            strict=True,
        )
    )
    assert list(facts) == ["started", "last update", "duration", "cost"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ", facts["started"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(.+ ago\)", facts["last update"])
    assert re.fullmatch(r"[\d.]+ s|\d+ m \d+ s", facts["duration"])  # ended: no "so far"
    assert facts["cost"] == "$0.25"
    page.goto(ui.url + "goals/g-waiting")
    assert page.locator("#header dd").nth(2).inner_text().endswith("so far")


def color(page: Any, selector: str) -> str:
    return str(page.locator(selector).first.evaluate("e => getComputedStyle(e).color"))


def test_a_charge_is_painted_as_an_error_only_on_a_failure(page: Any, ui: Server) -> None:
    page.goto(ui.url + "goals/g-succeeded")
    success = page.locator("tr.run", has_text="p1-a attempt 2")
    assert success.locator(".charged").inner_text() == "charged"
    calm = success.locator(".charged").evaluate("e => getComputedStyle(e).color")
    failed_outcome = color(page, ".o-failed")
    assert calm != failed_outcome  # not the red of a failure
    assert calm == color(page, ".who")  # the muted text of the page
    page.goto(ui.url + "goals/g-blocked-work")
    spent = color(page, "tr.run .charged.spent")
    assert spent not in (calm, color(page, ".o-failed"))  # spent budget: its own colour


WORDS = """() => {
  const broken = [];
  const walker = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest("pre, code")) { continue; }
    for (const m of node.data.matchAll(/[^\\s\\-/_.,:;()]+/g)) {
      if (m[0].length > 30) { continue; }  // a token longer than a line may break
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
      if (tops.size > 1) { broken.push(m[0]); }
    }
  }
  return broken;
}"""


@pytest.mark.parametrize("width", [1400, 1000])
def test_no_page_breaks_a_word_in_the_middle(page: Any, ui: Server, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    for path in ["", "?page=2", "?page=3", *(f"goals/{g}" for g in EXPECTED)]:
        page.goto(ui.url + path)
        for details in page.locator("table.timeline details").all():
            details.locator("summary").first.click()
        assert page.evaluate(WORDS) == [], path


def test_the_advice_names_the_goal_and_the_store(page: Any, ui: Server, fleet: Fleet) -> None:
    page.goto(ui.url + "goals/g-blocked-decision")
    advice = page.locator("#advice[data-ready=true] p.advice")
    commands = advice.locator("code").all_inner_texts()
    assert commands[0] == f"governor resume g-blocked-decision --reason ANSWER --store {fleet.db}"
    assert "GOAL" not in advice.inner_text()


def test_the_upstreams_are_folded_while_every_vendor_is_healthy(page: Any, tmp_path: Path) -> None:
    own = Fleet(tmp_path, SqliteEventStore(tmp_path / "governor.db"))
    own.goal("g-ready")
    vendors(own.store, failing=False)
    own.store.close()
    server = start_ui("--store", str(own.db))
    try:
        page.goto(server.url)
        section = page.locator("details#upstreams")
        assert section.get_attribute("open") is None
        assert section.locator("summary").inner_text() == "Upstreams 2 vendors, all healthy"
        assert not section.locator("table").is_visible()
        box = section.bounding_box()
        assert box is not None
        assert box["height"] < 40  # one line, not a quarter of the screen
        section.locator("summary").click()
        assert section.locator("tbody tr").count() == 2
        assert_inert(page)
    finally:
        server.stop()
