"""No agent outlives the process that runs it (SPEC §11.11; issue 9, item 2).

A real runner process runs real agents (``bin/family.sh``: a shell that leaves a
grandchild in its process group, both ignoring SIGTERM) through ``run_process``; the test
kills the runner and waits for the agents to die. The parent-death signal ends the agent
itself even when the guard is gone; the guard ends the rest of its group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from governor.exec.process import run_process, watching
from governor.exec.procinfo import end_group, live_members, start_ticks, stat
from tests.exec.conftest import alive, dies_soon

RUNNER = """
import sys, threading
from governor.exec.process import run_process

def agent(pid_file):
    run_process([sys.argv[1], pid_file], env={"PATH": "/usr/bin:/bin"}, timeout_s=600)

threads = [threading.Thread(target=agent, args=(f,)) for f in sys.argv[2:]]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""
"""A runner: one thread per pid file, each running ``family.sh PIDFILE`` to its end."""


def wait_for(path: Path, within_s: float = 120.0) -> list[int]:
    deadline = time.monotonic() + within_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return [int(pid) for pid in path.read_text().split()]


def guards_of(runner: int) -> list[int]:
    """The runner's guard processes (its children running the guard's source)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (info := stat(int(entry.name))) and info.ppid == runner:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"-I" in argv and b"-S" in argv and b"-c" in argv:
                found.append(int(entry.name))
    return found


def one_guard(runner: int, within_s: float = 120.0) -> int:
    """The runner's one guard, once there is exactly one (it starts right after a spawn,
    which may be after the agent wrote its pid file)."""
    deadline = time.monotonic() + within_s
    while len(found := guards_of(runner)) != 1:
        assert time.monotonic() < deadline, f"the runner's guards: {found}"
        time.sleep(0.02)
    return found[0]


def start_runner(bin_dir: Path, pid_files: list[Path]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(bin_dir / "family.sh"), *map(str, pid_files)],
        start_new_session=True,
    )


def cleanup(*pids: int) -> None:
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killing_the_runner_kills_its_agents_and_their_groups(
    bin_dir: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    files = [tmp_path / "one", tmp_path / "two"]
    runner = start_runner(bin_dir, files)
    pids = [pid for path in files for pid in wait_for(path)]
    try:
        runner.send_signal(sig)
        runner.wait(timeout=60)
        for pid in pids:
            assert dies_soon(pid), f"{pid} outlived its runner"
    finally:
        cleanup(*pids)


def test_the_parent_death_signal_ends_the_agent_even_without_its_guard(
    bin_dir: Path, tmp_path: Path
) -> None:
    runner = start_runner(bin_dir, [tmp_path / "pids"])
    agent, grandchild = wait_for(tmp_path / "pids")
    try:
        guard = one_guard(runner.pid)
        os.kill(guard, signal.SIGKILL)
        assert dies_soon(guard)
        runner.kill()
        runner.wait(timeout=60)
        assert dies_soon(agent)  # the kernel's signal; the grandchild needed the guard
    finally:
        cleanup(agent, grandchild)


def test_a_guard_that_died_is_started_again_and_told_every_running_group(
    bin_dir: Path, tmp_path: Path
) -> None:
    first_file, second_file = tmp_path / "first", tmp_path / "second"
    script = RUNNER.replace(
        "for t in threads:\n    t.start()",
        "import os, time\nthreads[0].start()\n"
        "while not os.path.exists(sys.argv[2]): time.sleep(0.02)\n"
        f"while not os.path.exists({str(tmp_path / 'go')!r}): time.sleep(0.02)\n"
        "threads[1].start()",
    )
    runner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            script,
            str(bin_dir / "family.sh"),
            str(first_file),
            str(second_file),
        ],
        start_new_session=True,
    )
    first = wait_for(first_file)
    pids = list(first)
    try:
        guard = one_guard(runner.pid)
        os.kill(guard, signal.SIGKILL)
        assert dies_soon(guard)
        (tmp_path / "go").touch()
        pids += wait_for(second_file)
        assert one_guard(runner.pid) != guard  # a new guard, told of both groups
        runner.kill()
        runner.wait(timeout=60)
        for pid in pids:
            assert dies_soon(pid), f"{pid} outlived its runner"
    finally:
        cleanup(*pids)


def family(bin_dir: Path, tmp_path: Path) -> tuple[subprocess.Popen[bytes], int, int, int]:
    """``family.sh`` started as a runner would start an agent (its own session): the
    process, the agent's pid, its grandchild's, and the agent's start time."""
    proc = subprocess.Popen([bin_dir / "family.sh", tmp_path / "pids"], start_new_session=True)
    agent, grandchild = wait_for(tmp_path / "pids")
    assert agent == proc.pid
    ticks = start_ticks(agent)
    assert ticks is not None
    return proc, agent, grandchild, ticks


def test_end_group_kills_an_agent_named_by_pid_and_start_time_and_its_group(
    bin_dir: Path, tmp_path: Path
) -> None:
    proc, agent, grandchild, ticks = family(bin_dir, tmp_path)
    assert end_group(agent, ticks) == "ended"
    proc.wait(timeout=60)
    assert dies_soon(grandchild)
    assert live_members(agent) == []
    assert end_group(agent, ticks) == "gone"


def test_end_group_leaves_a_process_whose_start_time_differs_alone(
    bin_dir: Path, tmp_path: Path
) -> None:
    proc, agent, grandchild, ticks = family(bin_dir, tmp_path)
    try:
        assert end_group(agent, ticks + 1) == "reused"  # another process under that pid
        assert alive(agent)
        assert alive(grandchild)
    finally:
        os.killpg(agent, signal.SIGKILL)
        proc.wait(timeout=60)


def test_end_group_ends_the_leftovers_of_a_group_whose_leader_died(
    bin_dir: Path, tmp_path: Path
) -> None:
    proc, agent, grandchild, ticks = family(bin_dir, tmp_path)
    os.kill(agent, signal.SIGKILL)
    proc.wait(timeout=60)  # the leader is reaped: only its group id is left
    assert alive(grandchild)
    assert end_group(agent, ticks) == "ended"
    assert dies_soon(grandchild)


class Refusing:
    """A watch whose ``started`` refuses, as a runner whose lease was taken over does."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def started(self, pid: int, ticks: int | None) -> None:
        self.seen.append(("started", pid))
        raise RuntimeError("the lease is gone")

    def ended(self, pid: int, ticks: int | None) -> None:
        self.seen.append(("ended", pid))


def test_a_watch_that_refuses_the_spawn_has_the_agent_killed_at_once(
    bin_dir: Path, tmp_path: Path, base_env: dict[str, str]
) -> None:
    watch = Refusing()
    with watching(watch), pytest.raises(RuntimeError, match="the lease is gone"):
        run_process(
            [str(bin_dir / "family.sh"), str(tmp_path / "pids")], env=base_env, timeout_s=600
        )
    (started, pid), (ended, pid_again) = watch.seen
    assert (started, ended, pid_again) == ("started", "ended", pid)
    assert not alive(pid)  # killed and reaped before run_process raised
    deadline = time.monotonic() + 60  # a SIGKILL to the rest of the group lands soon
    while live_members(pid):
        assert time.monotonic() < deadline, f"group {pid} lives on: {live_members(pid)}"
        time.sleep(0.02)


def test_a_watch_sees_every_spawn_of_its_context_only(base_env: dict[str, str]) -> None:
    seen: list[int] = []

    class Recording:
        def started(self, pid: int, ticks: int | None) -> None:
            assert ticks == start_ticks(pid)
            seen.append(pid)

        def ended(self, pid: int, ticks: int | None) -> None:
            seen.append(-pid)

    def elsewhere() -> None:  # another thread: another context, not watched
        run_process(["true"], env=base_env, timeout_s=60)

    with watching(Recording()):
        run_process(["true"], env=base_env, timeout_s=60)
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    run_process(["true"], env=base_env, timeout_s=60)
    assert len(seen) == 2
    assert seen[0] == -seen[1] > 0
