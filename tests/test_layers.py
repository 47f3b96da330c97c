"""The package import graph has no upward arrow: each package imports only those below it.

Every module of ``governor`` is read as source; every import counts — at the top, inside
a function, under ``TYPE_CHECKING``. ``docs/architecture.md`` draws the same layers.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

ROOT = Path(__file__).resolve().parent.parent / "governor"

LAYERS: Final[tuple[tuple[str, ...], ...]] = (
    ("errors", "clock", "registry"),  # dependency-free: errors, the clock, registry records
    ("core",),  # pure: events, policy, budgets, rules, decisions, routing
    ("store", "exec"),  # the event store; running processes and agent CLIs
    ("workflow",),  # one planner or worker run
    ("drive",),  # one goal: the runner, the actions, the goal library
    ("analysis", "service"),  # histories re-read; the scheduler of many goals
    ("render",),  # every --json shape and every text
    ("graph", "temporal"),  # LangGraph: the planning graph and its deployment; Temporal workflows
    ("demo", "ui"),  # the demo scenarios; the read-only web UI
    ("cli", "api"),  # the governor command; the Python API (governor.Goal)
)
"""Bottom to top. A unit may import itself and any unit of a lower layer, nothing else."""

FACADE: Final = "governor"
"""``governor/__init__.py``: the public names, re-exported lazily. It may import only
the units its names come from; importing one of its names counts as importing that unit."""

FACADE_NAMES: Final[dict[str, str]] = {
    "AgentContext": "exec",
    "CommandRefusedError": "errors",
    "Goal": "api",
    "GoalStatus": "api",
    "GovernorError": "errors",
    "GovernorRunError": "graph",
    "InputError": "errors",
    "MAX_UNCHARGED_REPLANS": "core",
    "NotFoundError": "errors",
    "Policy": "core",
    "Question": "core",
    "RunResult": "api",
    "UpstreamUnavailable": "exec",
    "instrument": "drive",
    "planning_graph": "graph",
    "uninstrument": "drive",
}
"""The facade's names and the unit each comes from (``__version__`` is its own)."""

LAYER_OF: Final = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def unit_of_module(name: str) -> str | None:
    """The unit a module name belongs to (``governor.core.view`` -> ``core``), None outside."""
    parts = name.split(".")
    if parts[0] != "governor":
        return None
    return parts[1] if len(parts) > 1 else FACADE


def imported_units(source: str, root: Path = ROOT) -> list[tuple[int, str]]:
    """``(line, unit)`` of every import of a governor unit anywhere in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "governor":  # ``from governor import goals`` names a unit
                names = [
                    f"governor.{FACADE_NAMES.get(alias.name, alias.name)}" for alias in node.names
                ]
        for name in names:
            unit = unit_of_module(name)
            if unit is not None:
                if (
                    unit != FACADE
                    and not (ROOT / unit).exists()
                    and not (ROOT / f"{unit}.py").exists()
                ):
                    unit = FACADE  # ``from governor import __version__``
                found.append((getattr(node, "lineno", 0), unit))
    return found


def units() -> list[str]:
    return sorted(
        p.name.removesuffix(".py")
        for p in ROOT.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.name != "__init__.py")
    )


def modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def arrows_up(path: Path, root: Path = ROOT) -> list[str]:
    """The imports of one module that point up (or sideways to another unit)."""
    rel = path.relative_to(root)
    unit = FACADE if rel == Path("__init__.py") else rel.parts[0].removesuffix(".py")
    bad = []
    for line, target in imported_units(path.read_text(), root):
        if target in (unit, FACADE):
            continue
        if unit == FACADE:
            ok = target in FACADE_NAMES.values()
        else:
            ok = LAYER_OF[target] < LAYER_OF[unit]
        if not ok:
            bad.append(f"{rel}:{line} ({unit}) imports {target}")
    return bad


def test_the_facade_names_are_the_public_api() -> None:
    import governor

    assert sorted(FACADE_NAMES) == sorted(n for n in governor.__all__ if n != "__version__")


def test_every_unit_has_a_layer() -> None:
    assert set(units()) <= set(LAYER_OF), "place the new package in LAYERS and the docs"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_points_up(path: Path) -> None:
    assert arrows_up(path) == []


def test_the_checker_sees_an_upward_import_inside_a_function(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from governor.core.view import GoalView\n"
        "if TYPE_CHECKING:\n    from governor.cli.io import out\n"
        "def f():\n    from governor import drive\n"
    )
    root = tmp_path / "governor"
    for unit in ("core", "cli", "drive", "store"):
        (root / unit).mkdir(parents=True)
    (root / "store" / "x.py").write_text(source)
    assert [u for _, u in imported_units(source, root)] == ["core", "cli", "drive"]
    assert arrows_up(root / "store" / "x.py", root) == [
        "store/x.py:4 (store) imports cli",
        "store/x.py:6 (store) imports drive",
    ]


# --- the core's reading order ------------------------------------------------------------

CORE = ROOT / "core"
"""``governor/core``: its modules import only modules earlier in its reading order."""


def core_order() -> list[str]:
    """The reading order ``governor/core/__init__.py`` prints, bottom up: after "Read in
    this order", one ``group: module, module`` line each, to the first blank line
    (``wire.codec`` names ``governor/core/wire/codec.py``)."""
    import governor.core

    _, _, tail = (governor.core.__doc__ or "").partition("Read in this order")
    assert tail, "governor/core/__init__.py prints its reading order"
    order: list[str] = []
    for line in tail.splitlines()[1:]:
        if not line.strip():
            break
        _, _, names = line.partition(":")
        order.extend(name.strip() for name in names.split(","))
    return order


def core_modules(root: Path = CORE) -> list[str]:
    """Every module of the core, dotted below ``governor.core`` (no ``__init__``)."""
    return sorted(
        ".".join(p.relative_to(root).with_suffix("").parts)
        for p in root.rglob("*.py")
        if p.name != "__init__.py"
    )


def core_imports(source: str) -> set[str]:
    """The core modules ``source`` imports anywhere (at the top, in a function, under
    ``TYPE_CHECKING``), dotted below ``governor.core``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module in ("governor.core", "governor.core.wire"):  # names modules
                names = [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            if name.startswith("governor.core."):
                found.add(name.removeprefix("governor.core."))
    return found


def core_graph(root: Path = CORE) -> dict[str, set[str]]:
    graph = {}
    for name in core_modules(root):
        path = root.joinpath(*name.split(".")).with_suffix(".py")
        graph[name] = core_imports(path.read_text()) - {name}
    return graph


def core_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: its strongly connected parts of two or more."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan
        index[node] = low[node] = len(index)
        stack.append(node)
        for near in sorted(graph.get(node, ())):
            if near not in graph:
                continue
            if near not in index:
                visit(near)
                low[node] = min(low[node], low[near])
            elif near in stack:
                low[node] = min(low[node], index[near])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                circles.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def arrows_later(graph: dict[str, set[str]], order: list[str]) -> list[str]:
    """The imports of a core module of a module not earlier in ``order``."""
    place = {name: i for i, name in enumerate(order)}
    return [
        f"{name} imports {near}, later in the core's order"
        for name in order
        for near in sorted(graph.get(name, ()))
        if place.get(near, len(order)) >= place[name]
    ]


def test_the_core_has_no_import_circle() -> None:
    assert core_circles(core_graph()) == []


def test_the_core_order_names_every_core_module_once() -> None:
    order = core_order()
    assert len(order) == len(set(order))
    assert sorted(order) == core_modules()


def test_each_core_module_imports_only_modules_read_before_it() -> None:
    assert arrows_later(core_graph(), core_order()) == []


def test_the_core_checker_sees_a_circle_and_a_later_import(tmp_path: Path) -> None:
    root = tmp_path / "core"
    (root / "wire").mkdir(parents=True)
    (root / "a.py").write_text("from typing import TYPE_CHECKING\n")
    (root / "b.py").write_text(
        "from governor.core.a import x\nif TYPE_CHECKING:\n    from governor.core.wire.c import y\n"
    )
    (root / "wire" / "c.py").write_text("def f():\n    from governor.core import b\n")
    graph = core_graph(root)
    assert graph == {"a": set(), "b": {"a", "wire.c"}, "wire.c": {"b"}}
    assert core_circles(graph) == [["b", "wire.c"]]
    assert arrows_later(graph, ["a", "b", "wire.c"]) == [
        "b imports wire.c, later in the core's order"
    ]
