"""Grants from the web view (SPEC §13.7, issue 33 §4 and §8): the pool page (its spend of
its limit, its goals, the requests waiting on it) and, with ``--allow-actions``, the forms
that grant or decline — on a goal waiting on a grant and on its pool's page — run as
``governor grant|decline`` runs them (``governor.drive.grants``), recorded as the person.

Agents are real subprocesses (the scripted harness) reporting each call's cost; the server
is the real ``governor ui`` process, spoken to over its socket (raw HTTP) and through a
real headless Chromium.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.e2e.cli import Project
from tests.e2e.test_pools import ok, pooled_goal
from tests.ui.serve import start_ui
from tests.ui.test_acting_http import CSRF, Browser

TOKEN = "alice-token-0123456789"


def waiting(tmp_path: Path, *goal_ids: str, pool: str = "small") -> Project:
    """Goals in a $0.15 pool that grants nothing by itself: each stops asking a person."""
    project = Project(tmp_path)
    ok(project, "pool", "set", pool, "--usd", "0.15", "--auto-usd", "0.01")
    for goal_id in goal_ids:
        pooled_goal(project, goal_id, [pool])
        stopped = project.gov("run", goal_id)
        assert stopped.returncode == 10, stopped.stderr
    return project


def answers(project: Project, goal_id: str) -> list[dict[str, Any]]:
    return [
        e for e in project.events(goal_id) if e["type"] in ("budget.granted", "budget.declined")
    ]


def pool_events(project: Project, pool: str) -> list[dict[str, Any]]:
    lines = ok(project, "pool", "show", pool, "--events").splitlines()
    return [json.loads(x) for x in lines]


def grant_fields(token: str, **fields: str) -> dict[str, str]:
    return {"csrf": token, "form": "grant", "verb": "grant", "reason": "release", **fields}


@pytest.fixture
def two(tmp_path: Path) -> Project:
    return waiting(tmp_path, "g1", "g2")


def test_the_pool_page_shows_its_spend_its_goals_and_the_requests_waiting_on_it(two):
    ui = start_ui("--store", two.env["GOVERNOR_STORE"])
    try:
        browser = Browser(ui, cookie=False)
        status, _, listed = browser.request("GET", "/pools")
        assert status == 200
        assert 'data-pool="small"' in listed
        assert "$0.2 of $0.15" in listed  # each goal's call spent $0.1: the pool is over
        status, _, page = browser.request("GET", "/pools/small")
        assert status == 200
        spend = re.search(r'<section id="spend">(.*?)</section>', page, re.S)
        assert spend is not None
        assert "$0.2 of $0.15" in spend.group(1)
        requests = re.search(r'<section id="requests">(.*?)</section>', page, re.S)
        assert requests is not None
        assert 'Open requests <span class="sub">(2)</span>' in requests.group(0)
        store = two.env["GOVERNOR_STORE"]
        for goal_id in ("g1", "g2"):
            assert f'data-goal="{goal_id}"' in requests.group(1)
            assert f"governor grant {goal_id} --usd 0.1 --reason REASON --store {store}" in (
                requests.group(1)
            )
        assert 'name="csrf"' not in page  # read-only: no form
        assert browser.request("GET", "/pools/nope")[0] == 404
        status, _, goal_page = browser.request("GET", "/goals/g1")
        assert 'href="/pools/small"' in goal_page
    finally:
        ui.stop()


def test_a_grant_from_a_goals_page_moves_it_as_the_cli_would(two, tmp_path: Path):
    ui = start_ui("--store", two.env["GOVERNOR_STORE"], "--allow-actions", "--actor", "alice")
    try:
        browser = Browser(ui)
        status, _, page = browser.request("GET", "/goals/g1")
        form = re.search(r'<form[^>]*data-form="grant".*?</form>', page, re.S)
        assert form is not None, "a goal waiting on a grant offers the grant form"
        assert 'name="usd"' in form.group(0)
        assert 'value="0.1"' in form.group(0)  # the ask
        before = len(two.events("g1"))
        # refused as the command refuses it: nothing recorded
        for fields, code, says in (
            ({"usd": "-1"}, 400, "--usd"),
            ({"usd": "lots"}, 400, "is not a number"),
            ({"reason": " "}, 400, "needs its reason"),
            ({"expires": "fortnight"}, 400, "--expires"),
        ):
            token = browser.form_token("g1")
            status, _, text = browser.post("g1", grant_fields(token, **fields))
            assert status == code, text
            assert says in text
        assert len(two.events("g1")) == before
        status, headers, _ = browser.post(
            "g1", grant_fields(browser.form_token("g1"), usd="1", expires="2h")
        )
        assert (status, headers["location"]) == (303, "/goals/g1?done=grant")
        [granted] = answers(two, "g1")
        assert (granted["actor"], granted["reason"], granted["usd"]) == ("ui:alice", "release", 1)
        assert granted["expires_at"] is not None
        [on_pool] = [e for e in pool_events(two, "small") if e["type"] == "pool.granted"]
        assert (on_pool["actor"], on_pool["goal_id"]) == ("ui:alice", "g1")
        # a second grant: the goal is not waiting any more (409), nothing recorded
        status, _, text = browser.post("g1", grant_fields(browser.form_token("g1"), usd="1"))
        assert status == 409
        assert "not waiting for more budget" in text
        assert len(answers(two, "g1")) == 1
    finally:
        ui.stop()
    assert two.gov("run", "g1").returncode == 0
    assert two.status("g1")["status"] == "succeeded"


def test_the_pool_page_grants_to_the_pool_and_declines_what_waits_on_it(tmp_path: Path):
    project = waiting(tmp_path, "g1", "g2")
    ui = start_ui("--store", project.env["GOVERNOR_STORE"], "--allow-actions", "--actor", "bob")
    try:
        browser = Browser(ui)

        def post(fields: dict[str, str], token_of: str = "/pools/small") -> tuple[int, Any, str]:
            page = browser.request("GET", token_of)[2]
            token = CSRF.search(page)
            assert token is not None
            body = urlencode({"csrf": token.group(1), "form": "pool", **fields}).encode()
            return browser.request(
                "POST", "/pools/small/act", body,
                {"Content-Type": "application/x-www-form-urlencoded", "Origin": browser.origin},
            )  # fmt: skip

        # a goal page's form token does not spend on the pool, nor is a grant without amount
        status, _, _ = post({"verb": "grant", "usd": "1", "reason": "x"}, token_of="/goals/g1")
        assert status == 403
        status, _, text = post({"verb": "grant", "reason": "x"})
        assert status == 400
        assert "needs an amount" in text
        assert [e for e in pool_events(project, "small") if e["type"] == "pool.granted"] == []
        status, headers, _ = post({"verb": "decline", "reason": "not this week"})
        assert (status, headers["location"]) == (303, "/pools/small?done=decline&n=2")
        assert [len(answers(project, g)) for g in ("g1", "g2")] == [1, 1]
        status, headers, _ = post({"verb": "grant", "usd": "5", "reason": "after all"})
        assert (status, headers["location"]) == (303, "/pools/small?done=grant&n=2")
        for goal_id in ("g1", "g2"):
            assert [(e["type"], e["actor"]) for e in answers(project, goal_id)] == [
                ("budget.declined", "ui:bob"), ("budget.granted", "ui:bob")
            ]  # fmt: skip
        status, _, page = browser.request("GET", "/pools/small?done=grant&n=2")
        assert "recorded: grant, by ui:bob" in page
        assert 'Open requests <span class="sub">(0)</span>' in page
    finally:
        ui.stop()
    for goal_id in ("g1", "g2"):
        assert project.gov("run", goal_id).returncode == 0


def test_a_person_grants_from_the_page_in_a_browser_and_the_goal_finishes(
    page: Any, tmp_path: Path
) -> None:
    project = waiting(tmp_path, "g1")
    users = tmp_path / "users.txt"
    users.write_text(f"alice {TOKEN}\n")
    ui = start_ui(
        "--store", project.env["GOVERNOR_STORE"], "--allow-actions", "--users", str(users)
    )
    try:
        page.goto(f"{ui.url}?token={TOKEN}")
        page.goto(ui.at("/pools/small"))
        request = page.locator("#requests li[data-goal=g1]")
        assert "asks for $0.1" in request.inner_text()
        request.get_by_role("link", name="answer it on its page").click()
        page.wait_for_url("**/goals/g1#blockers")
        blocker = page.locator("#blockers li[data-kind=grant]")
        assert blocker.locator("input[name=usd]").input_value() == "0.1"
        blocker.locator("input[name=usd]").fill("0.5")
        blocker.locator("textarea[name=reason]").fill("the release needs it")
        blocker.locator("button[value=grant]").click()
        page.wait_for_url("**/goals/g1?done=grant")
        assert page.locator("#action-done").inner_text() == "recorded: grant, by ui:alice"
        assert page.locator("#blockers li[data-kind=grant]").count() == 0
        assert page.evaluate("window.__violations") == []
    finally:
        ui.stop()
    [granted] = answers(project, "g1")
    assert (granted["actor"], granted["usd"]) == ("ui:alice", 0.5)
    finished = project.gov("run", "g1")
    assert finished.returncode == 0, finished.stderr
    assert project.status("g1")["status"] == "succeeded"
