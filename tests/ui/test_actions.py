"""Acting from the web view (issue 27 §3), in a real headless Chromium.

``governor ui --allow-actions --actor alice`` serves the acting fleet (``fleet.build_acting``:
goals made by real ``governor run`` processes and the scripted harness). A person opens
the token link once, then answers questions, reviews work and plans, retries, abandons
and gives up items, raises a budget and cancels a goal from the pages; each action is
the CLI's verb, recorded as ``ui:alice``, and the goals that can go on are driven on by
real ``governor run`` processes afterwards. Refusals are the CLI's one line on the page,
with nothing recorded and the form filled in as it was sent.
"""

from __future__ import annotations

import subprocess
from typing import Any

from governor.store.sqlite import SqliteEventStore
from tests.ui.fleet import Fleet
from tests.ui.serve import GOVERNOR, Server
from tests.ui.test_browser import assert_inert


def history(fleet: Fleet, goal_id: str) -> list[Any]:
    with SqliteEventStore(fleet.db, read_only=True) as store:
        return list(store.load(goal_id))


def open_goal(page: Any, ui: Server, goal_id: str) -> None:
    """The goal's page, in a browser that opened the token link."""
    page.goto(ui.token_link)
    page.goto(ui.at(f"/goals/{goal_id}"))


def acted(page: Any, goal_id: str, verb: str) -> None:
    page.wait_for_url(f"**/goals/{goal_id}?done={verb.replace(' ', '%20')}")
    assert page.locator("#action-done").inner_text() == f"recorded: {verb}, by ui:alice"


def test_a_person_answers_the_planners_question_and_the_goal_moves_on(
    page: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "ask-planner")
    assert page.locator("#pending blockquote").inner_text() == "Postgres or SQLite?"
    form = page.locator("#pending form[data-form=answer]")
    form.locator("textarea").fill("SQLite, in one file")
    form.locator("button[value=answer]").click()
    acted(page, "ask-planner", "answer")
    last = history(acting_fleet, "ask-planner")[-1]
    assert (last.type, last.actor, last.reason) == (
        "goal.resumed",
        "ui:alice",
        "SQLite, in one file",
    )
    note = page.locator("tr.note", has_text="goal resumed")
    assert "ui:alice" in note.inner_text()
    assert "SQLite, in one file" in note.inner_text()
    assert page.locator("#pending").count() == 0  # nothing waits on a person any more
    ran = acting_fleet.cli_run("ask-planner")  # a real runner takes it from there
    assert ran.returncode == 0, ran.stdout + ran.stderr
    page.locator("#now[data-status=succeeded]").wait_for(timeout=30_000)  # the page refreshed
    assert_inert(page)


def test_a_person_answers_a_workers_question_and_the_item_is_retried(
    page: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "ask-worker")
    assert page.locator("#pending p").first.inner_text() == "p1-a's worker asks:"
    page.fill("#pending textarea", "Postgres")
    page.click("#pending button[value=answer]")
    acted(page, "ask-worker", "answer")
    last = history(acting_fleet, "ask-worker")[-1]
    assert (last.type, last.actor, last.reason) == ("work.retried", "ui:alice", "Postgres")
    ran = acting_fleet.cli_run("ask-worker")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    page.locator("#now[data-status=succeeded]").wait_for(timeout=30_000)


def test_a_person_accepts_passed_work_and_the_goal_completes(
    page: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "review-work")
    page.click("#pending form[data-form='review:p1-a'] button[value='work accept']")
    acted(page, "review-work", "work accept")
    last = history(acting_fleet, "review-work")[-1]
    assert (last.type, last.actor, last.work_id) == ("work.accepted", "ui:alice", "p1-a")
    ran = acting_fleet.cli_run("review-work")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    page.locator("#now[data-status=succeeded]").wait_for(timeout=30_000)


def test_a_person_rejects_passed_work_with_what_to_change(
    page: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "review-work-2")
    form = page.locator("#pending form[data-form='review:p1-a']")
    form.locator("button[value='work retry']").click()  # no text: the CLI's refusal
    assert page.locator("#action-error").inner_text() == "error: work retry needs a reason"
    assert history(acting_fleet, "review-work-2")[-1].type == "attempt.finished"  # nothing
    form = page.locator("#pending form[data-form='review:p1-a']")
    form.locator("textarea").fill("use <b>bold</b> headings")
    form.locator("button[value='work retry']").click()
    acted(page, "review-work-2", "work retry")
    last = history(acting_fleet, "review-work-2")[-1]
    assert (last.type, last.reason) == ("work.retried", "use <b>bold</b> headings")
    assert page.errors == [  # the refusal was a 409, as the console says; nothing else
        "Failed to load resource: the server responded with a status of 409 (Conflict)"
    ]
    page.errors.clear()
    assert_inert(page)


def test_a_person_approves_one_plan_and_rejects_another(
    page: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "review-plan")
    page.click("#pending button[value='plan approve']")
    acted(page, "review-plan", "plan approve")
    last = history(acting_fleet, "review-plan")[-1]
    assert (last.type, last.actor) == ("plan.applied", "ui:alice")
    open_goal(page, acting_ui, "review-plan-2")
    page.fill("#pending textarea", "split b in two")
    page.click("#pending button[value='plan reject']")
    acted(page, "review-plan-2", "plan reject")
    last = history(acting_fleet, "review-plan-2")[-1]
    assert (last.type, last.actor, last.reason) == ("plan.rejected", "ui:alice", "split b in two")


def test_a_person_retries_a_blocked_item(page: Any, acting_ui: Server, acting_fleet: Fleet) -> None:
    open_goal(page, acting_ui, "blocked-work")
    page.click("#act-items > summary")
    item = page.locator("#act-items li[data-work=p1-a]")
    assert item.locator("button").all_inner_texts() == ["retry", "give the item up"]
    item.locator("textarea").fill("the tests were flaky; try again")
    item.locator("button[value='work retry']").click()
    acted(page, "blocked-work", "work retry")
    last = history(acting_fleet, "blocked-work")[-1]
    assert (last.type, last.work_id, last.actor) == ("work.retried", "p1-a", "ui:alice")


def test_a_person_abandons_an_attempt_in_flight(
    page: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "running")
    page.click("#act-items > summary")
    item = page.locator("#act-items li[data-work=p1-a]")
    assert item.locator("button").all_inner_texts() == ["abandon the attempt"]
    item.locator("textarea").fill("it hangs")
    item.locator("button[value='work abandon']").click()
    acted(page, "running", "work abandon")
    last = history(acting_fleet, "running")[-1]
    assert (last.type, last.outcome, last.actor) == ("attempt.finished", "abandoned", "ui:alice")
    row = page.locator("tr.run", has_text="p1-a attempt 1")
    assert row.locator("td").nth(4).inner_text() == "abandoned"


def test_a_person_raises_a_spent_budget_after_a_refusal_that_keeps_the_form(
    page: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "exhausted")
    before = len(history(acting_fleet, "exhausted"))
    page.click("#act-raise > summary")
    page.select_option("#raise-ledger", "replans")
    page.fill("#raise-to", "1")
    page.fill("#act-raise textarea", "one more try")
    page.click("#act-raise button[value=raise]")
    error = page.locator("#action-error")
    assert (
        error.inner_text() == "error: exhausted: replans is 2; the new limit must be higher, not 1"
    )
    assert len(history(acting_fleet, "exhausted")) == before  # nothing recorded
    assert page.locator("#act-raise").get_attribute("open") is not None  # shown as it was left
    assert page.input_value("#act-raise textarea") == "one more try"  # kept as sent
    assert page.input_value("#raise-to") == "1"
    page.fill("#raise-to", "4")
    page.click("#act-raise button[value=raise]")
    acted(page, "exhausted", "raise")
    last = history(acting_fleet, "exhausted")[-1]
    assert (last.type, last.ledger, last.to, last.reason) == (
        "budget.raised",
        "replans",
        4,
        "one more try",
    )
    assert page.locator("#now").get_attribute("data-status") != "budget_exhausted"


def test_a_person_cancels_a_goal_after_ticking_the_box(
    page: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "ready-1")
    page.click("#act-cancel > summary")
    page.fill("#act-cancel textarea", "not needed any more")
    page.click("#act-cancel button[value=cancel]")  # the box is not ticked: the browser stops it
    assert history(acting_fleet, "ready-1")[-1].type == "goal.created"
    page.check("#act-cancel input[name=confirm]")
    page.click("#act-cancel button[value=cancel]")
    acted(page, "ready-1", "cancel")
    last = history(acting_fleet, "ready-1")[-1]
    assert (last.type, last.actor, last.reason) == (
        "goal.cancelled",
        "ui:alice",
        "not needed any more",
    )
    assert page.locator("#now").get_attribute("data-status") == "cancelled"
    assert page.locator("#act").inner_text().endswith("the goal cancelled: nothing to do")


def test_a_stale_form_is_refused_with_the_clis_error(
    page: Any, browser: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "review-twice")
    other = browser.new_page()
    try:
        other.goto(acting_ui.at("/goals/review-twice"))  # the same person, a second tab
        page.click("#pending button[value='work accept']")
        acted(page, "review-twice", "work accept")
        seq = len(history(acting_fleet, "review-twice"))
        other.click("#pending button[value='work accept']")
        assert other.locator("#action-error").inner_text() == (
            "error: review-twice: p1-a is already accepted"
        )
        assert len(history(acting_fleet, "review-twice")) == seq  # nothing more recorded
    finally:
        other.close()


def test_a_form_being_filled_in_is_not_swapped_away_by_the_refresh(
    page: Any, acting_ui: Server, acting_fleet: Fleet
) -> None:
    open_goal(page, acting_ui, "ready-7")
    page.click("#act-cancel > summary")
    page.fill("#act-cancel textarea", "half an answer")
    raised = subprocess.run(
        [GOVERNOR, "raise", "ready-7", "--ledger", "replans", "--to", "7", "--reason", "more",
         "--store", str(acting_fleet.db)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert raised.returncode == 0, raised.stderr
    page.locator("#refreshed", has_text="not refreshed while you edit a form").wait_for(
        timeout=30_000
    )
    assert page.input_value("#act-cancel textarea") == "half an answer"
    assert page.locator("tr.note", has_text="replans budget raised").count() == 0
    page.fill("#act-cancel textarea", "")  # nothing typed any more: the page catches up
    page.locator("body").click()
    page.locator("tr.note", has_text="replans budget raised to 7").wait_for(timeout=30_000)


def test_without_the_access_token_a_page_offers_no_form(page: Any, acting_ui: Server) -> None:
    page.context.clear_cookies()
    page.goto(acting_ui.at("/goals/ready-8"))
    act = page.locator("#act[data-ready=false]")
    assert "open the address with the access token" in act.inner_text()
    assert page.locator("main form[method=post]").count() == 0
    response = page.goto(acting_ui.url + "?token=not-the-token")
    assert response is not None
    assert response.status == 403
    page.goto(acting_ui.token_link)
    assert page.url == acting_ui.url  # the token is not left in the address
    page.goto(acting_ui.at("/goals/ready-8"))
    assert page.locator("#act[data-ready=true]").count() == 1
