"""Fuzz family 3: random values for every option of every command.

Every option of every ``governor`` command (read from the parser itself, so a new
option is fuzzed without a change here) gets random values: hostile numbers (``nan``,
``inf``, ``1e400``, 2^64, negatives), random text, control characters, and valid ones.
Commands that finish by themselves run in full against a fresh copy of a store holding
two stopped goals; the promise is checked after each (``tests.fuzz.harness``).

``serve``, ``ui``, ``demo``, ``probe`` and ``temporal worker|start`` run until stopped,
run an agent or need a Temporal server: their options are parsed only, and every number
they accept must be finite.

Paths that a command writes (``--store``, ``-o``, ``--out``, ``--plot``, ``--dir``,
``--log-file``, ``--metrics-file``) are kept inside the test's folder, and options that
only ask for more work (``--goals``, ``--samples``, ``--workers``) are capped, so a
case measures the promise, not the machine.
"""

from __future__ import annotations

import argparse
import io
import math
import shutil
from collections.abc import Iterator
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governor.cli.main import build_parser
from tests.fuzz.harness import (
    Outcome,
    cases,
    check_outcome,
    check_store,
    deadline,
    governor,
    inside,
    tally,
)
from tests.fuzz.mutate import HOSTILE_TEXT

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
STOPPED = "g-replans-exhausted"
BLOCKED = "g-planner-upstream-bound"
BASES: Final[dict[str, tuple[str, ...]]] = {
    "new": ("goal.toml",),
    "run": (STOPPED,),
    "tick": (BLOCKED,),
    "status": (STOPPED,),
    "list": (),
    "events": (STOPPED,),
    "export": (STOPPED,),
    "import": ("h.jsonl",),
    "resume": (BLOCKED, "--reason", "r"),
    "cancel": (BLOCKED,),
    "raise": (STOPPED, "--ledger", "replans", "--to", "5", "--reason", "r"),
    "plan approve": (STOPPED, "p1"),
    "plan reject": (STOPPED, "p1", "--reason", "r"),
    "work accept": (STOPPED, "p1-a"),
    "work retry": (STOPPED, "p1-a", "--reason", "r"),
    "work cancel": (STOPPED, "p1-a"),
    "work reopen": (STOPPED, "p1-a"),
    "work abandon": (STOPPED, "p1-a", "--reason", "r"),
    "validate": ("h.jsonl",),
    "replay": ("h.jsonl",),
    "explain": ("h.jsonl",),
    "reclassify": ("h.jsonl",),
    "simulate": ("--goals", "2", "--out", "sim-out"),
    "tune": ("sim", "--grid", "max_replans=1..2", "--workers", "1", "--quiet"),
    "doctor": ("goal.toml",),
    "service status": (),
    "upstreams": (),
    "store check": (),
    "completion": ("bash",),
    "schema": ("goal",),
    "forecast": ("goal.toml", "--corpus", "sim", "--bootstrap", "2", "--workers", "1"),
    "pool set": ("team", "--usd", "5", "--per", "day"),
    "pool list": (),
    "pool show": ("team",),
    "pool delete": ("team",),
    "grant": (STOPPED, "--usd", "1", "--reason", "r"),
    "decline": (STOPPED, "--reason", "r"),
}
"""Each command that finishes by itself, with valid values for what it requires."""
PARSED_ONLY: Final = {
    "serve": (),
    "ui": (),
    "demo": (),
    "probe": ("scripted",),
    "temporal worker": (),
    "temporal start": (STOPPED,),
    "temporal doctor": (STOPPED,),
}
WRITES: Final = frozenset(
    {"--store", "-o", "--output", "--out", "--plot", "--dir", "--log-file", "--metrics-file"}
)
CAPS: Final = {
    "--goals": 20,
    "--samples": 3,
    "--workers": 2,
    "--max-goals-per-tick": 50,
    "--bootstrap": 20,
}

GOAL_TOML = """id = "fuzz"
title = "A goal"
objective = "Do it"
planner = "p"
worker = "p"
[profiles.p]
harness = "scripted"
"""


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, f"{prefix} {name}".strip())
            return
    yield prefix, parser


COMMANDS: Final = dict(_commands(build_parser()))


def options(command: str) -> list[argparse.Action]:
    parser = COMMANDS[command]
    return [a for a in parser._actions if a.option_strings and "--help" not in a.option_strings]


NUMBERS: Any = st.sampled_from(
    ["nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "0", "-0", "-1", "1", "0.5",
     "1e-320", str(2**63 - 1), str(2**63), str(2**64 + 1), "9" * 5000, "0x10", "1_000", " 5 ",
     "١٢", "", "  ", "30", "3600", "2592001", "65535", "65536"]
)  # fmt: skip


@st.composite
def value(draw: st.DrawFn, action: argparse.Action) -> str:
    options: list[Any] = [NUMBERS, HOSTILE_TEXT, st.text(max_size=24), st.integers().map(str),
                          st.floats().map(repr)]  # fmt: skip
    if action.choices:
        options.append(st.sampled_from(sorted(str(c) for c in action.choices)))
    text: str = draw(st.one_of(*options))
    if action.option_strings[0] in CAPS or action.dest in ("goals", "samples", "workers"):
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if math.isfinite(number) and number > CAPS.get(action.option_strings[-1], 3):
            text = str(CAPS.get(action.option_strings[-1], 3))
    if set(action.option_strings) & WRITES:
        text = "w-" + "".join(c if c.isalnum() or c in ".:-_" else "_" for c in text)[:40]
    return text


@st.composite
def command_lines(draw: st.DrawFn, commands: list[str]) -> tuple[str, list[str]]:
    command = draw(st.sampled_from(commands))
    argv = [*command.split(), *BASES.get(command, PARSED_ONLY.get(command, ()))]
    chosen = options(command)
    for action in draw(st.lists(st.sampled_from(chosen), min_size=1, max_size=3)):
        flag = draw(st.sampled_from(action.option_strings))
        if action.nargs == 0:
            argv.append(flag)
            continue
        text = draw(value(action))
        argv.extend([f"{flag}={text}"] if draw(st.booleans()) else [flag, text])
    return command, argv


@pytest.fixture
def template(tmp_path: Path) -> Path:
    """A store with a goal that stopped and one that is blocked, and the files the
    commands name (a history, a goal file, a corpus)."""
    folder = tmp_path / "template"
    folder.mkdir()
    with inside(folder):
        for name in ("replans_exhausted", "planner_upstream_bound"):
            outcome = governor(["import", str(GOLDEN / f"{name}.jsonl"), "--store", "s.db"])
            assert outcome.code == 0, outcome.stderr
        sim = governor(["simulate", "--goals", "2", "--out", "sim", "--store", "s.db"])
        assert sim.code == 0, sim.stderr
    shutil.copy(GOLDEN / "replans_exhausted.jsonl", folder / "h.jsonl")
    (folder / "goal.toml").write_text(GOAL_TOML)
    return folder


def test_every_command_is_fuzzed() -> None:
    assert set(COMMANDS) == set(BASES) | set(PARSED_ONLY)


def test_random_option_values_keep_the_promise(
    tmp_path: Path,
    template: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOVERNOR_STORE", raising=False)
    counter = iter(range(10**9))

    @settings(
        max_examples=cases(request.config, long=2_000),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(line=command_lines(sorted(BASES)))
    def case(line: tuple[str, list[str]]) -> None:
        folder = tmp_path / f"c{next(counter)}"
        shutil.copytree(template, folder)
        _command, argv = line
        with inside(folder):
            if not any(a == "--store" or a.startswith("--store=") for a in argv):
                argv = [*argv, "--store", "s.db"]
            outcome = governor(argv)
            counted.add(outcome)
            check_outcome(outcome)
            for store in folder.glob("*.db"):
                check_store(str(store))
        shutil.rmtree(folder, ignore_errors=True)

    with tally("options", request) as counted, inside(tmp_path):
        case()


def test_options_of_long_running_commands_parse_to_finite_values(
    request: pytest.FixtureRequest,
) -> None:
    @settings(
        max_examples=cases(request.config, long=500),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(line=command_lines(sorted(PARSED_ONLY)))
    def case(line: tuple[str, list[str]]) -> None:
        _command, argv = line
        err = io.StringIO()
        code: object = 0
        with deadline(), redirect_stderr(err):
            try:
                args = build_parser().parse_args(argv)
            except SystemExit as exc:
                code = exc.code
        counted.add(Outcome(tuple(argv), code if isinstance(code, int) else 2, "", ""))
        if code != 0:
            assert code == 2, err.getvalue()
            assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
            assert "Traceback" not in err.getvalue()
            return
        for name, parsed in vars(args).items():
            if isinstance(parsed, float):
                assert math.isfinite(parsed), (argv, name, parsed)

    with tally("options (parsed)", request) as counted:
        case()
