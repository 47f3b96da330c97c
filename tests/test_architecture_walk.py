"""``docs/architecture.md`` tells the core as it is.

Every ``governor.module.function`` (or ``module.Class.method``) its "Follow one event"
names is imported and must be a callable, and the walk passes through each step it
promises; its "Read in this order" table gives every core module a line.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
NAME = re.compile(r"`(governor(?:\.\w+)+)`")


def walk() -> str:
    text = DOC.read_text()
    _, _, tail = text.partition("### Follow one event")
    assert tail, "docs/architecture.md walks one event"
    return tail.split("\n#", 1)[0]


def named() -> list[str]:
    return sorted(set(NAME.findall(walk())))


def resolve(dotted: str) -> object:
    """The object a dotted name names: its longest importable module, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr)
        return found
    raise AssertionError(f"{dotted}: no module")


@pytest.mark.parametrize("dotted", named())
def test_each_function_the_walk_names_exists(dotted: str) -> None:
    assert callable(resolve(dotted)), f"{dotted} is not a function"


def test_the_walk_goes_from_the_store_to_the_store() -> None:
    names = named()
    for step in (
        "governor.store.",
        "governor.core.wire.decoder.",
        "governor.core.fold.",
        "governor.core.rules.decide.",
        "governor.core.route.",
        "governor.drive.act.",
        "governor.drive.append.",
    ):
        assert any(n.startswith(step) for n in names), f"the walk skips {step}"


def test_a_name_that_is_gone_fails() -> None:
    with pytest.raises(AttributeError):
        resolve("governor.core.rules.decide.no_such_function")


def test_every_core_module_has_its_line() -> None:
    from tests.test_layers import core_modules

    text = DOC.read_text()
    _, _, tail = text.partition("### Read in this order")
    table = tail.split("\n#", 1)[0]
    listed = set(re.findall(r"\| `([\w/]+)\.py` \|", table))
    assert listed == {name.replace(".", "/") for name in core_modules()}
