"""The scripted harness: a real player process, steps advancing across invocations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import is_uncharged
from governor.exec.environment import REDACTED
from governor.exec.harness import Harness
from governor.exec.scripted import DEFAULT_SCENARIO, ScriptedHarness
from governor.exec.scripted_player import STATE_VAR, ScenarioError, load_scenario, state_path

SCENARIOS = Path(__file__).with_name("scenarios")
PLANNER = "role: planner\ngoal: demo\n"
BUILD = "role: worker\nwork_key: build\n"
DOCS = "role: worker\nwork_key: docs\n"


class Player:
    """Runs prompts through one scripted profile with its own state folder."""

    def __init__(
        self, tmp_path: Path, env: dict[str, str], args: tuple[str, ...], timeout_s: float = 30
    ) -> None:
        self.harness: Harness = ScriptedHarness(SCENARIOS, state_dir=tmp_path / "state")
        self.profile = Profile(harness="scripted", args=args, timeout_s=timeout_s)
        self.cwd = tmp_path
        self.env = env

    def __call__(self, prompt: str) -> SpawnResult:
        return self.harness.run(prompt, self.profile, cwd=self.cwd, env=self.env)


@pytest.fixture
def story(tmp_path: Path, base_env: dict[str, str]) -> Player:
    return Player(tmp_path, base_env, ("story.json",))


def uncharged(result: SpawnResult) -> bool:
    return is_uncharged("failed", result.failure_class, result.evidence)


def test_steps_advance_across_separate_processes_with_the_evidence_each_yields(
    story: Player,
) -> None:
    plan = story(PLANNER)
    assert plan.ok
    assert plan.reply is not None
    assert plan.reply.startswith("Let me plan this.\n")
    assert json.loads(plan.reply.splitlines()[-1])["work"][0]["key"] == "build"
    assert plan.cost_usd == 0.25
    assert "scripted" not in plan.reply  # the envelope is not part of the reply

    refused = story(BUILD)
    assert (refused.ok, refused.failure_class, refused.rule) == (False, "upstream", "vendor-status")
    assert refused.vendor_status == 503
    assert refused.retry_after_s == 7
    evidence = refused.evidence
    assert (evidence.effects, evidence.output, evidence.refusal) == ("absent", "absent", "absent")
    assert (evidence.source, evidence.ref) == ("scripted:envelope", "story#build:0")
    assert evidence.partial is None
    assert uncharged(refused)
    assert refused.error is not None
    assert "HTTP/1.1 503 Service Unavailable" in refused.error

    streamed = story(BUILD)
    assert (streamed.failure_class, streamed.vendor_status) == ("upstream", 500)
    assert streamed.evidence.output == "observed"
    assert streamed.evidence.effects == "absent"
    assert streamed.evidence.partial is not None
    assert streamed.evidence.partial.bytes == len("Compiling the first module")
    assert streamed.error is not None
    assert streamed.error.endswith("Compiling the first module")
    assert not uncharged(streamed)

    worked = story(BUILD)
    assert (worked.failure_class, worked.exit_code, worked.rule) == (None, 1, "default")
    assert worked.evidence.effects == "observed"
    assert worked.evidence.output == "absent"
    assert worked.error == "3 tests failed"
    assert not uncharged(worked)

    slow = story(BUILD)
    assert slow.ok
    assert slow.duration_s >= 0.3
    assert slow.reply == '{"status": "done", "summary": "Built."}\n'

    limited = story(DOCS)
    assert (limited.failure_class, limited.vendor_status) == ("upstream", 429)
    assert uncharged(limited)
    assert limited.error is not None
    assert "rate limited, slow down" in limited.error

    crashed = story(DOCS)
    assert (crashed.exit_code, crashed.failure_class) == (139, None)
    assert crashed.evidence.ref == "story#docs:1"

    decision = story(PLANNER)
    assert decision.ok
    assert decision.reply is not None
    assert json.loads(decision.reply)["status"] == "decision"

    assert story("role: reviewer").reply == "I do not recognise this prompt."


def test_an_exhausted_script_repeats_its_last_step(story: Player) -> None:
    replies = [story(PLANNER).reply for _ in range(5)]
    assert (
        replies[2] == replies[3] == replies[4] == '{"decision": "complete", "rationale": "Done."}\n'
    )
    crashes = [story(DOCS).exit_code for _ in range(3)]
    assert crashes == [1, 139, 139]


def test_concurrent_players_never_take_the_same_step(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    counted = Player(tmp_path, base_env, ("counted.toml",))
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(counted, ["any prompt"] * 8))
    assert sorted(result.reply or "" for result in results) == [str(n) for n in range(8)]


def test_state_is_kept_per_scenario_and_reset_when_the_scenario_changes(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    scenario = tmp_path / "edited.json"
    scenario.write_text(json.dumps({"scripts": [{"steps": [{"reply": "a"}, {"reply": "b"}]}]}))
    edited = Player(tmp_path, base_env, (str(scenario),))
    assert [edited("x").reply, edited("x").reply] == ["a", "b"]
    scenario.write_text(json.dumps({"scripts": [{"steps": [{"reply": "c"}, {"reply": "d"}]}]}))
    assert edited("x").reply == "c"


def test_a_timeout_leaves_no_envelope_so_nothing_is_claimed(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    scenario = tmp_path / "slow.json"
    scenario.write_text(json.dumps({"scripts": [{"steps": [{"stdout": "half", "delay_s": 30}]}]}))
    result = Player(tmp_path, base_env, (str(scenario),), timeout_s=0.5)("x")
    assert result.timed_out
    assert result.rule == "timeout"
    assert result.evidence.source is None
    assert result.evidence.output == "unknown"
    assert result.evidence.partial is not None
    assert result.evidence.partial.bytes == 4


def test_a_declared_refusal_is_recorded_as_declared(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    scenario = tmp_path / "refusal.json"
    step = {"refusal": True, "vendor_error": {"status": 503}}
    scenario.write_text(json.dumps({"scripts": [{"steps": [step]}]}))
    result = Player(tmp_path, base_env, (str(scenario),))("x")
    assert result.evidence.refusal == "declared"
    assert not uncharged(result)


def test_secrets_in_a_scripted_reply_are_redacted(tmp_path: Path, base_env: dict[str, str]) -> None:
    scenario = tmp_path / "leak.json"
    step = {"reply": "here: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "stderr": "Bearer abcdefghijkl"}
    scenario.write_text(json.dumps({"scripts": [{"steps": [step, {**step, "exit_code": 1}]}]}))
    leak = Player(tmp_path, base_env, (str(scenario),))
    assert leak("x").reply == f"here: {REDACTED}"
    error = leak("x").error
    assert error is not None
    assert "sk-ant" not in error
    assert "abcdefghijkl" not in error


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        pytest.param({"scripts": [{"steps": [{"replay": "x"}]}]}, "unknown keys", id="a typo"),
        pytest.param({"scripts": [{"steps": []}]}, "non-empty", id="no steps"),
        pytest.param({"scripts": [{"steps": [{"delay_s": "1"}]}]}, "delay_s", id="a bad type"),
        pytest.param({"scripts": [{"steps": [{"exit_code": True}]}]}, "exit_code", id="a bool"),
        pytest.param({"scripts": [{"steps": [{"delay_s": -1}]}]}, "negative", id="a negative"),
        pytest.param(
            {"scripts": [{"steps": [{"vendor_error": {"code": 503}}]}]}, "code", id="bad error"
        ),
        pytest.param(
            {"scripts": [{"name": "a", "steps": [{}]}, {"name": "a", "steps": [{}]}]},
            "unique",
            id="duplicate names",
        ),
        pytest.param({"scripts": []}, "empty", id="no scripts"),
        pytest.param(["not", "an", "object"], "scripts", id="not an object"),
    ],
)
def test_a_broken_scenario_is_a_charged_failure_naming_the_problem(
    tmp_path: Path, base_env: dict[str, str], scenario: object, message: str
) -> None:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(scenario))
    with pytest.raises(ScenarioError, match=message):
        load_scenario(path)
    result = Player(tmp_path, base_env, (str(path),))("x")
    assert result.exit_code == 2
    assert result.error is not None
    assert message in result.error
    assert result.evidence.source is None
    assert not uncharged(result)


def test_a_prompt_no_script_matches_is_a_failure(tmp_path: Path, base_env: dict[str, str]) -> None:
    path = tmp_path / "narrow.json"
    path.write_text(json.dumps({"scripts": [{"match": "role: planner", "steps": [{}]}]}))
    result = Player(tmp_path, base_env, (str(path),))("role: worker")
    assert result.exit_code == 2
    assert result.error is not None
    assert "no script matches" in result.error


def test_a_missing_scenario_file_is_a_failure_naming_it(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    result = Player(tmp_path, base_env, ("nowhere.json",))("x")
    assert result.exit_code == 2
    assert result.error is not None
    assert "nowhere.json" in result.error


def test_the_embedded_default_scenario_plans_works_and_completes(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    default = Player(tmp_path, base_env, ())
    assert default.harness.binary(default.profile) == sys.executable
    first = default(PLANNER)
    assert first.reply is not None
    assert json.loads(first.reply.splitlines()[-1])["decision"] == "apply"
    work = default(BUILD)
    assert work.reply is not None
    assert json.loads(work.reply.splitlines()[-1])["status"] == "done"
    last = default(PLANNER)
    assert last.reply is not None
    assert json.loads(last.reply)["decision"] == "complete"
    load_scenario(DEFAULT_SCENARIO)


def test_the_state_folder_comes_from_the_source_environment_without_an_override(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    harness = ScriptedHarness(SCENARIOS)
    profile = Profile(harness="scripted", args=("counted.toml",))
    env = {**base_env, STATE_VAR: str(tmp_path / "from-env")}
    assert harness.run("x", profile, cwd=tmp_path, env=env).reply == "0"
    assert state_path(SCENARIOS / "counted.toml", tmp_path / "from-env").exists()
    assert harness.run("x", profile, cwd=tmp_path, env=base_env).reply == "0"
    assert list((tmp_path / ".governor" / "scripted").glob("counted-*.state.json"))


def test_the_player_runs_on_its_own_and_keeps_state_next_to_the_scenario(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    scenario = tmp_path / "own.json"
    scenario.write_text(json.dumps({"scripts": [{"steps": [{"reply": "a"}, {"reply": "b"}]}]}))
    env = {**base_env, "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-m", "governor.exec.scripted_player", str(scenario)]
    outputs = [
        subprocess.run(argv, input=b"", capture_output=True, env=env, check=True).stdout
        for _ in range(2)
    ]
    assert [out.splitlines()[0] for out in outputs] == [b"a", b"b"]
    assert json.loads(outputs[0].splitlines()[-1])["scripted"]["step"] == 0
    assert state_path(scenario, None).parent == tmp_path
    usage = subprocess.run(argv[:-1], input=b"", capture_output=True, env=env, check=False)
    assert usage.returncode == 2
    assert b"usage" in usage.stderr
