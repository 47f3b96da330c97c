"""Processes as the kernel knows them: who a pid is, and ending a process group for sure.

Rules (SPEC §11.11, decision record 0007):
    * A process is named by its pid *and* its start time (``/proc/<pid>/stat`` field 22,
      clock ticks since boot) on one machine in one boot (host name and the kernel's
      boot id). A pid alone may have been reused; the pair may not.
    * Every agent leads its own session and process group (``run_process``), so its pid
      is its group id; ending an agent ends its group. A pid number is not reused while a
      group of that id has members, so signalling the group of a recorded agent whose
      leader is gone reaches only that agent's leftovers.
    * Ending waits until no live member of the group is left (a zombie is dead: only its
      parent can reap it) or the timeout passes, and says which.
    * Linux only (``/proc``). Elsewhere nothing can be identified (``start_ticks`` is
      None) and nothing is ended: the guard and the parent-death signal are Linux-only
      too (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final, Literal

PROC: Final = Path("/proc")
POLL_S: Final = 0.02
"""How often a wait for a group to end looks again."""

Ending = Literal["gone", "ended", "reused", "stuck"]
"""What ending a recorded agent came to: nothing of it was left; it was killed and is
gone; its pid now names another process (nothing was done); it outlived the timeout."""


@dataclass(frozen=True, slots=True)
class Stat:
    """The fields of ``/proc/<pid>/stat`` governor reads."""

    state: str
    """``R``, ``S``, ``D``, ``Z`` (zombie) …"""
    ppid: int
    pgrp: int
    session: int
    start_ticks: int


@cache
def this_machine() -> tuple[str, str]:
    """(host name, boot id) of this machine; the boot id is empty where there is none."""
    try:
        boot_id = (PROC / "sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot_id = ""
    return socket.gethostname(), boot_id


def stat(pid: int) -> Stat | None:
    """What the kernel says of ``pid`` now, or None when there is no such process."""
    try:
        raw = (PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp session …": comm may hold spaces and parentheses
    fields = raw[raw.rindex(b")") + 2 :].split()
    return Stat(
        state=fields[0].decode(),
        ppid=int(fields[1]),
        pgrp=int(fields[2]),
        session=int(fields[3]),
        start_ticks=int(fields[19]),
    )


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), or None when it cannot be told."""
    found = stat(pid)
    return None if found is None else found.start_ticks


def live_members(pgrp: int) -> list[int]:
    """The pids of the group's members that are not zombies."""
    members = []
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if entry.name.isdigit():
            found = stat(int(entry.name))
            if found is not None and found.pgrp == pgrp and found.state != "Z":
                members.append(int(entry.name))
    return members


def end_group(pid: int, ticks: int, *, timeout_s: float = 10.0) -> Ending:
    """End the recorded agent ``pid`` (started at ``ticks``) and whatever is left of its
    process group, and wait until none of it lives.

    Returns:
        What it came to (see ``Ending``); ``reused`` when ``pid`` is another process now.
    """
    leader = stat(pid)
    if leader is not None and leader.start_ticks != ticks:
        return "reused"  # the agent's group ended before its pid could be reused
    if not live_members(pid):
        return "gone"
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout_s
    while live_members(pid):
        if time.monotonic() >= deadline:
            return "stuck"
        time.sleep(POLL_S)
    return "ended"
