"""The blockers of a goal that asks for more budget, and of items awaiting an operator's
retry, name the runnable commands that clear them (issue 33 §4, issue 35 §2): ``grant``
with the amount asked and ``decline`` for a request; ``work retry`` of the item held."""

from __future__ import annotations

import shlex
from datetime import timedelta

from governor.analysis.advice import Situation, advise
from governor.analysis.unblock import unblocking
from governor.core.blockers import blockers, waits_on_person
from governor.core.record_budget import decline_budget, request_budget
from governor.core.rules.decide import decide
from governor.core.verbs import retry_work
from tests.story import Story


def asking(usd: float | None, attempts: int | None, renews_in_s: float | None) -> Story:
    story = Story()
    story.plan("a", "b")
    renews = story.now + timedelta(seconds=renews_in_s) if renews_in_s is not None else None
    return story.add(
        request_budget(
            story.view, budget="pool:team", usd=usd, attempts=attempts, renews_at=renews,
            reason="pool 'team' is spent", at=story.now,
        )
    )  # fmt: skip


def test_a_request_only_a_person_answers_is_a_persons_grant_blocker_with_both_commands():
    story = asking(0.1234567, None, None)
    decision = story.decision()
    [u] = unblocking(story.view, decision, story.now, "/srv/g.db")
    assert (u.blocker.kind, u.blocker.work_id, u.blocker.person, u.blocker.rule) == (
        "grant", None, True, "budget.3"
    )  # fmt: skip
    assert u.blocker.unblocks == 2  # both open items wait on it
    assert u.commands == (
        "governor grant g --usd 0.1234567 --reason REASON --store /srv/g.db",
        "governor decline g --reason REASON --store /srv/g.db",
    )
    assert waits_on_person(blockers(story.view, decision))
    # the figure printed is the one asked, exactly: the command parses back to it
    words = shlex.split(u.commands[0])
    assert float(words[words.index("--usd") + 1]) == 0.1234567


def test_an_attempts_request_names_its_attempts_and_a_declined_one_offers_only_the_grant():
    story = asking(None, 1, None)
    story.tick().add(decline_budget(story.view, reason="not now", at=story.now, actor="ana"))
    [u] = unblocking(story.view, story.decision(), story.now)
    assert u.commands == ("governor grant g --attempts 1 --reason REASON",)


def test_a_pool_that_renews_is_governors_blocker_and_a_grant_moves_it_sooner():
    story = asking(0.5, None, 60.0)
    decision = story.decision()
    [u] = unblocking(story.view, decision, story.now)
    assert (u.blocker.kind, u.blocker.person, u.blocker.rule) == ("grant", False, "budget.2")
    assert "goes on by itself" in u.todo
    assert u.commands[0] == "governor grant g --usd 0.5 --reason REASON"
    assert not waits_on_person(blockers(story.view, decision))


def test_explain_advises_the_grant_and_the_decline():
    story = asking(2.0, None, None)
    decision = decide(story.view, story.now)
    advice = advise(decision, None, (), Situation("g", story.view, story.now))
    assert advice.commands == (
        "governor grant g --usd 2 --reason REASON",
        "governor decline g --reason REASON",
    )
    assert "asks a person for more budget (pool:team)" in advice.text


def test_the_goal_rule_12_blocker_names_each_item_awaiting_an_operators_retry():
    story = Story(retry_blocked=False)
    story.plan("a", "b", "c")
    story.attempt("p1-a")
    story.attempt("p1-b")
    story.attempt("p1-c", outcome="succeeded").accept("p1-c")
    decision = story.decision()
    assert decision.rule == "goal.12", decision.reason
    found = unblocking(story.view, decision, story.now)
    assert [(u.blocker.kind, u.blocker.work_id) for u in found] == [
        ("retry", "p1-a"), ("retry", "p1-b")
    ]  # fmt: skip
    assert [u.commands for u in found] == [
        ("governor work retry g p1-a --reason REASON",),
        ("governor work retry g p1-b --reason REASON",),
    ]
    assert all(u.blocker.person and "awaits an operator's retry" in u.blocker.reason
               for u in found)  # fmt: skip
    # the command advised is taken: the item goes on
    story.tick().add(
        retry_work(story.view, work_id="p1-a", reason="flaky", at=story.now, actor="ana")
    )
    assert story.decision().rule != "goal.12"
