"""Prompts: strict rendering, golden files, and how prior failures are told.

Set ``GOVERNOR_UPDATE_GOLDEN=1`` to rewrite the golden files after a deliberate change.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from governor.core import record
from governor.core.event_fields import Harness, Profile
from governor.core.evidence import UNKNOWN
from governor.core.fold import project
from governor.workflow.briefs import planner_prompt, worker_prompt
from governor.workflow.prompts import PromptError, render, template
from tests.story import ABSENT, T0, Story

GOLDEN = Path(__file__).resolve().parent.parent / "golden_prompts"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("GOVERNOR_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with GOVERNOR_UPDATE_GOLDEN=1"
    assert text == path.read_text()


def test_rendering_refuses_a_missing_variable() -> None:
    with pytest.raises(PromptError, match=r"missing variables \['acceptance'"):
        render("worker", **{v: "x" for v in template("worker").variables if v != "acceptance"})


def test_rendering_refuses_an_unused_variable() -> None:
    values = {v: "x" for v in template("worker").variables}
    with pytest.raises(PromptError, match=r"unused variables \['colour'\]"):
        render("worker", **values, colour="red")


def test_a_template_must_declare_what_it_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from governor.workflow import prompts

    (tmp_path / "planner.md").write_text("---\nvariables: [a]\n---\n{{a}} and {{b}}\n")
    monkeypatch.setattr(prompts, "prompts_dir", lambda: tmp_path)
    prompts.template.cache_clear()
    try:
        with pytest.raises(PromptError, match=r"declared \['a'\] but the body uses \['a', 'b'\]"):
            prompts.template("planner")
    finally:
        prompts.template.cache_clear()


def story_for_prompts() -> Story:
    s = Story()
    s.plan_fails("upstream", error="HTTP/1.1 503 Service Unavailable")
    s.tick(60)
    s.plan("schema", "api", deps={"api": ("schema",)})
    s.succeed("p2-schema")
    return s


def test_golden_planner_prompt_after_an_outage() -> None:
    s = Story()
    s.plan_fails("upstream", error="HTTP/1.1 503 Service Unavailable")
    text = planner_prompt(s.view, "initial", s.now)
    assert "lost to an outside failure" in text
    assert "503" not in text  # the vendor's refusal is not the planner's story
    check_golden("planner-after-outage", text)


def test_golden_planner_prompt_for_a_replan() -> None:
    s = story_for_prompts()
    s.attempt("p2-api", error="tests failed: 3 of 12").attempt(
        "p2-api", error="tests failed: 2 of 12"
    )
    s.attempt("p2-api", error="tests failed: 1 of 12")
    text = planner_prompt(s.view, "replan", s.now)
    assert "p2-api exhausted its attempts" in text
    assert "tests failed: 1 of 12" in text
    check_golden("planner-replan", text)


def test_golden_worker_prompt_after_a_lost_attempt() -> None:
    s = story_for_prompts()
    s.attempt(
        "p2-api",
        failure_class="upstream",
        evidence=ABSENT,
        error="HTTP/1.1 503 Service Unavailable",
    )
    text = worker_prompt(s.view, s.view.work["p2-api"])
    assert "was lost to an outside failure" in text
    assert "Nothing you did caused it" in text
    assert "503" not in text
    assert "p2-schema (Schema) is done" in text
    check_golden("worker-after-lost-attempt", text)


def test_golden_worker_prompt_after_a_charged_failure_and_an_answer() -> None:
    s = story_for_prompts()
    s.attempt("p2-api", failure_class="decision", evidence=UNKNOWN, error="Postgres or SQLite?")
    s.op("retry_work", work_id="p2-api", reason="Use SQLite.")
    text = worker_prompt(s.view, s.view.work["p2-api"])
    assert "stopped to ask a person: Postgres or SQLite?" in text
    assert "Use SQLite." in text
    check_golden("worker-after-decision", text)


def test_an_upstream_failure_that_fails_the_gate_is_told_as_a_failure() -> None:
    s = story_for_prompts()
    s.attempt(
        "p2-api",
        failure_class="upstream",
        evidence=UNKNOWN,
        error="HTTP/1.1 503 Service Unavailable",
    )
    text = worker_prompt(s.view, s.view.work["p2-api"])
    assert "Attempt 1 failed: HTTP/1.1 503 Service Unavailable" in text


def test_the_planner_hears_about_the_last_finished_plan_even_once_a_new_one_is_requested() -> None:
    s = Story()
    s.plan_fails(None, error="the proposal had a cycle")
    s.request("retry")
    text = planner_prompt(s.view, "retry", s.now)
    assert "Plan p1 failed: the proposal had a cycle" in text


@pytest.mark.parametrize(
    ("harness", "shown"),
    [("command", True), ("codex", True), ("scripted", True), ("python", False)],
)
def test_a_profiles_instructions_are_told_to_every_agent_but_a_python_one(
    harness: Harness, shown: bool
) -> None:
    """SPEC §7: a profile's `instructions` reach its agent: in the prompt, or for the
    python harness in its context (a runnable's system message) — never twice."""
    args = ("a.py:f",) if harness == "python" else ("bin/a",) if harness == "command" else ()
    events = record.create_goal(
        "g",
        title="t",
        objective="o",
        acceptance=["a"],
        profiles={
            "planner": Profile(harness=harness, args=args, instructions="  Plan small.  "),
            "worker": Profile(harness="scripted"),
        },
        planner="planner",
        worker="worker",
        at=T0,
    )
    prompt = planner_prompt(project(events), "initial", T0)
    assert ("# Instructions for this agent\nPlan small.\n\n# Rules" in prompt) is shown
    assert ("Plan small." in prompt) is shown
