"""Every ``--json`` shape that holds a decision holds its rule, but replay's pinned line."""

from __future__ import annotations

from governor.analysis.explain import explain
from governor.analysis.whatif import whatif
from governor.core.policy import Policy
from governor.render import records
from tests.story import Story


def _stopped() -> Story:
    s = Story(max_attempts=1, max_replans=1)
    s.plan("a")
    s.attempt("p1-a")
    return s


def test_a_decision_record_leads_with_its_rule_then_the_replay_fields() -> None:
    decision = _stopped().decision()
    record = records.decision_record(decision)
    assert list(record) == ["rule", *records.decision_fields(decision)]
    assert record["rule"] == decision.rule == "goal.11"


def test_every_record_of_a_decision_names_the_rule() -> None:
    story = _stopped()
    decision = story.decision()
    result = whatif(story.events, Policy(max_attempts=1, max_replans=0))
    shapes = {
        "run": records.run_record("g", "stopped", decision),
        "verb": records.verb_record("g", decision),
        "status": records.status_record(story.view, decision, None),
        "validate": records.valid_record("h.jsonl", 3, "g", [], decision),
        "explain": records.explanation_record(explain(story.events)),
        "what-if final": records.whatif_record("h", {}, result)["final"],
        "what-if recorded": records.whatif_record("h", {}, result)["recorded_final"],
        "what-if divergence": records.whatif_record("h", {}, result)["divergence"],
    }
    missing = [name for name, shape in shapes.items() if "rule" not in shape]
    assert missing == []


def test_probe_says_what_a_person_must_do_about_an_account_or_a_vendor_never_reached() -> None:
    from governor.core.classify import SpawnResult, classify
    from governor.core.evidence import nothing_happened
    from governor.render.text import format_probe

    absent = nothing_happened("codex:jsonl", "r")
    billing = classify(
        SpawnResult(ok=False, vendor_status=429, vendor_code="insufficient_quota", evidence=absent)
    )
    assert "class environment (uncharged), rule billing" in format_probe(billing)
    assert "out of credit or quota: add credit" in format_probe(billing)
    never = classify(
        SpawnResult(
            ok=False, connection="unreachable", endpoint="http://127.0.0.1:9/v1", evidence=absent
        )
    )
    assert "never reached http://127.0.0.1:9/v1: check the profile's base URL" in format_probe(
        never
    )
