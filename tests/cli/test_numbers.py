"""Non-finite and oversized numbers through the real command (issue 9, items 1 and 4).

Each case used to be accepted, stored as ``null`` (or as a number the back-off or
``--json`` could not handle), and then every later command on the goal failed — even
``export``. Now each is refused with one line naming what is wrong, nothing is stored,
and the goal (when there is one) reads as before.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from subprocess import CompletedProcess, run

import pytest

from governor.core.wire.codec import encode
from tests.story import Story

VALID_TOML = """
id = "g1"
title = "A goal"
objective = "Do it"
planner = "p"
worker = "p"
[policy]
{policy}
[profiles.p]
harness = "scripted"
{profile}
"""


def governor(store: Path, *args: str) -> CompletedProcess[str]:
    exe = shutil.which("governor", path=str(Path(sys.executable).parent)) or "governor"
    return run(
        [exe, *args, "--store", f"sqlite:///{store}"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "error"},
        check=False,
    )


def assert_one_line(result: CompletedProcess[str], code: int, *needles: str) -> None:
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def toml_goal(tmp: Path, *, policy: str = "", profile: str = "") -> Path:
    path = tmp / "goal.toml"
    path.write_text(VALID_TOML.format(policy=policy, profile=profile))
    return path


def json_goal(tmp: Path, policy_text: str) -> Path:
    path = tmp / "goal.json"
    path.write_text(
        '{"id": "g1", "title": "A goal", "objective": "Do it", "planner": "p", "worker": "p",'
        f' "policy": {policy_text}, "profiles": {{"p": {{"harness": "scripted"}}}}}}'
    )
    return path


GOAL_FILES = {
    "toml inf": (lambda t: toml_goal(t, policy="max_runtime_s = inf"), "max_runtime_s", "finite"),
    "toml nan": (lambda t: toml_goal(t, policy="max_runtime_s = nan"), "max_runtime_s", "finite"),
    "toml 1e400": (lambda t: toml_goal(t, policy="max_cost_usd = 1e400"), "max_cost_usd", "finite"),
    "toml factor 1e300": (
        lambda t: toml_goal(t, policy="upstream_backoff = { factor = 1e300 }"),
        "upstream_backoff.factor",
        "100",
    ),
    "toml max_s inf": (
        lambda t: toml_goal(t, policy="upstream_backoff = { max_s = inf }"),
        "upstream_backoff.max_s",
        "finite",
    ),
    "toml timeout inf": (lambda t: toml_goal(t, profile="timeout_s = inf"), "timeout_s", "finite"),
    "toml 2^70 replans": (
        lambda t: toml_goal(t, policy=f"max_replans = {2**70}"),
        "max_replans",
        "less than or equal to",
    ),
    "toml price negative": (
        lambda t: toml_goal(t, profile="price = { input_per_mtok = -1, output_per_mtok = 1 }"),
        "price.input_per_mtok",
        "greater than or equal to 0",
    ),
    "toml price nan": (
        lambda t: toml_goal(t, profile="price = { input_per_mtok = 1, output_per_mtok = nan }"),
        "price.output_per_mtok",
        "finite",
    ),
    "toml price inf": (
        lambda t: toml_goal(
            t,
            profile="price = { input_per_mtok = 1, output_per_mtok = 1, cached_input_per_mtok = inf }",
        ),
        "price.cached_input_per_mtok",
        "finite",
    ),
    "toml max_quota_wait_s inf": (
        lambda t: toml_goal(t, policy="max_quota_wait_s = inf"),
        "max_quota_wait_s",
        "finite",
    ),
    "toml max_quota_wait_s negative": (
        lambda t: toml_goal(t, policy="max_quota_wait_s = -1"),
        "max_quota_wait_s",
        "greater than 0",
    ),
    "json Infinity": (
        lambda t: json_goal(t, '{"max_runtime_s": Infinity}'),
        "max_runtime_s",
        "finite",
    ),
    "json NaN": (lambda t: json_goal(t, '{"max_runtime_s": NaN}'), "max_runtime_s", "finite"),
    "json 1e400": (
        lambda t: json_goal(t, '{"upstream_backoff": {"initial_s": 1e400}}'),
        "upstream_backoff.initial_s",
        "finite",
    ),
    "json string 1e400": (
        lambda t: json_goal(t, '{"max_runtime_s": "1e400"}'),
        "max_runtime_s",
        "finite",
    ),
}


@pytest.mark.parametrize("case", sorted(GOAL_FILES))
def test_new_refuses_a_goal_file_with_a_bad_number_and_stores_nothing(
    tmp_path: Path, case: str
) -> None:
    make, field, problem = GOAL_FILES[case]
    store = tmp_path / "s.db"
    result = governor(store, "new", str(make(tmp_path)))
    assert_one_line(result, 3, field, problem)
    assert governor(store, "export", "g1").returncode == 4


def test_new_refuses_a_yaml_goal_file_with_an_infinite_budget(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    path = tmp_path / "goal.yaml"
    path.write_text(
        "id: g1\ntitle: A goal\nobjective: Do it\nplanner: p\nworker: p\n"
        "policy:\n  max_runtime_s: .inf\nprofiles:\n  p:\n    harness: scripted\n"
    )
    store = tmp_path / "s.db"
    assert_one_line(governor(store, "new", str(path)), 3, "max_runtime_s", "finite")
    assert governor(store, "export", "g1").returncode == 4


@pytest.fixture
def goal(tmp_path: Path) -> Path:
    store = tmp_path / "s.db"
    created = governor(store, "new", str(toml_goal(tmp_path)))
    assert created.returncode == 0, created.stderr
    return store


RAISES = [
    *[("runtime", to) for to in ("inf", "nan", "1e400", "-inf", "1e30", str(2**70))],
    ("replans", "inf"),
    ("replans", "1e30"),
    ("cost", "nan"),
    ("attempts", "inf"),
]


@pytest.mark.parametrize(
    ("ledger", "to"), RAISES, ids=[f"{ledger} to {to}" for ledger, to in RAISES]
)
def test_raise_refuses_a_bad_limit_and_the_goal_stays_readable(
    goal: Path, ledger: str, to: str
) -> None:
    extra = ["--work", "p1-a"] if ledger == "attempts" else []
    result = governor(
        goal, "raise", "g1", "--ledger", ledger, f"--to={to}", "--reason", "r", *extra
    )
    assert result.returncode in (4, 5), result.stderr  # attempts: no such item (yet)
    assert_one_line(result, result.returncode)
    if ledger != "attempts":
        assert f"{ledger} cannot be raised to" in result.stderr
    exported = governor(goal, "export", "g1")
    assert exported.returncode == 0, exported.stderr
    assert len(exported.stdout.splitlines()) == 1
    status = governor(goal, "status", "g1", "--json")
    assert status.returncode == 0, status.stderr
    json.loads(status.stdout)


def test_raise_to_the_largest_runtime_is_stored_and_read_back(goal: Path) -> None:
    result = governor(
        goal, "raise", "g1", "--ledger", "runtime", "--to", "1e10", "--reason", "r", "--json"
    )
    assert result.returncode == 0, result.stderr
    assert '"to":10000000000.0' in governor(goal, "export", "g1").stdout


def story_lines() -> list[str]:
    story = Story("g1")
    story.plan("a")
    story.attempt("p1-a", failure_class="upstream", retry_after_s=30)
    story.op("raise_budget", ledger="runtime", to=20000, reason="more")
    return [encode(e).decode() for e in story.events]


HISTORY_EDITS = {
    "an infinite runtime budget": ('"max_runtime_s":14400.0', '"max_runtime_s":Infinity', 1),
    "a NaN runtime budget": ('"max_runtime_s":14400.0', '"max_runtime_s":NaN', 1),
    "a 1e400 raise": ('"to":20000.0', '"to":1e400', None),
    "a raise written as the string 1e400": ('"to":20000.0', '"to":"1e400"', None),
    "a back-off factor of 1e300": ('"factor":2.0', '"factor":1e300', 1),
    "an infinite retry-after": ('"retry_after_s":30.0', '"retry_after_s":1e999', None),
    "an item budget past 2^64": ('"max_attempts":3,', f'"max_attempts":{2**64},', None),
}


def edited_history(tmp: Path, case: str) -> tuple[Path, int]:
    old, new, line = HISTORY_EDITS[case]
    lines = story_lines()
    if line is None:
        line = next(n for n, text in enumerate(lines, 1) if old in text)
    assert old in lines[line - 1], (old, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new)
    path = tmp / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, line


@pytest.mark.parametrize("case", sorted(HISTORY_EDITS))
def test_validate_import_and_replay_refuse_a_history_with_a_bad_number(
    tmp_path: Path, case: str
) -> None:
    path, line = edited_history(tmp_path, case)
    store = tmp_path / "s.db"
    assert_one_line(governor(store, "validate", str(path)), 3, f"line {line}:")
    assert_one_line(governor(store, "import", str(path)), 3, f"line {line}:")
    assert governor(store, "export", "g1").returncode == 4
    replayed = governor(store, "replay", str(path), "--json")
    assert replayed.returncode == 3
    assert "Traceback" not in replayed.stderr


def test_the_unedited_history_is_valid_and_imports(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(story_lines()) + "\n")
    store = tmp_path / "s.db"
    assert governor(store, "validate", str(path)).returncode == 0
    assert governor(store, "import", str(path)).returncode == 0
    assert governor(store, "export", "g1").stdout.splitlines() == story_lines()


OPTIONS = [
    ("service status --errors", ["service", "status", "--errors", str(2**70)], "--errors"),
    ("events --after", ["events", "g1", "--after", str(2**70)], "--after"),
    ("replay --at", ["replay", "h.jsonl", "--at", str(2**64)], "--at"),
    ("serve --lease-ttl nan", ["serve", "--lease-ttl", "nan"], "--lease-ttl"),
    ("serve --poll-s inf", ["serve", "--poll-s", "inf"], "--poll-s"),
    (
        "serve --max-goals-per-tick 2^70",
        ["serve", "--max-goals-per-tick", str(2**70)],
        "--max-goals-per-tick",
    ),
    ("run --lease-ttl inf", ["run", "g1", "--lease-ttl", "inf"], "--lease-ttl"),
    ("run --max-wait nan", ["run", "g1", "--max-wait", "nan"], "--max-wait"),
    (
        "tune --samples 2^70",
        ["tune", "h.jsonl", "--grid", "max_replans=1..2", "--samples", str(2**70)],
        "--samples",
    ),
]


@pytest.mark.parametrize(("name", "argv", "option"), OPTIONS, ids=[o[0] for o in OPTIONS])
def test_an_option_past_64_bits_or_not_finite_is_a_usage_error(
    tmp_path: Path, name: str, argv: list[str], option: str
) -> None:
    result = governor(tmp_path / "s.db", *argv)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert option in result.stderr.strip().splitlines()[-1]
