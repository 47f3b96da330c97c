"""The suite's two tiers: tests that start no process (the fast tier) and the rest.

``./dev test --fast`` runs the fast tier: every test module not listed in
``tests/process_modules.txt``, with a guard that makes any process a test starts (a
``subprocess.Popen``, ``os.fork``, ``os.posix_spawn``) fail that test — so a module that
begins to start processes cannot slip into the fast tier unnoticed; it fails there and
belongs in the list.

``GOVERNOR_TIER=record:FILE`` runs the suite as usual and appends to FILE the module of
every test that started a process, with what it started: how the list was made
(docs/performance.md, "The suite's time").

The guard is installed in the process that runs the tests (each xdist worker, or pytest
itself without xdist), never in an xdist controller, which starts the workers.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

PROCESS_LIST = Path(__file__).with_name("process_modules.txt")
"""The test modules that start processes, one path a line (``#`` starts a comment)."""


def process_modules() -> frozenset[str]:
    """The modules of the process tier, as paths relative to the checkout."""
    lines = PROCESS_LIST.read_text(encoding="utf-8").splitlines()
    return frozenset(
        line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()
    )


class SpawnGuard:
    """Watches every way a test can start a process, and reports or refuses it."""

    def __init__(self, on_spawn: Callable[[str], None]) -> None:
        self._on_spawn = on_spawn
        self._saved: list[tuple[Any, str, Any]] = []

    def install(self) -> None:
        # Popen._execute_child(self, args, executable, …): every subprocess and asyncio child
        self._wrap(subprocess.Popen, "_execute_child", lambda a: _argv0(a[1]))
        for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp"):
            if hasattr(os, name):
                self._wrap(os, name, _described_as(f"os.{name}"))

    def _wrap(self, owner: Any, name: str, describe: Callable[[tuple[Any, ...]], str]) -> None:
        original = getattr(owner, name)
        on_spawn = self._on_spawn

        def guarded(*args: Any, **kwargs: Any) -> Any:
            on_spawn(describe(args))
            return original(*args, **kwargs)

        self._saved.append((owner, name, original))
        setattr(owner, name, guarded)

    def uninstall(self) -> None:
        while self._saved:
            owner, name, original = self._saved.pop()
            setattr(owner, name, original)


def _described_as(call: str) -> Callable[[tuple[Any, ...]], str]:
    return lambda args: f"{call} {_argv0(args[:1])}"


def _argv0(args: Any) -> str:
    if isinstance(args, (list, tuple)):
        args = args[0] if args else ""
    if isinstance(args, (list, tuple)):
        args = args[0] if args else ""
    return os.path.basename(os.fsdecode(args)) if isinstance(args, (str, bytes)) else "?"


class Tiers:
    """The pytest plugin: ``fast`` (deselect the process tier, refuse spawns) or
    ``record:FILE`` (note which modules spawn)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.current = "(collection)"
        self.seen: set[tuple[str, str]] = set()

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        controller = config.pluginmanager.hasplugin("dsession") and not hasattr(
            config, "workerinput"
        )
        if not controller:
            SpawnGuard(self._spawned).install()

    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self.mode != "fast":
            return
        slow = process_modules()
        kept = [item for item in items if _module_of(item) not in slow]
        config.hook.pytest_deselected(items=[i for i in items if _module_of(i) in slow])
        items[:] = kept

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        self.current = _module_of(item)
        try:
            return (yield)
        finally:
            self.current = "(between tests)"

    def _spawned(self, what: str) -> None:
        # Collecting may start a process (a module asks a tool's version): only a test may not.
        if self.mode == "fast" and not self.current.startswith("("):
            raise RuntimeError(
                f"the fast tier starts no process, but {self.current} started {what!r}: "
                f"list the module in {PROCESS_LIST.name}"
            )
        if self.mode.startswith("record:") and (self.current, what) not in self.seen:
            self.seen.add((self.current, what))
            with open(self.mode.removeprefix("record:"), "a", encoding="utf-8") as out:
                out.write(f"{self.current}\t{what}\n")


def _module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]
