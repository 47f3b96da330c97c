"""Fixtures for the process-execution tests: real fake executables and a small environment."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

BIN = Path(__file__).with_name("bin")
NOT_EXECUTABLE = frozenset({"no_exec.sh"})


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A copy of ``tests/exec/bin`` with explicit modes, whatever the checkout kept."""
    target = tmp_path / "bin"
    shutil.copytree(BIN, target)
    for path in target.iterdir():
        path.chmod(0o644 if path.name in NOT_EXECUTABLE else 0o755)
    return target


@pytest.fixture
def base_env() -> dict[str, str]:
    """A minimal source environment: enough for ``sh`` and ``python3`` to run."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp", "LANG": "C.UTF-8"}


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie awaiting its reaper counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def dies_soon(pid: int, within_s: float = 60.0) -> bool:
    """Whether ``pid`` is dead now or within ``within_s`` (a SIGKILL lands asynchronously;
    the deadline is generous so a loaded machine never fails it)."""
    deadline = time.monotonic() + within_s
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def zombie_children() -> list[int]:
    """Pids of this process's children that have exited but were never reaped."""
    me = str(os.getpid())
    zombies = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == "Z" and fields[1] == me:
            zombies.append(int(stat_file.parent.name))
    return zombies


def open_fds() -> int:
    """How many file descriptors this process holds."""
    return len(os.listdir("/proc/self/fd"))
