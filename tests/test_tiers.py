"""The fast tier's guard sees every way a test can start a process (tests/tiers.py)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tiers import SpawnGuard, process_modules


def _spawns(start: object) -> list[str]:
    seen: list[str] = []

    def refuse(what: str) -> None:
        seen.append(what)
        raise RuntimeError(what)

    guard = SpawnGuard(refuse)
    guard.install()
    try:
        with pytest.raises(RuntimeError):
            start()  # type: ignore[operator]
    finally:
        guard.uninstall()
    return seen


async def _async_child() -> None:
    process = await asyncio.create_subprocess_exec("true")
    await process.wait()


@pytest.mark.parametrize(
    "start",
    [
        pytest.param(lambda: subprocess.run(["true"], check=False), id="subprocess.run"),
        pytest.param(lambda: asyncio.run(_async_child()), id="an asyncio child"),
        pytest.param(lambda: os.posix_spawn("/bin/true", ["true"], {}), id="os.posix_spawn"),
    ],
)
def test_the_guard_refuses_a_process_before_it_starts(start: object) -> None:
    seen = _spawns(start)
    assert len(seen) == 1
    assert "true" in seen[0]


def test_the_guard_is_gone_once_uninstalled() -> None:
    _spawns(lambda: subprocess.run(["true"], check=False))
    assert subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0


def test_every_listed_module_exists() -> None:
    root = Path(__file__).resolve().parents[1]
    missing = [path for path in process_modules() if not (root / path).exists()]
    assert not missing, f"tests/process_modules.txt names modules that are gone: {missing}"
