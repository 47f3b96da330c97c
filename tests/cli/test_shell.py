"""``governor completion`` (sourced into a real bash, asked for completions) and
``governor schema goal`` (checked against goal files ``governor new`` accepts and refuses)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from governor.cli.main import build_parser
from governor.cli.shell import levels
from governor.core.event_fields import Profile
from governor.core.policy import Policy
from tests.hardening.run import GOVERNOR, governor

BASH = shutil.which("bash")


def complete(*words: str) -> list[str]:
    """What bash offers after ``words`` (the last one is the word being typed)."""
    assert BASH is not None
    script = (
        f"source <({GOVERNOR} completion bash)\n"
        'COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()\n'
        "_governor\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    result = subprocess.run(
        [BASH, "-c", script, "bash", *words],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [line for line in result.stdout.splitlines() if line]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize(
    ("words", "offered"),
    [
        (("governor", ""), {"new", "run", "work", "store", "completion", "schema"}),
        (("governor", "wo"), {"work"}),
        (("governor", "work", ""), {"accept", "retry", "cancel", "reopen", "abandon"}),
        (("governor", "--store", "s.db", "work", "re"), {"retry", "reopen"}),
        (("governor", "work", "retry", "--re"), {"--reason"}),
        (("governor", "store", "check", "--"), {"--repair", "--json", "--store", "--help"}),
        (("governor", "completion", ""), {"bash", "zsh", "fish"}),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_bash_completes_from_the_parser(words: tuple[str, ...], offered: set[str]) -> None:
    got = set(complete(*words))
    assert offered <= got, (offered, got)
    typed = words[-1]
    assert all(word.startswith(typed) for word in got)


def test_every_command_and_option_of_the_parser_is_in_each_script(tmp_path: Path) -> None:
    scripts = {
        shell: governor(tmp_path, "completion", shell).stdout for shell in ("bash", "zsh", "fish")
    }
    for level in levels(build_parser()):
        for shell, script in scripts.items():
            for name, _ in level.commands:
                assert name in script, (shell, name)
            for option in level.options:
                assert option.lstrip("-") in script, (shell, option)
    assert "bashcompinit" in scripts["zsh"]


def test_the_bash_script_is_valid_bash(tmp_path: Path) -> None:
    if BASH is None:
        pytest.skip("bash is not installed")
    script = tmp_path / "governor.bash"
    script.write_text(governor(tmp_path, "completion", "bash").stdout)
    assert subprocess.run([BASH, "-n", str(script)], check=False).returncode == 0


def schema(tmp_path: Path) -> dict[str, Any]:
    result = governor(tmp_path, "schema", "goal")
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


GOOD = {
    "id": "login-page",
    "title": "Ship the login page",
    "objective": "Add a login page.",
    "acceptance": ["it logs in"],
    "planner": "planner",
    "worker": "worker",
    "policy": {"max_replans": 5, "max_runtime_s": "2h", "upstream_backoff": {"initial_s": "30s"}},
    "profiles": {
        "planner": {"harness": "command", "args": ["./plan.sh"], "timeout_s": "10m"},
        "worker": {"harness": "codex", "model": "gpt-5-codex", "env": ["MY_API_KEY"]},
    },
}
BAD = {
    "an unknown key": {**GOOD, "titel": "x"},
    "an unknown profile key": {**GOOD, "profiles": {"p": {"harness": "command", "argz": []}}},
    "an unknown harness": {**GOOD, "profiles": {"p": {"harness": "bash"}}},
    "an unknown policy field": {**GOOD, "policy": {"max_replan": 3}},
    "no profiles": {k: v for k, v in GOOD.items() if k != "profiles"},
    "pools not a list": {**GOOD, "pools": "team-a"},
}


def test_new_accepts_the_good_goal_file_and_refuses_each_bad_one(tmp_path: Path) -> None:
    """The files the schema tests below judge are judged so by ``governor new`` too."""
    (tmp_path / "good.json").write_text(json.dumps(GOOD))
    assert governor(tmp_path, "new", "good.json").returncode == 0
    for name, data in BAD.items():
        (tmp_path / "bad.json").write_text(json.dumps({**data, "id": "bad"}))
        assert governor(tmp_path, "new", "bad.json").returncode == 3, name


def test_the_schema_judges_goal_files_as_new_does(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(schema(tmp_path))
    assert list(validator.iter_errors(GOOD)) == []
    for name, data in BAD.items():
        assert list(validator.iter_errors(data)), name


def test_the_schema_is_the_models_own(tmp_path: Path) -> None:
    """Without ``jsonschema``: the policy and profile definitions are pydantic's schemas of
    the models that validate goal files, durations (``5m``) allowed where files take them."""
    found = schema(tmp_path)
    assert found["additionalProperties"] is False
    assert set(found["properties"]) == {*GOOD, "pools"}  # a pool must exist: not in GOOD
    for name, model in (("Policy", Policy), ("Profile", Profile)):
        mine = found["$defs"][name]
        theirs = model.model_json_schema()
        assert set(mine["properties"]) == set(theirs["properties"]), name
        assert mine["additionalProperties"] is False
        for field, spec in theirs["properties"].items():
            shown = mine["properties"][field]
            assert shown == spec or shown["anyOf"][0] == spec, (name, field)
    assert found["$defs"]["Profile"]["properties"]["timeout_s"]["anyOf"][1]["type"] == "string"
