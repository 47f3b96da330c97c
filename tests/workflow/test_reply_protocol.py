"""The reply protocol of SPEC §7, sentence by sentence, where audit B found a gap."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from governor.workflow.reply import (
    WorkerReply,
    acceptance_report,
    parse_planner_reply,
    parse_worker_reply,
    passed,
)
from tests.story import Story

WORK = '[{"key": "a", "title": "A", "objective": "o", "acceptance": ["x"]}]'


@pytest.mark.parametrize(
    ("plan_id", "problems"),
    [
        ("", None),
        ('"plan_id": "p1", ', None),
        ('"plan_id": null, ', None),
        ('"plan_id": "p7", ', ["plan_id: this is plan 'p1', not 'p7' (or leave it out)"]),
    ],
)
def test_a_proposal_may_carry_the_plan_id_it_answers(
    plan_id: str, problems: list[str] | None
) -> None:
    """SPEC §7: "A planner answers a proposal object (§3 `plan.proposed` fields)" — which
    include `plan_id`. Before, a proposal that named its plan was refused ("plan_id: Extra
    inputs are not permitted"), retried and charged."""
    s = Story()
    s.request()
    reply = f'{{{plan_id}"decision": "apply", "rationale": "r", "work": {WORK}}}'
    answer = parse_planner_reply(reply, s.view)
    if problems is None:
        assert not isinstance(answer, list), answer
        assert answer.proposal is not None
        assert [w.key for w in answer.proposal.work] == ["a"]
    else:
        assert answer == problems


def test_other_unknown_fields_of_a_proposal_are_still_refused() -> None:
    s = Story()
    s.request()
    answer = parse_planner_reply(f'{{"decision": "apply", "colour": 1, "work": {WORK}}}', s.view)
    assert answer == ["colour: Extra inputs are not permitted"]


def _report(criteria: list[str], reported: list[tuple[str, str]]) -> tuple[bool, Any]:
    text = orjson.dumps(
        {
            "status": "done",
            "summary": "s",
            "acceptance": [{"criterion": c, "status": s} for c, s in reported],
        }
    ).decode()
    reply = parse_worker_reply(text)
    assert isinstance(reply, WorkerReply)
    report = acceptance_report(criteria, reply)
    return passed(reply, report), report


@pytest.mark.parametrize(
    ("reported", "ok", "unsatisfied", "unknown"),
    [
        ([("it works", "satisfied")], True, (), ()),
        (
            [("it works", "satisfied"), ("docs written", "unsatisfied")],
            False,
            ("docs written",),
            (),
        ),
        ([("it works", "satisfied"), ("docs written", "unknown")], False, (), ("docs written",)),
        ([("it works", "satisfied"), ("docs written", "satisfied")], True, (), ()),
        ([("It  Works", "unsatisfied")], False, ("it works",), ()),
        ([("worked", "satisfied")], True, (), ()),  # one of one: paired by position
        ([], False, (), ("it works",)),  # not reported: unknown
    ],
)
def test_no_criterion_the_worker_reports_may_be_unsatisfied_or_unknown(
    reported: list[tuple[str, str]],
    ok: bool,
    unsatisfied: tuple[str, ...],
    unknown: tuple[str, ...],
) -> None:
    """SPEC §7: "an attempt succeeds only when the status is `done` and no criterion is
    unsatisfied or unknown". Before, a criterion the worker reported beyond the item's own
    as unsatisfied was dropped, and the attempt succeeded."""
    succeeded, report = _report(["it works"], reported)
    assert succeeded is ok
    assert report.unsatisfied == unsatisfied
    assert report.unknown == unknown
