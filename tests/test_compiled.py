"""Which build a run imports: the compiled modules of the compiled build, or the sources.

``.ci/compiled test`` (decision record 0031) runs the core, analysis, replay and golden
tests against the installed mypyc wheel with ``GOVERNOR_COMPILED=1``: there every module
the build hook includes (``pyproject.toml``) must be an extension module and every module
it leaves out a ``.py`` file, so the tier cannot pass by testing the sources. Everywhere
else every governor module is its ``.py`` source (the pure install needs no compiler).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import tomllib
from pathlib import Path
from typing import Any

import governor

COMPILED_RUN = os.environ.get("GOVERNOR_COMPILED") == "1"
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _hook() -> dict[str, Any]:
    with PYPROJECT.open("rb") as f:
        config = tomllib.load(f)
    hook: dict[str, Any] = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["mypyc"]
    return hook


def _under(path: str, patterns: list[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in patterns)


def _modules() -> dict[str, str]:
    """Every module of the governor package, by name, with its file relative to the
    project's root (``governor/core/fold.py``)."""
    found = {}
    for info in pkgutil.walk_packages(governor.__path__, "governor."):
        relative = info.name.replace(".", "/") + ("/__init__.py" if info.ispkg else ".py")
        found[info.name] = relative
    return found


def test_the_hook_compiles_the_core_and_the_replay_loop_only_when_asked() -> None:
    hook = _hook()
    assert hook["enable-by-default"] is False
    compiled = [
        name
        for name, path in _modules().items()
        if _under(path, hook["include"]) and not _under(path, hook["exclude"])
    ]
    assert "governor.core.fold" in compiled
    assert "governor.core.rules.decider" in compiled
    assert "governor.analysis.replay" in compiled
    assert "governor.core.events" not in compiled  # pydantic models stay interpreted


def test_each_module_is_compiled_exactly_when_the_build_says_so() -> None:
    hook = _hook()
    wrong = []
    for name, path in _modules().items():
        if name.startswith("governor.core") or name in (
            "governor.analysis.replay",
            "governor.render.lines",
        ):
            module = importlib.import_module(name)
            file = module.__file__ or ""
            expect_compiled = (
                COMPILED_RUN and _under(path, hook["include"]) and not _under(path, hook["exclude"])
            )
            if file.endswith(".py") == expect_compiled:
                wrong.append(f"{name}: {file}")
    assert not wrong, "\n".join(wrong)


def test_no_module_the_build_compiles_defines_a_pydantic_model_or_a_struct() -> None:
    # a class made by its metaclass (pydantic, msgspec) cannot be a mypyc native class:
    # its module must stay interpreted (the hook's exclude)
    import inspect

    import msgspec
    from pydantic import BaseModel

    hook = _hook()
    wrong = []
    for name, path in _modules().items():
        if not _under(path, hook["include"]) or _under(path, hook["exclude"]):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and value.__module__ == name
                and issubclass(value, BaseModel | msgspec.Struct)
            ):
                wrong.append(f"{name}.{value.__name__}")
    assert not wrong, "\n".join(wrong)
