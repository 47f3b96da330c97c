"""The core is pure: no I/O, no clock, no randomness, no environment, no logging.

This reads every module of ``governor/core`` as source and fails on any import of a
module that does I/O or reads the outside world, any call that reads a clock, and any
built-in that touches files or the terminal. It also keeps the core from importing the
shell (anything in ``governor`` but ``governor.core`` and ``governor.errors``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "governor" / "core"

FORBIDDEN_MODULES = {
    "os",
    "sys",
    "io",
    "pathlib",
    "time",
    "uuid",
    "random",
    "secrets",
    "logging",
    "subprocess",
    "socket",
    "shutil",
    "tempfile",
    "threading",
    "multiprocessing",
    "asyncio",
    "glob",
    "urllib",
    "http",
    "sqlite3",
    "psycopg",
    "requests",
    "httpx",
    "signal",
    "select",
    "fcntl",
    "builtins",
    "importlib",
    "ctypes",
    "zoneinfo",
}
FORBIDDEN_CALLS = {"now", "utcnow", "today", "monotonic", "perf_counter", "getenv", "time_ns"}
FORBIDDEN_NAMES = {"open", "print", "input", "eval", "exec", "__import__", "breakpoint"}
ALLOWED_NAMES = {("generate.py", "exec")}
"""The compiled decoder (``wire/generate.py``) generates one build function per event
model, as ``dataclasses`` generates ``__init__``: from the models' own field names
(checked to be identifiers), never from outside text. That is the only ``exec`` the core
may hold."""
ALLOWED_GOVERNOR = ("governor.core", "governor.errors")


def modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def violations(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            root = name.split(".")[0]
            if root in FORBIDDEN_MODULES:
                found.append(f"{path.name}:{getattr(node, 'lineno', 0)} imports {name}")
            if root == "governor" and not name.startswith(ALLOWED_GOVERNOR):
                found.append(
                    f"{path.name}:{getattr(node, 'lineno', 0)} imports the shell module {name}"
                )
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in FORBIDDEN_CALLS
        ):
            found.append(f"{path.name}:{node.lineno} calls .{node.func.attr}()")
        if isinstance(node, ast.Attribute) and node.attr == "environ":
            found.append(f"{path.name}:{node.lineno} reads .environ")
        if (
            isinstance(node, ast.Name)
            and node.id in FORBIDDEN_NAMES
            and (path.name, node.id) not in ALLOWED_NAMES
        ):
            found.append(f"{path.name}:{node.lineno} uses {node.id}()")
    return found


def test_the_core_has_modules_to_check() -> None:
    assert len(modules()) >= 8


@pytest.mark.parametrize("path", modules(), ids=lambda p: p.name)
def test_core_module_is_pure(path: Path) -> None:
    assert violations(path) == []


def test_the_checker_catches_an_impure_module(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import os\nfrom datetime import datetime\nx = datetime.now()\nprint(open('f'))\n"
    )
    found = violations(bad)
    assert any("imports os" in v for v in found)
    assert any(".now()" in v for v in found)
    assert any("open()" in v for v in found)
    assert any("print()" in v for v in found)


def test_exec_is_allowed_in_the_decoder_generator_only(tmp_path: Path) -> None:
    elsewhere = tmp_path / "decoder.py"
    elsewhere.write_text("exec('x = 1')\n")
    assert violations(elsewhere) == ["decoder.py:1 uses exec()"]
    generate = tmp_path / "generate.py"
    generate.write_text("exec('x = 1')\neval('1')\n")
    assert violations(generate) == ["generate.py:2 uses eval()"]
