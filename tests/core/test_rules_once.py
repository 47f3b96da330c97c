"""Every rule is decided once: in a row of a table in ``governor/core/rules/``.

A module outside that package may *name* a rule (compare a decision's ``rule`` with it,
explain it), but it must not *make* a decision that carries one: no rule id (``goal.8``,
``work.same_failure``, ``fleet.3``, ``budget.2``…) as a ``rule=`` argument or as any
call's argument (a decision's constructor, a rule's helpers: ``out``, ``plan``, ``_as``…),
as the ``rule`` of a dict literal, or assigned to a ``rule`` attribute. And the rules hold
no ``type: ignore``: the tables are plain, typed code.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Final

import pytest

import governor

ROOT = Path(governor.__file__).resolve().parent
"""The sources of the governor imported (the compiled build ships them beside its modules)."""
RULES = ROOT / "core" / "rules"

RULE_ID: Final = re.compile(r"(goal|work|fleet|budget)\.(\d+|same_failure)")
"""A rule id as the tables write it (an event type such as ``work.created`` is not one)."""

RULE_PREFIX: Final = re.compile(r"(goal|work|fleet|budget)\.")
"""How an f-string that makes a rule id starts."""


def _is_rule_id(node: ast.AST) -> bool:
    """A string naming a rule: a constant, or an f-string that starts with one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return RULE_ID.fullmatch(node.value) is not None
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        return isinstance(first, ast.Constant) and RULE_PREFIX.match(str(first.value)) is not None
    if isinstance(node, ast.IfExp):
        return _is_rule_id(node.body) or _is_rule_id(node.orelse)
    return False


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def decided_rules(source: str) -> list[str]:
    """The lines of ``source`` that make a decision carrying a rule id."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "rule" and _is_rule_id(keyword.value):
                    found.append(f"{node.lineno}: rule= {ast.unparse(keyword.value)}")
            for arg in node.args:  # a decision's constructor, a rule's helper (``out``, …)
                if _is_rule_id(arg):
                    found.append(f"{node.lineno}: {_name(node.func)}({ast.unparse(arg)})")
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "rule" and _is_rule_id(value):
                    found.append(f"{node.lineno}: {{'rule': {ast.unparse(value)}}}")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            named_rule = any(_name(t) == "rule" for t in targets if isinstance(t, ast.expr))
            if named_rule and node.value is not None and _is_rule_id(node.value):
                found.append(f"{node.lineno}: rule = {ast.unparse(node.value)}")
    return found


def outside_the_rules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if RULES not in p.parents)


@pytest.mark.parametrize("path", outside_the_rules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_outside_the_rules_decides_a_rule(path: Path) -> None:
    assert decided_rules(path.read_text()) == []


def test_the_rule_tables_decide_every_rule_of_the_spec() -> None:
    """The check above looks where the rules are: inside ``core/rules/`` every goal rule
    1-12, every work rule 1-9, the fleet rules and the same failure again are decided."""
    found = " ".join(
        line for path in RULES.rglob("*.py") for line in decided_rules(path.read_text())
    )
    ids = set(re.findall(r"['\"]((?:goal|work|fleet|budget)\.(?:\d+|same_failure))['\"]", found))
    wanted = {f"goal.{n}" for n in range(1, 13)} | {f"work.{n}" for n in range(1, 10)}
    wanted |= {f"fleet.{n}" for n in range(1, 7)} | {"goal.same_failure", "work.same_failure"}
    assert wanted <= ids, sorted(wanted - ids)


@pytest.mark.parametrize(
    "source",
    [
        'Decision(status="ready", next_action="run", reason="r", rule="goal.8", ledger=x)\n',
        'ctx.out("ready", "run", "r", "goal.8")\n',
        'd._replace(rule="fleet.3")\n',
        'record = {"rule": "work.same_failure"}\n',
        'decision.rule = "budget.2"\n',
        'WorkDecision(work_id=w, status="ready", next_action="run", reason=r, rule=f"work.{n}")\n',
    ],
    ids=["keyword", "helper", "replace", "dict", "attribute", "f-string"],
)
def test_the_check_sees_a_decision_made_outside_the_tables(source: str) -> None:
    assert decided_rules(source) != []


@pytest.mark.parametrize(
    "source",
    [
        'if decision.rule == "goal.10":\n    pass\n',
        'SAME = ("goal.same_failure", "work.same_failure")\n',
        'why = "rule goal.4 stopped it"\n',
        'Event(type="work.created")\n',
    ],
    ids=["compared", "named", "in-words", "event-type"],
)
def test_the_check_lets_a_module_name_a_rule(source: str) -> None:
    assert decided_rules(source) == []


@pytest.mark.parametrize("path", sorted(RULES.rglob("*.py")), ids=lambda p: p.name)
def test_the_rules_hold_no_type_ignore(path: Path) -> None:
    assert "type: ignore" not in path.read_text()
