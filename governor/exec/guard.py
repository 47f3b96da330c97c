"""Agents never outlive the process that runs them: a parent-death signal and a guard.

Rules (SPEC §11.11, decision record 0007; the shim of ``governor.exec.launch`` does the
same without a fork, decision record 0026):
    * Every child ``run_process`` spawns asks the kernel, before it executes the agent,
      for SIGKILL when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``). The signal
      fires when the *thread* that forked the child ends: ``run_process`` returns only
      once its child is reaped, so the spawning thread always outlives its child; only
      the death of the whole process fires it.
    * The signal reaches the agent alone, not what the agent started. So each process
      that spawns agents also starts one **guard**: a tiny Python process, in a session of
      its own (a signal to the runner's group does not reach it), that is told the group
      of every agent on a pipe and kills those still registered when the pipe closes —
      when the runner is gone, however it died. The pipe's write end is close-on-exec and
      closed in forked children, so only the runner holds it.
    * The child registers its own group, before it executes the agent, on a duplicate of
      that pipe: there is no moment where an agent runs unknown to the guard (a runner
      killed right after the fork). The runner registers it again for its own books.
    * A guard that died (someone killed it) is started again at the next registration,
      and told every group still running.
    * Linux only; elsewhere both are skipped (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Final

IS_LINUX: Final = sys.platform.startswith("linux")
_PR_SET_PDEATHSIG: Final = 1

_GUARD_SOURCE: Final = """
import os, signal, sys
for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGTSTP"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
groups = set()
for line in sys.stdin.buffer:
    sign, _, pid = line.strip().partition(b" ")
    if pid.isdigit():
        (groups.add if sign == b"+" else groups.discard)(int(pid))
for pid in groups:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
"""
"""The guard: read ``+ pid`` / ``- pid`` lines until the pipe closes, then kill the groups left."""


@contextlib.contextmanager
def spawning() -> Iterator[Callable[[], None] | None]:
    """The ``preexec_fn`` for one spawn, valid inside this context; None off Linux.

    It runs in the forked child before ``exec``: it asks for SIGKILL when the parent dies
    (``prctl``, resolved here in the parent), kills itself if the parent already died,
    and registers its own group with the guard on a duplicate of the guard's pipe — so a
    runner killed between the fork and its own registration leaves no agent group behind.
    Nothing there takes a lock.
    """
    if not IS_LINUX:
        yield None
        return
    prctl = _prctl()
    parent = os.getpid()
    pipe = GUARD.duplicate_pipe()

    def setup() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request was made
            os.kill(os.getpid(), signal.SIGKILL)
        if pipe >= 0:
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a guard that died: EPIPE
            with contextlib.suppress(OSError):
                os.write(pipe, b"+ %d\n" % os.getpid())
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    try:
        yield setup
    finally:
        if pipe >= 0:
            os.close(pipe)


_prctl_fn: Callable[..., int] | None = None


def _prctl() -> Callable[..., int]:
    global _prctl_fn  # noqa: PLW0603 - resolved once per process, then shared
    if _prctl_fn is None:
        _prctl_fn = ctypes.CDLL(None, use_errno=True).prctl
    return _prctl_fn


class _Guard:
    """This process's guard (see the module rules); one per process, thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._groups: set[int] = set()
        self._fd = -1
        """The write end of the guard's pipe, as a number (read without a lock at fork)."""
        self._inherited: list[subprocess.Popen[bytes]] = []

    def watch(self, pid: int) -> None:
        """Have the guard kill ``pid``'s group should this process die before ``forget``."""
        if not IS_LINUX:
            return
        with self._lock:
            self._groups.add(pid)
            self._send(f"+ {pid}\n")

    def duplicate_pipe(self) -> int:
        """A duplicate of the write end of the guard's pipe (close-on-exec; the caller
        closes it), the guard started first if need be; -1 if it cannot be had."""
        with self._lock:
            try:
                self._send("")  # (re)starts a guard that is gone, telling it every group
                proc = self._proc
                return -1 if proc is None or proc.stdin is None else os.dup(proc.stdin.fileno())
            except (OSError, ValueError):
                return -1

    def forget(self, pid: int) -> None:
        """The group was reaped: the guard must not touch that id again."""
        if not IS_LINUX:
            return
        with self._lock:
            self._groups.discard(pid)
            if self._proc is not None:
                self._send(f"- {pid}\n")

    def _send(self, line: str) -> None:
        for _ in range(2):
            proc = self._proc if self._proc is not None and self._proc.poll() is None else None
            if proc is None:
                proc = self._start()
                line = "".join(f"+ {pid}\n" for pid in self._groups)
            assert proc.stdin is not None
            try:
                proc.stdin.write(line.encode())
                proc.stdin.flush()
                return
            except (BrokenPipeError, ValueError):
                self._proc, self._fd = None, -1  # it died under us: start another, tell it all

    def _start(self) -> subprocess.Popen[bytes]:
        self._proc = subprocess.Popen(  # noqa: S603 - our own interpreter and source
            [sys.executable, "-I", "-S", "-c", _GUARD_SOURCE],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
        assert self._proc.stdin is not None
        self._fd = self._proc.stdin.fileno()
        return self._proc

    def after_fork(self) -> None:
        """In a forked child: the parent's guard is not ours, and its pipe must close.

        Only system calls here: another thread of the parent may have held a lock of the
        pipe's file object at the fork (closing that object would wait on it for ever).
        The pipe's descriptor is replaced by ``/dev/null``, and the object is kept (never
        used, never collected), so nothing closes a number that was reused.
        """
        proc, fd, self._proc, self._fd = self._proc, self._fd, None, -1
        self._lock = threading.Lock()
        self._groups = set()
        if proc is not None and fd >= 0:
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
                os.dup2(devnull, fd, inheritable=False)
                os.close(devnull)
            self._inherited.append(proc)


GUARD: Final = _Guard()
"""The guard of this process."""

if IS_LINUX:
    os.register_at_fork(after_in_child=GUARD.after_fork)
