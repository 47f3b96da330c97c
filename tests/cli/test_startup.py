"""CLI start-up (issue 12): a static command table, and each command imports only its module.

No timing here (``bench/cli.py`` measures it): these tests hold the table to what the
command modules register, and check which modules a process has imported after
``--help`` and after a read command.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from governor.cli.exit_codes import STATUS_CODES
from governor.cli.main import COMMANDS, build_parser, command_of

PROBE = """
import json, sys
from governor.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _subparsers(
    parser: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_the_table_is_what_the_modules_register_in_help_order() -> None:
    registered: dict[str, tuple[str, str | None]] = {}
    for module in dict.fromkeys(m for m, _ in COMMANDS.values()):
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(f"governor.cli.{module}").register(sub)
        registered |= {a.dest: (module, a.help) for a in sub._choices_actions}
    assert registered == COMMANDS
    assert list(registered) == list(COMMANDS)


def test_the_help_without_command_modules_is_the_full_help() -> None:
    assert build_parser([]).format_help() == build_parser().format_help()


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["--help"], None),
        ([], None),
        (["status"], "status"),
        (["--store", "x.db", "list", "--json"], "list"),
        (["--actor", "me", "--store=y", "work", "accept", "g", "w"], "work"),
        (["--", "replay"], "replay"),
        (["--store"], None),
    ],
)
def test_the_command_is_the_first_word_past_the_options(
    argv: list[str], command: str | None
) -> None:
    assert command_of(argv) == command


def _probe(script: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``script`` run with the command's arguments in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-c", script, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _modules_after(argv: list[str], cwd: Path) -> tuple[int, set[str]]:
    done = _probe(PROBE, argv, cwd)
    return done.returncode, set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_help_imports_no_command_module_and_no_model(tmp_path: Path) -> None:
    code, modules = _modules_after(["--help"], tmp_path)
    assert code == 0
    commands = {f"governor.cli.{m}" for m, _ in COMMANDS.values()}
    assert not modules & commands
    assert "governor.core.events" not in modules
    assert "pydantic" not in modules


@pytest.mark.parametrize("argv", [["list"], ["status"], ["status", "--json"]])
def test_a_read_command_imports_neither_the_graph_nor_the_runner(
    argv: list[str], tmp_path: Path
) -> None:
    code, modules = _modules_after(["--store", str(tmp_path / "g.db"), *argv], tmp_path)
    assert code == 0
    assert "governor.cli.goals" in modules
    unwanted = {
        "langgraph",
        "governor.drive.runner",
        "governor.workflow.agent",
        "governor.analysis.tune_corpus",
        "governor.analysis.tune",
        "governor.cli.history",
        "governor.cli.operator",
    }
    assert not modules & unwanted


def _store_with_a_goal(tmp_path: Path) -> str:
    (tmp_path / "goal.toml").write_text(
        'id = "g1"\ntitle = "T"\nobjective = "O"\nplanner = "p"\nworker = "p"\n\n'
        '[profiles.p]\nharness = "scripted"\n'
    )
    store = str(tmp_path / "g.db")
    code, _ = _modules_after(["--store", store, "new", str(tmp_path / "goal.toml")], tmp_path)
    assert code == 0
    return store


@pytest.mark.parametrize("argv", [["list"], ["list", "--json"], ["list", "--status", "ready"]])
def test_list_imports_no_pydantic_and_no_model(argv: list[str], tmp_path: Path) -> None:
    """``list`` reads the store's summaries: neither pydantic nor an event model, nor the
    codec, the fold or the decisions (issue 12)."""
    store = _store_with_a_goal(tmp_path)
    code, modules = _modules_after(["--store", store, *argv], tmp_path)
    assert code == 0
    assert not {m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")}
    unwanted = {
        "governor.core.events",
        "governor.core.wire.codec",
        "governor.core.wire.decoder",
        "governor.core.view",
        "governor.core.rules.decide",
        "governor.drive.goals",
        "importlib.metadata",
    }
    assert not modules & unwanted
    assert "governor.store.sqlite" in modules  # it did read the store


BUILT = """
import json, sys
from governor.cli.main import main
code = main(sys.argv[1:])
from pydantic import BaseModel
def every(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from every(sub)
built = sorted(
    c.__qualname__ for c in every(BaseModel)
    if c.__module__.startswith("governor") and c.__pydantic_complete__
)
print(json.dumps([code, built, "importlib.metadata" in sys.modules]), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["status", "g1"], ["status", "g1", "--json"]])
def test_status_of_a_valid_goal_builds_no_pydantic_validator(
    argv: list[str], tmp_path: Path
) -> None:
    """``status`` reads the store's rows with the compiled decoder (SPEC §11.1), which
    builds the events without pydantic's validators: none is built, and pydantic's plugin
    loader (``importlib.metadata``) is never imported (issue 12)."""
    store = _store_with_a_goal(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", BUILT, "--store", store, *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    code, built, metadata = json.loads(done.stderr.strip().splitlines()[-1])
    assert code == 0
    assert "g1" in done.stdout
    assert built == []
    assert not metadata


RUN = """
import json, sys
from governor.cli.main import main
code = main(sys.argv[1:])
print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)
"""


def _run(argv: list[str], cwd: Path) -> tuple[int, str, set[str]]:
    """A command's exit code, its output and the modules it imported."""
    done = _probe(RUN, argv, cwd)
    code, modules = json.loads(done.stderr.strip().splitlines()[-1])
    return code, done.stdout, set(modules)


def _graph_modules(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in ("langgraph", "langchain_core")}


def test_run_of_a_stopped_goal_decides_from_the_store_without_langgraph(tmp_path: Path) -> None:
    """``run`` of a goal that has stopped finds nothing to do before it imports the graph
    (issue 26): no LangGraph, no LangChain. The first run, with work to do, is driven by
    the graph (the embedded scenario succeeds); the next ones find the goal succeeded."""
    store = _store_with_a_goal(tmp_path)
    code, first, modules = _run(["--store", store, "run", "g1", "--json"], tmp_path)
    assert (code, json.loads(first)["status"]) == (0, "succeeded")
    assert _graph_modules(modules)
    code, again, modules = _run(["--store", store, "run", "g1", "--json"], tmp_path)
    assert (code, again) == (0, first)
    assert not _graph_modules(modules)
    assert "governor.drive.runner" in modules  # decided under the lease, as the graph does
    code, text, modules = _run(["--store", store, "run", "g1"], tmp_path)
    assert code == 0
    assert "succeeded" in text
    assert not _graph_modules(modules)


def test_run_of_a_cancelled_goal_imports_no_langgraph(tmp_path: Path) -> None:
    store = _store_with_a_goal(tmp_path)
    code, _, _ = _run(["--store", store, "cancel", "g1"], tmp_path)
    assert code == 0
    code, text, modules = _run(["--store", store, "run", "g1", "--json"], tmp_path)
    assert code == STATUS_CODES["cancelled"]
    assert json.loads(text)["outcome"] == "stopped"
    assert not _graph_modules(modules)


def test_run_of_a_goal_asking_a_question_imports_no_langgraph(tmp_path: Path) -> None:
    """A goal blocked on a person's decision: ``run`` has nobody to ask, and says so
    without the graph."""
    store = str(tmp_path / "g.db")
    history = Path(__file__).resolve().parents[1] / "golden" / "work_decision_blocked.jsonl"
    code, _, _ = _run(["--store", store, "import", str(history)], tmp_path)
    assert code == 0
    code, text, modules = _run(
        ["--store", store, "run", "g-work-decision-blocked", "--json"], tmp_path
    )
    assert code == STATUS_CODES["blocked"]
    assert (json.loads(text)["outcome"], json.loads(text)["blocked_on"]) == ("stopped", "decision")
    assert not _graph_modules(modules)


def test_replay_of_a_file_imports_no_store_backend_and_no_what_if(tmp_path: Path) -> None:
    """``replay FILE`` reads the file and replays it: no store backend, none of the
    what-ifs, ``explain`` or ``replay --json``'s lines (issue 36); every step is printed."""
    history = Path(__file__).resolve().parents[1] / "golden" / "work_decision_blocked.jsonl"
    code, text, modules = _run(["replay", str(history)], tmp_path)
    assert code == 0
    assert "ledger after the last event" in text
    unwanted = {
        "governor.store.sqlite",
        "governor.store.url",
        "governor.analysis.explain",
        "governor.analysis.divergence",
        "governor.analysis.whatif",
        "governor.analysis.tries",
        "governor.render.lines",
        "statistics",
    }
    assert not modules & unwanted
    assert "governor.analysis.replay" in modules


def test_status_imports_nothing_that_drives_and_advice_only_for_a_blocker(tmp_path: Path) -> None:
    """``status`` reads through ``drive.reads``: nothing that appends or acts; the advice
    beside a blocker (and the verbs it tries) only when something blocks (issue 36)."""
    store = str(tmp_path / "g.db")
    history = Path(__file__).resolve().parents[1] / "golden" / "work_decision_blocked.jsonl"
    code, _, _ = _run(["--store", store, "import", str(history)], tmp_path)
    assert code == 0
    argv = ["--store", store, "status", "g-work-decision-blocked", "--json"]
    code, text, modules = _run(argv, tmp_path)
    assert code == 0
    (blocker,) = json.loads(text)["blockers"]  # the advice: a command that clears it
    assert blocker["commands"][0].startswith("governor work retry g-work-decision-blocked p1-a")
    assert "governor.analysis.advice" in modules
    assert not modules & {"governor.drive.goals", "governor.drive.append", "governor.drive.act"}
    _run(["--store", store, "cancel", "g-work-decision-blocked"], tmp_path)
    code, text, modules = _run(argv, tmp_path)
    assert code == 0
    assert (json.loads(text)["status"], json.loads(text)["blockers"]) == ("cancelled", [])
    unwanted = {"governor.analysis.advice", "governor.analysis.runnable", "governor.drive.goals"}
    assert not modules & unwanted
