"""The reply protocol of SPEC §7, sentence by sentence, where audit B found a gap."""

from __future__ import annotations

import pytest

from governor.workflow.reply import parse_planner_reply
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
