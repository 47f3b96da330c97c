"""The terminal of issue 27 §1: a real ``governor run`` under a pseudo-terminal draws one
live row per agent call in flight; redirected, it writes plain lines only (no carriage
return, no escape sequence); ``NO_COLOR`` turns colour off; heartbeats; ``tune`` fits the
terminal and ``simulate`` / ``tune`` write no ``\\r`` frames into a log.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
from pathlib import Path

import pytest

from governor.cli.live import PlainScreen
from governor.drive.calls import Calls, RunningCall, last_line
from governor.render.progress import format_heartbeat, format_running
from tests.e2e.cli import COMPLETE, GOVERNOR, Project, done, plan, planner_script, worker_script
from tests.terminal.tty import run_in_tty

SGR = re.compile(rb"\x1b\[[0-9;]*m")
"""Select Graphic Rendition: colours and bold."""
HOSTILE = "writing the \u001b]0;pwned\u0007 form handler"
"""An agent's output line holding an escape sequence that would retitle the terminal."""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A goal whose planner and worker each talk, then take a few seconds."""
    project = Project(tmp_path)
    scripts = [
        planner_script(
            [{"stdout": "reading the objective\n", "delay_s": 1.5, "reply": plan("a")},
             {"reply": COMPLETE}]
        ),
        worker_script("a", [{"stdout": HOSTILE + "\n", "delay_s": 3, "reply": done("a")}]),
    ]  # fmt: skip
    agent = {"harness": "scripted", "args": [project.scenario("scenario.json", scripts)]}
    project.goal("g", agent, agent)
    return project


def test_run_on_a_terminal_draws_a_live_row_per_call_and_colours_the_status(
    project: Project,
) -> None:
    env = {k: v for k, v in project.env.items() if k != "NO_COLOR"}
    shown = run_in_tty([GOVERNOR, "run", "g"], cwd=project.root, env=env)
    assert shown.code == 0, shown.text[-2000:]
    assert b"\x1b[2K" in shown.raw  # rows redrawn in place
    assert re.search(
        r"p1-a attempt 1\s+\d+s\s+│ writing the \\x1b\]0;pwned\\x07 form handler", shown.text
    )
    assert re.search(r"plan p1\s+\d+s\s+│ reading the objective", shown.text)
    assert b"\x1b]0;pwned" not in shown.raw  # the agent's escape is shown, never obeyed
    assert "p1-a attempt 1: succeeded (charged)" in shown.text
    assert b"\x1b[1;32msucceeded\x1b[0m/none" in shown.raw  # the status word, in colour


def test_no_color_turns_colour_off_on_a_terminal(project: Project) -> None:
    shown = run_in_tty(
        [GOVERNOR, "run", "g"], cwd=project.root, env={**project.env, "NO_COLOR": "1"}
    )
    assert shown.code == 0, shown.text[-2000:]
    assert "succeeded/none" in shown.text
    assert not SGR.search(shown.raw), SGR.findall(shown.raw)[:5]


def test_redirected_run_writes_plain_lines_without_carriage_returns_or_escapes(
    project: Project,
) -> None:
    result = subprocess.run(
        [GOVERNOR, "run", "g"], cwd=project.root, env=project.env, capture_output=True, timeout=180
    )
    assert result.returncode == 0, result.stderr
    for stream in (result.stdout, result.stderr):
        assert b"\r" not in stream
        assert b"\x1b" not in stream
    err = result.stderr.decode()
    assert "p1-a attempt 1 started" in err
    assert "p1-a attempt 1: succeeded (charged)" in err
    assert "succeeded/none" in result.stdout.decode()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_output_beats_after_30_silent_seconds_while_a_call_runs() -> None:
    clock, stream = Clock(), io.StringIO()
    calls = Calls(clock=clock)
    screen = PlainScreen(
        stream, lambda: format_heartbeat(calls.snapshot()), clock=clock, poll_s=3600
    )
    try:
        screen.line("p1-a attempt 1 started")
        with calls.running("r-1", "p1-a", 1):
            clock.now = 29.0
            screen.tick()
            assert stream.getvalue().count("\n") == 1  # silent for 29 s: nothing yet
            clock.now = 30.0
            screen.tick()
            assert stream.getvalue().splitlines()[-1] == "still running: p1-a attempt 1 for 30s"
            clock.now = 45.0
            screen.tick()  # 15 s after the heartbeat: not again
            assert stream.getvalue().count("\n") == 2
        clock.now = 120.0
        screen.tick()  # nothing runs: no heartbeat
        assert stream.getvalue().count("\n") == 2
    finally:
        screen.close()


def test_the_live_texts_escape_nothing_themselves_and_keep_the_last_line() -> None:
    assert last_line(b"one\ntwo\r\n\n") == "two"
    assert last_line(b"50%\r75%\r") == "75%"  # a progress bar's latest frame
    assert last_line(b"") == ""
    call = RunningCall("p2-api", 2, 65.0, "compiling")
    assert format_running(call) == "  p2-api attempt 2  1m05s  │ compiling"
    assert (
        format_running(RunningCall("plan p3", None, 3.0, "")) == "  plan p3  3s  │ (no output yet)"
    )
    assert (
        format_heartbeat([call])
        == "still running: p2-api attempt 2 for 1m05s (last output: compiling)"
    )
    assert format_heartbeat([]) is None


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    made = subprocess.run(
        [GOVERNOR, "simulate", "--goals", "40", "--out", "corpus"],
        cwd=tmp_path, capture_output=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert b"\r" not in made.stderr  # the meter wrote \r frames into logs before issue 27
    assert b"simulating: 40/40" in made.stderr
    return tmp_path


def test_tune_redirected_writes_no_carriage_return(corpus: Path) -> None:
    tuned = subprocess.run(
        [GOVERNOR, "tune", "corpus", "--grid", "max_replans=2..4", "--bootstrap", "0", "--workers", "1"],
        cwd=corpus, capture_output=True, timeout=300,
    )  # fmt: skip
    assert tuned.returncode == 0, tuned.stderr
    assert b"\r" not in tuned.stderr + tuned.stdout
    assert b"evaluating: " in tuned.stderr
    assert max(map(len, tuned.stdout.decode().splitlines())) > 100  # a log keeps whole rows


@pytest.mark.parametrize("columns", [80, 60])
def test_tunes_table_fits_the_terminal(corpus: Path, columns: int) -> None:
    argv = [GOVERNOR, "tune", "corpus", "--grid", "max_replans=2..4", "--grid",
            "max_uncharged_replans=1..2", "--bootstrap", "0", "--workers", "1", "--quiet"]  # fmt: skip
    shown = run_in_tty(argv, cwd=corpus, env=dict(os.environ), columns=columns)
    assert shown.code == 0, shown.text[-2000:]
    lines = shown.text.replace("\r\n", "\n").splitlines()
    assert "the Pareto frontier (success against cost, cheapest first):" in lines
    assert max(map(len, lines)) < columns, [line for line in lines if len(line) >= columns]
    assert any(line.startswith("max_replans=") for line in lines)
