"""In-agent retry and run proofs, against real subprocesses (the scripted and command harnesses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governor.core.event_fields import Profile, WorkSpec
from governor.core.evidence import passes_gate
from governor.core.proof import AgentAttemptProof, AgentProof, RunProof, derive_run_class
from governor.exec.command import CommandHarness
from governor.exec.scripted import ScriptedHarness
from governor.workflow.agent import (
    AgentCall,
    ProofRecorder,
    RetrySettings,
    call_agent,
    fan_out,
    tries_of,
)
from governor.workflow.reply import parse_worker_reply
from governor.workflow.run import Runtime, attempt_events, plan_events, run_planner, run_worker
from tests.story import Story

DONE = {
    "status": "done",
    "summary": "Did it.",
    "acceptance": [{"criterion": "it works", "status": "satisfied"}],
}


ONE_ITEM = {
    "decision": "apply",
    "rationale": "r",
    "work": [{"key": "a", "title": "A", "objective": "a"}],
}


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def scripted(
    tmp_path: Path, steps: list[dict[str, Any]], *, max_attempts: int = 3
) -> tuple[ScriptedHarness, Profile]:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"scripts": [{"name": "all", "steps": steps}]}))
    harness = ScriptedHarness(tmp_path, state_dir=tmp_path / "state")
    return harness, Profile(
        harness="scripted", args=(str(scenario),), max_attempts=max_attempts, timeout_s=30
    )


def call(
    harness: Any, profile: Profile, tmp_path: Path, prompt: str = "role: worker\nwork_key: a"
) -> AgentCall:
    return AgentCall(
        agent="worker",
        harness=harness,
        profile=profile,
        prompt=prompt,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    )


def runtime(sleeps: Sleeps) -> Runtime:
    return Runtime(
        sleep=sleeps, jitter=lambda: 1.0, retry=RetrySettings(initial_s=2, factor=2, max_wait_s=60)
    )


def test_environment_stops_after_one_spawn(tmp_path: Path) -> None:
    profile = Profile(harness="command", args=(str(tmp_path / "no-such-agent"),), max_attempts=3)
    sleeps = Sleeps()
    run = run_worker(
        call(CommandHarness(tmp_path), profile, tmp_path), ["it works"], runtime=runtime(sleeps)
    )
    assert run.failure_class == "environment"
    assert passes_gate(run.evidence)
    assert run.evidence.source == "exec:spawn-errno"
    assert len(run.proof.agents[0].attempts) == 1
    assert sleeps.waits == []


def test_upstream_retries_on_the_backoff_schedule_then_succeeds(tmp_path: Path) -> None:
    harness, profile = scripted(
        tmp_path,
        [
            {"vendor_error": {"status": 503}},
            {"vendor_error": {"status": 429}},
            {"reply": DONE},
        ],
    )
    sleeps = Sleeps()
    run = run_worker(call(harness, profile, tmp_path), ["it works"], runtime=runtime(sleeps))
    assert run.outcome == "succeeded"
    assert sleeps.waits == [2.0, 4.0]
    assert [a.failure_class for a in run.proof.agents[0].attempts] == ["upstream", "upstream", None]


def test_retry_after_wins_when_longer(tmp_path: Path) -> None:
    harness, profile = scripted(
        tmp_path, [{"vendor_error": {"status": 503, "retry_after_s": 7}}, {"reply": DONE}]
    )
    sleeps = Sleeps()
    run_worker(call(harness, profile, tmp_path), ["it works"], runtime=runtime(sleeps))
    assert sleeps.waits == [7.0]


def test_a_retry_after_beyond_the_in_agent_wait_is_left_to_the_goal(tmp_path: Path) -> None:
    harness, profile = scripted(
        tmp_path, [{"vendor_error": {"status": 429, "retry_after_s": 600}}, {"reply": DONE}]
    )
    sleeps = Sleeps()
    run = run_worker(call(harness, profile, tmp_path), ["it works"], runtime=runtime(sleeps))
    assert (run.failure_class, run.retry_after_s, sleeps.waits) == ("upstream", 600.0, [])
    assert passes_gate(run.evidence)


def test_upstream_until_attempts_run_out_is_uncharged_upstream(tmp_path: Path) -> None:
    harness, profile = scripted(tmp_path, [{"vendor_error": {"status": 503}}], max_attempts=2)
    run = run_worker(call(harness, profile, tmp_path), ["it works"], runtime=runtime(Sleeps()))
    assert (run.outcome, run.failure_class) == ("failed", "upstream")
    assert passes_gate(run.evidence)


ONE_RETRY_LAYER: dict[str, tuple[dict[str, Any], int, str | None]] = {
    "a worker that ran and failed (exit 1) is not re-spawned: the attempt is the failure": (
        {
            "stderr": "FAILED tests/test_login.py::test_bad_password\n",
            "exit_code": 1,
            "effects": True,
        },
        1,
        None,
    ),
    "an agent that crashed without a word is not re-spawned": ({"exit_code": 139}, 1, None),
    "an upstream refusal without absence evidence is not re-spawned": (
        {"stderr": "HTTP/1.1 503 Service Unavailable\n", "exit_code": 1, "effects": True},
        1,
        "upstream",
    ),
    "an upstream refusal with absence evidence is re-spawned after the back-off": (
        {"vendor_error": {"status": 503}},
        3,
        "upstream",
    ),
    "a reply that does not validate is re-spawned with its problems": (
        {"reply": {"status": "maybe"}},
        3,
        None,
    ),
}


@pytest.mark.parametrize(
    ("step", "spawns", "failure_class"), ONE_RETRY_LAYER.values(), ids=ONE_RETRY_LAYER.keys()
)
def test_one_retry_layer_re_spawns_only_a_spawn_that_told_nothing_about_the_work(
    tmp_path: Path, step: dict[str, Any], spawns: int, failure_class: str | None
) -> None:
    """SPEC §12.12: the in-agent retry re-spawns only after an invalid reply or an upstream
    refusal with positive absence evidence; any other failed spawn ends the run as the
    charged failure it is (the next attempt is the retry, visible in the ledger)."""
    harness, profile = scripted(tmp_path, [step, step, step], max_attempts=3)
    sleeps = Sleeps()
    run = run_worker(call(harness, profile, tmp_path), ["it works"], runtime=runtime(sleeps))
    assert run.outcome == "failed"
    tries = run.proof.agents[0].attempts
    assert [t.failure_class for t in tries] == [failure_class] * spawns
    waits = {"vendor_error": [2.0, 4.0], "reply": [0.0, 0.0]}
    assert sleeps.waits == next((w for k, w in waits.items() if k in step), [])


def test_a_schema_invalid_reply_is_retried_with_the_problems_in_the_prompt(tmp_path: Path) -> None:
    harness, profile = scripted(tmp_path, [{"reply": {"status": "maybe"}}, {"reply": DONE}])
    sleeps = Sleeps()
    outcome = call_agent(
        call(harness, profile, tmp_path), parse_worker_reply, ProofRecorder(), sleep=sleeps
    )
    assert outcome.answer is not None
    assert outcome.attempts == 2
    assert "Your previous reply could not be used" in outcome.prompt
    assert "status: Input should be 'done', 'failed' or 'decision'" in outcome.prompt
    assert sleeps.waits == [0.0]


def test_a_503_then_a_schema_invalid_reply_is_charged(tmp_path: Path) -> None:
    harness, profile = scripted(
        tmp_path, [{"vendor_error": {"status": 503}}, {"reply": "no json here"}], max_attempts=2
    )
    run = run_worker(call(harness, profile, tmp_path), ["it works"], runtime=runtime(Sleeps()))
    assert run.outcome == "failed"
    assert run.failure_class is None
    assert run.evidence.output == "observed"
    assert "the reply holds no JSON object" in (run.error or "")


def test_a_decision_reply_is_a_decision(tmp_path: Path) -> None:
    harness, profile = scripted(
        tmp_path, [{"reply": {"status": "decision", "question": "Postgres or SQLite?"}}]
    )
    run = run_worker(call(harness, profile, tmp_path), ["it works"], runtime=runtime(Sleeps()))
    assert (run.outcome, run.failure_class, run.error) == (
        "failed",
        "decision",
        "Postgres or SQLite?",
    )


def test_unreported_criteria_fail_the_attempt_charged(tmp_path: Path) -> None:
    harness, profile = scripted(tmp_path, [{"reply": {"status": "done", "summary": "trust me"}}])
    run = run_worker(
        call(harness, profile, tmp_path), ["it works", "it is fast"], runtime=runtime(Sleeps())
    )
    assert (run.outcome, run.failure_class) == ("failed", None)
    assert run.acceptance is not None
    assert run.acceptance.unknown == ("it works", "it is fast")
    assert "not shown satisfied: it works; it is fast" in (run.error or "")


def test_worker_outcomes_become_events(tmp_path: Path) -> None:
    story = Story()
    story.plan("a")
    run_id = story.start("p1-a")
    harness, profile = scripted(
        tmp_path,
        [
            {
                "reply": {**DONE, "acceptance": [{"criterion": "a works", "status": "satisfied"}]},
                "cost_usd": 0.5,
            }
        ],
    )
    run = run_worker(call(harness, profile, tmp_path), ["a works"], runtime=runtime(Sleeps()))
    (event,) = attempt_events(story.view, "p1-a", run_id, run, story.now)
    assert (event.outcome, event.cost_usd, event.reason) == ("succeeded", 0.5, "Did it.")  # type: ignore[union-attr]


def test_an_oversized_proposal_is_retried_then_recorded_as_a_charged_failure(
    tmp_path: Path,
) -> None:
    story = Story(max_work_items_per_plan=1)
    plan_id = story.request()
    big = {
        "decision": "apply",
        "rationale": "r",
        "work": [
            {"key": "a", "title": "A", "objective": "a"},
            {"key": "b", "title": "B", "objective": "b"},
        ],
    }
    harness, profile = scripted(tmp_path, [{"reply": big}], max_attempts=2)
    run = run_planner(
        call(harness, profile, tmp_path, "role: planner"), story.view, runtime=runtime(Sleeps())
    )
    (event,) = plan_events(story.view, plan_id, run, story.now)
    assert event.type == "plan.failed"
    assert event.failure_class is None  # type: ignore[union-attr]
    assert "at most 1 are allowed per plan" in (event.error or "")  # type: ignore[union-attr]
    assert len(run.proof.agents[0].attempts) == 2


def test_a_valid_proposal_becomes_plan_proposed(tmp_path: Path) -> None:
    story = Story()
    plan_id = story.request()
    harness, profile = scripted(tmp_path, [{"reply": ONE_ITEM}])
    run = run_planner(
        call(harness, profile, tmp_path, "role: planner"), story.view, runtime=runtime(Sleeps())
    )
    (event,) = plan_events(story.view, plan_id, run, story.now)
    assert event.type == "plan.proposed"
    assert event.work == (WorkSpec(key="a", title="A", objective="a"),)  # type: ignore[union-attr]


def test_a_failure_swallowed_by_a_fan_out_keeps_its_class(tmp_path: Path) -> None:
    recorder = ProofRecorder()
    missing = Profile(harness="command", args=(str(tmp_path / "absent"),), max_attempts=1)

    def environment_agent() -> object:
        return call_agent(
            call(CommandHarness(tmp_path), missing, tmp_path), parse_worker_reply, recorder
        )

    def crashing_agent() -> object:
        call_agent(call(CommandHarness(tmp_path), missing, tmp_path), parse_worker_reply, recorder)
        raise RuntimeError("the workflow swallowed this")

    results = fan_out([environment_agent, crashing_agent])
    assert isinstance(results[1], RuntimeError)
    cls, evidence = derive_run_class(RunProof(succeeded=False, agents=recorder.proofs()))
    assert cls == "environment"
    assert passes_gate(evidence)


def test_the_first_prompt_is_the_call_prompt(tmp_path: Path) -> None:
    harness, profile = scripted(tmp_path, [{"reply": DONE}])
    outcome = call_agent(
        call(harness, profile, tmp_path, "role: worker\nhello"), parse_worker_reply, ProofRecorder()
    )
    assert outcome.prompt == "role: worker\nhello"
    assert outcome.attempts == 1


def test_a_worker_that_succeeds_after_a_503_records_its_tries_on_the_success(
    tmp_path: Path,
) -> None:
    story = Story()
    story.plan("a")
    run_id = story.start("p1-a")
    ok = {**DONE, "acceptance": [{"criterion": "a works", "status": "satisfied"}]}
    harness, profile = scripted(
        tmp_path, [{"vendor_error": {"status": 503, "message": "status 503"}}, {"reply": ok}]
    )
    run = run_worker(call(harness, profile, tmp_path), ["a works"], runtime=runtime(Sleeps()))
    (event,) = attempt_events(story.view, "p1-a", run_id, run, story.now)
    assert event.outcome == "succeeded"  # type: ignore[union-attr]
    tries = event.evidence.tries  # type: ignore[union-attr]
    assert tries is not None
    assert (tries.count, tries.classes) == (2, ("upstream", "ok"))
    assert tries.last_error is not None
    assert "503" in tries.last_error


def test_one_try_records_no_tries(tmp_path: Path) -> None:
    story = Story()
    story.plan("a")
    run_id = story.start("p1-a")
    ok = {**DONE, "acceptance": [{"criterion": "a works", "status": "satisfied"}]}
    harness, profile = scripted(tmp_path, [{"reply": ok}])
    run = run_worker(call(harness, profile, tmp_path), ["a works"], runtime=runtime(Sleeps()))
    (event,) = attempt_events(story.view, "p1-a", run_id, run, story.now)
    assert event.evidence is None  # type: ignore[union-attr]


def test_a_failed_run_records_every_try_with_its_evidence(tmp_path: Path) -> None:
    story = Story()
    story.plan("a")
    run_id = story.start("p1-a")
    harness, profile = scripted(
        tmp_path, [{"vendor_error": {"status": 503}}, {"reply": {"status": "maybe"}}]
    )
    run = run_worker(call(harness, profile, tmp_path), ["a works"], runtime=runtime(Sleeps()))
    (event,) = attempt_events(story.view, "p1-a", run_id, run, story.now)
    evidence = event.evidence  # type: ignore[union-attr]
    assert evidence is not None
    assert evidence.output == "observed"  # the invalid reply reached the model: charged
    assert evidence.tries is not None
    assert evidence.tries.classes == ("upstream", "invalid_reply", "invalid_reply")


def test_a_planner_that_succeeds_after_tries_records_them_on_the_proposal(
    tmp_path: Path,
) -> None:
    story = Story()
    plan_id = story.request()
    harness, profile = scripted(tmp_path, [{"vendor_error": {"status": 529}}, {"reply": ONE_ITEM}])
    run = run_planner(
        call(harness, profile, tmp_path, "role: planner"), story.view, runtime=runtime(Sleeps())
    )
    (event,) = plan_events(story.view, plan_id, run, story.now)
    assert event.type == "plan.proposed"
    assert event.evidence is not None  # type: ignore[union-attr]
    assert event.evidence.tries is not None  # type: ignore[union-attr]
    assert event.evidence.tries.classes == ("upstream", "ok")  # type: ignore[union-attr]


def test_a_refused_credential_stops_at_once_and_names_the_profile_and_the_remedy(
    tmp_path: Path,
) -> None:
    harness, profile = scripted(tmp_path, [{"vendor_error": {"status": 401}}], max_attempts=3)
    sleeps = Sleeps()
    agent = AgentCall(
        agent="planner",
        harness=harness,
        profile=profile,
        prompt="role: planner",
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        profile_name="planner-profile",
    )
    run = run_planner(agent, Story().view, runtime=runtime(sleeps))
    assert run.failure_class == "environment"
    assert run.proof.agents[0].attempts[0].evidence.rule == "credential"
    assert len(run.proof.agents[0].attempts) == 1
    assert sleeps.waits == []
    assert passes_gate(run.evidence)  # the scripted envelope shows nothing happened
    last = (run.error or "").splitlines()[-1]
    assert last.startswith("the credential for planner-profile was refused: ")


def test_a_cli_that_retried_a_refusal_itself_makes_even_one_try_visible() -> None:
    one = AgentProof(agent="planner", attempts=(AgentAttemptProof(ok=True),))
    assert tries_of([one]) is None
    tries = tries_of([one], [503])
    assert tries is not None
    assert (tries.count, tries.classes, tries.vendor_retries) == (1, ("ok",), (503,))
