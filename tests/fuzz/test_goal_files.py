"""Fuzz family 2: mutated goal files through ``new`` and ``doctor``.

Each case takes a valid goal file (TOML, JSON or YAML), damages it — a value replaced
by a hostile one (non-finite or huge numbers, deep nesting, control characters), a key
deleted or misspelt, bytes flipped or cut — and runs ``new`` or ``doctor`` on it. The
promise is checked (``tests.fuzz.harness``): a goal ``new`` stored passes every
history check, and a refused file stores nothing.

The profiles use the scripted harness (doctor never runs it); a mutation that names
another harness is checked as well, but never run: ``new`` runs no agent, and doctor only
looks at a command agent.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import cases, check_outcome, check_store, governor, inside, tally
from tests.fuzz.mutate import dumps, mutated_value

GOAL: dict[str, Any] = {
    "id": "g1",
    "title": "A goal",
    "objective": "Do it",
    "acceptance": ["it works"],
    "planner": "p",
    "worker": "w",
    "policy": {
        "max_replans": 4,
        "max_attempts": 2,
        "max_runtime_s": 600,
        "upstream_backoff": {"initial_s": 1, "factor": 2, "max_s": 60},
    },
    "profiles": {
        "p": {"harness": "scripted", "args": ["s.json"], "timeout_s": 30, "max_attempts": 1},
        "w": {"harness": "scripted", "args": ["s.json"], "env": ["HOME"]},
    },
}
TYPOS = {"harness": "harnes", "max_replans": "max_replan", "factor": "facter", "title": "titel"}


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value).replace("inf", "inf").replace("nan", "nan")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
        )
    return '""'


def render(data: Any, kind: str) -> bytes:
    """A goal file of ``kind``, written as a careless person or tool might."""
    if kind == "json":
        return dumps(data)
    if kind == "yaml":
        try:
            text: str = yaml.safe_dump(data, allow_unicode=True)
            return text.encode("utf-8", "surrogatepass")
        except (yaml.YAMLError, RecursionError, UnicodeError):
            return b"title: [" * 50
    try:  # a value nested past the recursion limit is written as a deep TOML array
        if not isinstance(data, dict):
            return _toml_value(data).encode("utf-8", "surrogatepass")
        lines = [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in data.items()]
        return "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"
    except RecursionError:
        return b"x = " + b"[" * 5000 + b"]" * 5000


@st.composite
def goal_files(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(["toml", "json", "yaml"]))
    data: Any = json.loads(json.dumps(GOAL))
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["value", "value", "value", "typo", "bytes", "cut"]))
        if how == "value":
            data = draw(mutated_value(data))
        elif how == "typo" and isinstance(data, dict):
            word = draw(st.sampled_from(sorted(TYPOS)))
            try:
                text = json.dumps(data)
                data = json.loads(text.replace(f'"{word}"', f'"{TYPOS[word]}"', 1))
            except (ValueError, RecursionError):
                pass
    raw = render(data, kind)
    if draw(st.booleans()) and raw:
        if draw(st.booleans()):
            at = draw(st.integers(0, len(raw) - 1))
            raw = raw[:at] + bytes([raw[at] ^ (1 << draw(st.integers(0, 7)))]) + raw[at + 1 :]
        else:
            raw = raw[: draw(st.integers(0, len(raw)))]
    return kind, raw


def test_the_base_goal_file_is_valid_in_every_format(tmp_path: Path) -> None:
    for kind in ("toml", "json", "yaml"):
        path = tmp_path / f"goal.{kind}"
        path.write_bytes(render(GOAL, kind))
        if kind == "toml":
            assert tomllib.loads(path.read_text())["profiles"]["p"]["harness"] == "scripted"
        with inside(tmp_path):
            outcome = governor(["new", path.name, "--store", str(tmp_path / f"{kind}.db")])
        assert outcome.code == 0, outcome.stderr


def test_mutated_goal_files_keep_the_promise(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOVERNOR_STORE", raising=False)
    counter = iter(range(10**9))

    @settings(
        max_examples=cases(request.config, long=1_500),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        file=goal_files(), command=st.sampled_from(["new", "new --json", "doctor", "doctor --json"])
    )
    def case(file: tuple[str, bytes], command: str) -> None:
        n = next(counter)
        kind, raw = file
        path = tmp_path / f"goal{n}.{kind}"
        path.write_bytes(raw)
        store = str(tmp_path / f"s{n}.db")
        words = command.split()
        outcome = governor([words[0], path.name, *words[1:], "--store", store])
        counted.add(outcome)
        check_outcome(outcome)
        stored = check_store(store)
        assert stored == (1 if words[0] == "new" and outcome.code == 0 else 0)
        if words[0] == "doctor":
            assert outcome.code in (0, 3, 4, 8), outcome

    with tally("goal files", request) as counted, inside(tmp_path):
        case()
