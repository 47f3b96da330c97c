"""The command harness against real fake executables: every branch of classification."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governor.core.classify import ERROR_LIMIT, SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import UNKNOWN, is_uncharged
from governor.errors import InputError
from governor.exec.command import CommandHarness
from governor.exec.environment import BASE_ALLOW, REDACTED
from governor.exec.harness import Harness, spawn_remedy

SECRET = "my-api-key-value-0123456789"


def run(
    bin_dir: Path,
    env: dict[str, str],
    *args: str,
    prompt: str = "role: worker\n",
    timeout_s: float = 30,
    pass_env: tuple[str, ...] = (),
) -> SpawnResult:
    harness: Harness = CommandHarness(bin_dir.parent)
    profile = Profile(harness="command", args=args, timeout_s=timeout_s, env=pass_env)
    return harness.run(prompt, profile, cwd=bin_dir.parent, env=env)


def test_a_reply_on_stdout_is_a_success(bin_dir: Path, base_env: dict[str, str]) -> None:
    result = run(bin_dir, base_env, "./bin/echo_prompt.sh", prompt="x" * 1000)
    assert result.ok
    assert result.failure_class is None
    assert result.error is None
    assert result.reply == 'I read 1000 characters.\n{"status": "done", "summary": "echoed"}\n'


@pytest.mark.parametrize(
    ("executable", "errno_name"),
    [
        pytest.param("definitely-not-installed-xyz", "ENOENT", id="a missing binary"),
        pytest.param("./bin/no_exec.sh", "EACCES", id="a file without execute permission"),
        pytest.param("./bin/no_shebang", "ENOEXEC", id="a file that is no executable format"),
    ],
)
def test_a_binary_that_cannot_start_is_an_uncharged_environment_failure(
    bin_dir: Path, base_env: dict[str, str], executable: str, errno_name: str
) -> None:
    result = run(bin_dir, base_env, executable)
    assert not result.ok
    assert result.failure_class == "environment"
    assert result.spawn_errno == errno_name
    assert result.exit_code is None
    evidence = result.evidence
    assert (evidence.effects, evidence.output, evidence.refusal) == ("absent", "absent", "absent")
    assert (evidence.source, evidence.ref, evidence.rule) == (
        "exec:spawn-errno",
        errno_name,
        "spawn-errno",
    )
    assert result.error is not None
    assert "could not start" in result.error
    assert is_uncharged("failed", result.failure_class, result.evidence)
    # issue 35: doctor's remedy, on the error's last line (the one a stop's reason quotes)
    last = result.error.splitlines()[-1]
    assert last.endswith("; governor doctor GOAL_FILE checks every profile")
    fix = "chmod +x" if errno_name == "EACCES" else "install it or fix the path"
    assert fix in last


def test_a_missing_vendor_cli_is_told_how_to_install() -> None:
    assert spawn_remedy("codex", "ENOENT").startswith(
        "install it (npm install -g @openai/codex) or put it on PATH"
    )


def test_a_shell_exiting_127_is_not_classed_and_charged(
    bin_dir: Path, base_env: dict[str, str]
) -> None:
    result = run(bin_dir, base_env, "./bin/exit127.sh")
    assert result.exit_code == 127
    assert result.spawn_errno is None
    assert result.failure_class is None
    assert result.rule == "default"
    assert result.evidence.effects == "unknown"
    assert not is_uncharged("failed", result.failure_class, result.evidence)


def test_a_503_after_a_long_banner_is_upstream_by_text_keeps_the_tail_and_is_charged(
    bin_dir: Path, base_env: dict[str, str]
) -> None:
    result = run(bin_dir, base_env, "./bin/banner503.sh")
    assert result.exit_code == 1
    assert result.failure_class == "upstream"
    assert result.rule == "upstream-text"
    assert result.error is not None
    assert len(result.error) <= ERROR_LIMIT
    assert result.error.startswith("…")
    assert result.error.endswith("HTTP/1.1 503 Service Unavailable")
    # a command cannot observe what it did, so the gate charges it
    assert (result.evidence.effects, result.evidence.output) == ("unknown", "unknown")
    assert not is_uncharged("failed", result.failure_class, result.evidence)


@pytest.mark.parametrize(
    ("args", "exit_code"),
    [
        pytest.param(("./bin/exit0_on_term.sh",), 0, id="a child that exits 0 when signalled"),
        pytest.param(("sleep", "30"), -15, id="a child that dies of SIGTERM"),
    ],
)
def test_a_timeout_is_a_charged_work_failure(
    bin_dir: Path, base_env: dict[str, str], args: tuple[str, ...], exit_code: int
) -> None:
    result = run(bin_dir, base_env, *args, timeout_s=0.4)
    assert result.timed_out
    assert result.exit_code == exit_code
    assert result.failure_class is None
    assert result.rule == "timeout"
    assert result.error is not None
    assert "timed out" in result.error


def test_stdout_before_a_failure_survives_as_partial_evidence(
    bin_dir: Path, base_env: dict[str, str]
) -> None:
    result = run(bin_dir, base_env, "sh", "-c", "printf 'half a repl'; exit 3")
    assert result.exit_code == 3
    assert result.evidence.partial is not None
    assert result.evidence.partial.bytes == 11
    assert result.evidence.output == "unknown"
    assert result.error == "half a repl"


def test_a_silent_failure_says_so(bin_dir: Path, base_env: dict[str, str]) -> None:
    result = run(bin_dir, base_env, "sh", "-c", "exit 4")
    assert result.error == "exited 4 with no output"
    assert result.evidence.model_copy(update={"observation": None}) == UNKNOWN.model_copy(
        update={"rule": "default"}
    )
    assert result.evidence.observation is not None


def test_secrets_the_child_prints_never_reach_the_error_or_the_reply(
    bin_dir: Path, base_env: dict[str, str]
) -> None:
    env = {**base_env, "MY_API_KEY": SECRET}
    failed = run(bin_dir, env, "./bin/leak_secrets.sh", "1", pass_env=("MY_API_KEY",))
    passed = run(bin_dir, env, "./bin/leak_secrets.sh", "0", pass_env=("MY_API_KEY",))
    assert failed.error is not None
    assert passed.reply is not None
    assert f"my key is {REDACTED}" in failed.error  # the child did receive and print it
    for text in (failed.error, passed.reply, failed.model_dump_json(), passed.model_dump_json()):
        assert SECRET not in text
        assert "sk-proj-" not in text
        assert "xyzSECRETtoken" not in text
        assert "abcdefghijklmnop" not in text


def test_the_child_sees_only_the_allow_listed_environment(
    bin_dir: Path, base_env: dict[str, str]
) -> None:
    env = {**base_env, "LEAKY_VAR": "do-not-pass", "MY_API_KEY": SECRET, "OTHER_TOKEN": "x" * 20}
    result = run(bin_dir, env, "env", pass_env=("MY_API_KEY",))
    assert result.ok
    assert result.reply is not None
    names = {line.split("=", 1)[0] for line in result.reply.splitlines() if "=" in line}
    assert names <= set(BASE_ALLOW) | {"MY_API_KEY"}
    assert "MY_API_KEY" in names
    assert "LEAKY_VAR" not in names
    assert SECRET not in result.reply


def test_relative_executables_resolve_against_the_goal_folder(bin_dir: Path) -> None:
    harness = CommandHarness(bin_dir.parent)
    profile = Profile(harness="command", args=("./bin/echo_prompt.sh", "--flag", "./x"))
    assert harness.argv(profile) == (str(bin_dir / "echo_prompt.sh"), "--flag", "./x")
    assert harness.binary(Profile(harness="command", args=("codex",))) == "codex"
    assert harness.binary(Profile(harness="command", args=("/bin/sh",))) == "/bin/sh"
    assert harness.binary(Profile(harness="command")) is None


def test_a_command_profile_without_args_is_refused(bin_dir: Path) -> None:
    with pytest.raises(InputError, match="args"):
        CommandHarness(bin_dir).argv(Profile(harness="command"))


def test_the_prompt_reaches_the_child_on_stdin(bin_dir: Path, base_env: dict[str, str]) -> None:
    prompt = json.dumps({"role": "worker", "text": "é" * 100_000})
    result = run(bin_dir, base_env, "wc", "-c", prompt=prompt)
    assert result.reply is not None
    assert int(result.reply.split()[0]) == len(prompt.encode())
