"""The package import graph has no upward arrow and no circle.

Each package imports only those below it, nothing imports the facade (``governor``), and
no two modules import each other, directly or round a loop. Every module of ``governor``
is read as source; every import counts — at the top, inside a function, under
``TYPE_CHECKING``. ``docs/architecture.md`` draws the same layers.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Final

import pytest

ROOT = Path(__file__).resolve().parent.parent / "governor"

LAYERS: Final[tuple[tuple[str, ...], ...]] = (
    ("errors", "clock", "registry", "_version"),  # dependency-free values and the version
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
    "AgentReply": "exec",
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
"""The facade's names and the unit each comes from (``__version__`` from ``_version``)."""

FACADE_OWN: Final = frozenset({"_version"})
"""Units the facade imports at import time (the version string)."""

CORE_CIRCLES_ALLOWED: Final = False
"""Whether a circle wholly inside ``governor/core`` is tolerated: no longer (issue 26: the
core has none, and its reading order, below, keeps it so). Every circle fails."""

ANALYSIS_CIRCLES_ALLOWED: Final = False
"""Whether the known circles wholly inside ``governor/analysis`` are tolerated (the
analysis half of issue 26 owns them and turns this off once there are none); a circle
there that is not in ``KNOWN_ANALYSIS_CIRCLES`` fails all the same."""

KNOWN_ANALYSIS_CIRCLES: Final[tuple[list[str], ...]] = ()
"""None left: ``riders`` reads a trace through its own ``Trace`` protocol (it named
``whatif.Trace`` under ``TYPE_CHECKING`` while ``whatif`` imported ``riders``)."""

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
        if target == unit:
            continue
        if unit == FACADE:
            ok = target in FACADE_NAMES.values() or target in FACADE_OWN
        elif target == FACADE:
            ok = False  # the facade is the top: nothing inside imports it
        else:
            ok = LAYER_OF[target] < LAYER_OF[unit]
        if not ok:
            bad.append(f"{rel}:{line} ({unit}) imports {target}")
    return bad


def module_name(path: Path, root: Path = ROOT) -> str:
    """``governor/store/url.py`` -> ``governor.store.url`` (a package is its ``__init__``)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: Collection[str], root: Path = ROOT) -> set[str]:
    """The modules of ``governor`` one module imports, anywhere in it: ``from p import m``
    names the module ``p.m`` when there is one, else ``p`` itself."""

    def known_part(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {known_part(a.name) for a in node.names if a.name.split(".")[0] == "governor"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                head = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*head, base] if base else head)
            if base.split(".")[0] == "governor":
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if sub in known else known_part(base))
    return {m for m in found if m is not None and m != name}


def module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Every module of ``governor`` and the modules it imports."""
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    return {name: imported_modules(path, paths, root) for name, path in paths.items()}


def circles(
    graph: Mapping[str, Collection[str]],
    *,
    core_allowed: bool,
    known: Collection[list[str]] = (),
) -> list[list[str]]:
    """The import circles of a module graph: its strongly connected components of more
    than one module (Tarjan), those wholly inside ``governor.core`` left out when
    ``core_allowed``, and those in ``known``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = [stack.pop()]
            while component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    in_core = lambda ms: all(m.startswith("governor.core.") for m in ms)  # noqa: E731
    return sorted(c for c in found if not (core_allowed and in_core(c)) and c not in known)


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


TAKERS: Final = "taking a decision"
"""The group printed after the order proper: the modules that take a decision (the
decider, routing, the summary, the operator verbs). Each imports only the modules of the
order above and those before it in its group."""


def core_groups() -> list[tuple[str, list[str]]]:
    """The reading order ``governor/core/__init__.py`` prints, top down from ``decide``:
    after "Read in this order", one ``group: module, module`` line each (``wire.codec``
    names ``governor/core/wire/codec.py``); a blank line, a sentence, then the group of
    the modules that take a decision."""
    import governor.core

    _, _, tail = (governor.core.__doc__ or "").partition("Read in this order")
    assert tail, "governor/core/__init__.py prints its reading order"
    groups: list[tuple[str, list[str]]] = []
    for line in tail.splitlines()[1:]:
        group, colon, names = line.strip().partition(":")
        if colon and names.strip() and line.startswith("    "):
            groups.append((group, [name.strip() for name in names.split(",")]))
    return groups


def core_order() -> list[str]:
    """Every core module in the printed order: the order proper, then the takers."""
    return [name for _, names in core_groups() for name in names]


def core_takers() -> list[str]:
    return [name for group, names in core_groups() if group == TAKERS for name in names]


def core_modules(root: Path = CORE) -> list[str]:
    """Every module of the core, dotted below ``governor.core`` (no ``__init__``)."""
    return sorted(
        ".".join(p.relative_to(root).with_suffix("").parts)
        for p in root.rglob("*.py")
        if p.name != "__init__.py"
    )


def core_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each core module (dotted below ``governor.core``) and the core modules it imports
    (``module_graph``: at the top, in a function, under ``TYPE_CHECKING``)."""
    prefix, modules = "governor.core.", set(core_modules(root / "core"))
    return {
        name.removeprefix(prefix): {
            t.removeprefix(prefix) for t in targets if t.removeprefix(prefix) in modules
        }
        - {name.removeprefix(prefix)}
        for name, targets in module_graph(root).items()
        if name.removeprefix(prefix) in modules and name.startswith(prefix)
    }


def core_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of the core's graph (``circles``, none tolerated)."""
    return [sorted(c) for c in circles(graph, core_allowed=False)]


def arrows_against_order(
    graph: dict[str, set[str]], order: list[str], takers: Collection[str] = ()
) -> list[str]:
    """The imports against the core's order, top down: a module of the order proper that
    imports one not after it in the order proper, or a taker (``takers``, printed last)
    that imports a taker not before it."""
    top = [name for name in order if name not in takers]
    below = {name: set(top[i + 1 :]) for i, name in enumerate(top)}
    last = [name for name in order if name in takers]
    for i, name in enumerate(last):
        below[name] = set(top) | set(last[:i])
    return [
        f"{name} imports {near}, against the core's order"
        for name in order
        for near in sorted(graph.get(name, ()))
        if near not in below[name]
    ]


def test_the_core_has_no_import_circle() -> None:
    assert core_circles(core_graph()) == []


def test_the_core_order_names_every_core_module_once() -> None:
    order = core_order()
    assert len(order) == len(set(order))
    assert sorted(order) == core_modules()


def test_the_core_order_starts_from_decide() -> None:
    assert core_order()[0] == "rules.decide"
    assert core_takers(), "the modules that take a decision are printed last"


def test_each_core_module_imports_only_modules_read_after_it() -> None:
    assert arrows_against_order(core_graph(), core_order(), core_takers()) == []


def test_the_core_checker_sees_a_circle_and_a_later_import(tmp_path: Path) -> None:
    governor = tmp_path / "governor"
    root = governor / "core"
    (root / "wire").mkdir(parents=True)
    for package in (governor, root, root / "wire"):
        (package / "__init__.py").write_text("")
    (root / "a.py").write_text("from typing import TYPE_CHECKING\n")
    (root / "b.py").write_text(
        "from governor.core.a import x\nif TYPE_CHECKING:\n    from governor.core.wire.c import y\n"
    )
    (root / "wire" / "c.py").write_text("def f():\n    from governor.core import b\n")
    graph = core_graph(governor)
    assert graph == {"a": set(), "b": {"a", "wire.c"}, "wire.c": {"b"}}
    assert core_circles(graph) == [["b", "wire.c"]]
    assert arrows_against_order(graph, ["wire.c", "b", "a"]) == [
        "b imports wire.c, against the core's order"
    ]
    # a taker may import the order proper and the takers before it, nothing after it
    assert arrows_against_order(graph, ["a", "b", "wire.c"], takers={"b", "wire.c"}) == [
        "b imports wire.c, against the core's order"
    ]


def test_no_import_circle() -> None:
    known = KNOWN_ANALYSIS_CIRCLES if ANALYSIS_CIRCLES_ALLOWED else ()
    assert circles(module_graph(), core_allowed=CORE_CIRCLES_ALLOWED, known=known) == []


def test_the_checker_sees_a_circle_through_a_function_and_type_checking(tmp_path: Path) -> None:
    root = tmp_path / "governor"
    for folder in ("store", "core"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "store" / "a.py").write_text("from governor.store.b import X\n")
    (root / "store" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from governor.store import c\n"
    )
    (root / "store" / "c.py").write_text("def f():\n    from . import a\n")
    (root / "core" / "d.py").write_text("import governor.core.e\n")
    (root / "core" / "e.py").write_text("from governor.core import d\n")
    graph = module_graph(root)
    assert graph["governor.store.c"] == {"governor.store.a"}
    ring = ["governor.store.a", "governor.store.b", "governor.store.c"]
    assert circles(graph, core_allowed=True) == [ring]
    assert circles(graph, core_allowed=False) == [["governor.core.d", "governor.core.e"], ring]
    assert circles(graph, core_allowed=True, known=[ring]) == []


def test_the_checker_sees_an_import_of_the_facade(tmp_path: Path) -> None:
    root = tmp_path / "governor"
    for unit in ("drive", "exec"):
        (root / unit).mkdir(parents=True)
    (root / "_version.py").write_text("__version__ = '0'\n")
    (root / "drive" / "x.py").write_text("def f():\n    from governor import __version__\n")
    (root / "exec" / "y.py").write_text(
        "import governor\nfrom governor._version import __version__\n"
    )
    assert arrows_up(root / "drive" / "x.py", root) == ["drive/x.py:2 (drive) imports governor"]
    assert arrows_up(root / "exec" / "y.py", root) == ["exec/y.py:1 (exec) imports governor"]
