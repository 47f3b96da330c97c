"""The core reads plainly (issue 26): its values are built one way, by their field names.

* A decision, a work item's decision and a ledger row are built with keywords (their
  named tuple's own constructor), never positionally and never through
  ``tuple.__new__``; a rule reads a named tuple by name, never by index.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

from governor.core import decision, ledger

CORE = Path(__file__).resolve().parents[2] / "governor" / "core"
NAMED = {
    cls.__name__
    for cls in (
        decision.Decision,
        decision.WorkDecision,
        ledger.Ledger,
        ledger.ReplanLedger,
        ledger.AttemptLedger,
        ledger.WorkLedger,
    )
}


def core_sources() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def built_by_position(source: str) -> list[str]:
    """The lines that build one of ``NAMED`` positionally, or call ``tuple.__new__``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "__new__"
            and isinstance(node.value, ast.Name)
            and node.value.id == "tuple"
        ):
            found.append(f"{node.lineno}: tuple.__new__")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in NAMED
            and node.args
        ):
            found.append(f"{node.lineno}: {node.func.id} built by position")
    return found


@pytest.mark.parametrize("path", core_sources(), ids=lambda p: str(p.relative_to(CORE)))
def test_core_values_are_built_by_name(path: Path) -> None:
    assert built_by_position(path.read_text()) == []


def test_the_checker_sees_a_positional_build() -> None:
    source = (
        "_new = tuple.__new__\n"
        "d = Decision('ready', 'plan', 'why', 'goal.1', NO_LEDGER)\n"
        "w = WorkDecision(work_id='a', status='ready', next_action='run', reason='', rule='')\n"
    )
    assert built_by_position(source) == [
        "1: tuple.__new__",
        "2: Decision built by position",
    ]


LONG_ALLOWED: Final[set[str]] = {"wire/derived_code.py"}
"""Core modules allowed past ``LONGEST``: the wire's functions written ahead, generated
(decision record 0038: one factory per derived function, never edited by hand)."""
LONGEST: Final = 600
"""A core module holds one concept whole, split on a seam between concepts and never on a
line count (STYLE.md; issue 36 joins what a 300-line cap split): past ~600 lines a module
likely holds two concepts."""


def long_modules() -> set[str]:
    """The core modules over ``LONGEST`` lines."""
    return {
        str(path.relative_to(CORE))
        for path in core_sources()
        if len(path.read_text().splitlines()) > LONGEST
    }


def test_no_core_module_is_over_600_lines() -> None:
    assert long_modules() <= LONG_ALLOWED
