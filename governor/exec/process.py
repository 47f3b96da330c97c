"""One child process, run to its end or to its timeout: the only place governor spawns.

Rules:
    * An argument list, never a shell. The child starts in a session of its own (so it
      leads its own process group); on timeout the whole group gets SIGTERM, a short
      grace, then SIGKILL, so grandchildren die with it.
    * A run leaves no processes behind: once the child has exited (and its pipes have
      closed, or a short drain window has passed), whatever is left of its group is
      killed. The group is signalled while the exited child is still unreaped, so the
      group id cannot have been reused.
    * A child that never started is a result carrying the errno name (``ENOENT``,
      ``EACCES``, ``ENOEXEC`` …), not an exception; so is every exit status.
    * Memory is bounded whatever the child writes: only the head and tail of stdout,
      the tail of stderr, byte counts and a running sha256 of stdout are kept.
    * stdin is written as the child reads it, in the same selector loop that reads its
      output, so a child that writes a lot before reading does not deadlock; stdin is
      closed once written.
    * No child outlives this process (SPEC §11.11): it is killed by the kernel when its
      parent dies, and its group by this process's guard (``governor.exec.guard``). It is
      started without a fork of this process where it can be (``governor.exec.launch``).
    * The caller may end a child early (``stop``: checked as output arrives, e.g. an
      adapter that saw its CLI wait for a network that is not there, SPEC §12.7): its
      group is terminated as for a timeout, and the result says ``stopped``, not
      ``timed_out``.
    * Whoever runs agents may watch every child spawned in its context (``watching``):
      told of its pid and start time right after the spawn — a watch that raises has the
      child killed before it gets far — and again once it is reaped. The runner records
      its agents in the store this way (decision record 0007).
    * Whoever runs agents may also listen to what they write (``listening``): every chunk
      of stdout and stderr, as it arrives, for a live view (``governor run`` on a
      terminal). The listener must be quick and must not raise.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, Protocol

from governor.exec.capture import Capture, Lines, Listener
from governor.exec.guard import GUARD
from governor.exec.launch import launching
from governor.exec.procinfo import start_ticks

KILL_GRACE_S: Final = 2.0
"""Seconds between SIGTERM and SIGKILL when a child is killed for its timeout."""
DRAIN_S: Final = 0.5
"""Seconds to wait for pipes to close after the child exited (a grandchild may hold them)."""
_CHUNK: Final = 1 << 16
_TICK_MIN_S: Final = 0.0005
_TICK_MAX_S: Final = 0.05


class SpawnWatch(Protocol):
    """Told of every child spawned in its context (``watching``)."""

    def started(self, pid: int, ticks: int | None) -> None:
        """The child ``pid`` (started at ``ticks``, None where that cannot be told) runs;
        raising here has it killed and the exception propagate from ``run_process``."""

    def ended(self, pid: int, ticks: int | None) -> None:
        """The child was reaped, its group killed. Must not raise."""


_WATCH: ContextVar[SpawnWatch | None] = ContextVar("governor_spawn_watch", default=None)


@contextlib.contextmanager
def watching(watch: SpawnWatch) -> Iterator[None]:
    """Tell ``watch`` of every child ``run_process`` spawns in this context (this thread)."""
    token = _WATCH.set(watch)
    try:
        yield
    finally:
        _WATCH.reset(token)


_LISTENER: ContextVar[Listener | None] = ContextVar("governor_output_listener", default=None)


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Tell ``listener`` of the output of every child ``run_process`` spawns in this context."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """What one child process did, as a value. A non-zero exit is a result, not an error."""

    argv: tuple[str, ...]
    exit_code: int | None
    """Exit status; negative N when killed by signal N; None when the child never started."""
    spawn_errno: str | None
    """The errno name when the child never started: ``ENOENT``, ``EACCES``, ``ENOEXEC`` …"""
    spawn_error: str | None
    """The OS message when the child never started."""
    timed_out: bool
    """Killed for running past ``timeout_s`` (True even if it then exited 0)."""
    stdout_head: bytes
    """The first ``head_bytes`` of stdout."""
    stdout_tail: bytes
    """The last ``tail_bytes`` of stdout."""
    stderr_tail: bytes
    """The last ``tail_bytes`` of stderr."""
    stdout_bytes: int
    """Total bytes the child wrote to stdout."""
    stderr_bytes: int
    """Total bytes the child wrote to stderr."""
    stdout_sha256: str
    """sha256 hex digest of everything written to stdout."""
    duration_s: float
    """Wall time from spawn to reaping, by the injected clock."""
    stopped: bool = False
    """Ended early because the caller's ``stop`` said so (not a timeout)."""

    @property
    def started(self) -> bool:
        """Whether the child started at all."""
        return self.spawn_errno is None

    @property
    def stdout_complete(self) -> bool:
        """Whether ``stdout_head`` holds all of stdout."""
        return len(self.stdout_head) == self.stdout_bytes


def run_process(
    argv: Sequence[str],
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str],
    cwd: str | Path | None = None,
    timeout_s: float,
    head_bytes: int = 1 << 20,
    tail_bytes: int = 64 << 10,
    on_stdout_line: Callable[[bytes], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    kill_grace_s: float = KILL_GRACE_S,
    stop: Callable[[], bool] | None = None,
) -> ProcessResult:
    """Run one child to its end or its timeout and return what it did.

    Args:
        argv: the executable and its arguments (never run through a shell). A bare
            name is looked up on ``env["PATH"]``.
        stdin: bytes written to the child's stdin, which is then closed; None gives
            the child an empty stdin (``/dev/null``, or a pipe closed at once).
        env: the child's complete environment (see ``environment.scrubbed_env``).
        cwd: the child's working directory.
        timeout_s: wall-clock limit; past it the child's group is terminated.
        head_bytes: how much of the start of stdout to keep (also the longest line
            handed to ``on_stdout_line``; longer lines are cut).
        tail_bytes: how much of the end of stdout and of stderr to keep.
        on_stdout_line: called with each stdout line (without its newline) as it
            arrives, and with an unterminated last line at the end.
        clock: monotonic seconds; injected for tests.
        kill_grace_s: seconds between SIGTERM and SIGKILL on timeout.
        stop: asked after output arrives; True ends the child's group as a timeout
            would, and the result says ``stopped``.

    Returns:
        The result; ``spawn_errno`` is set when the child never started.

    Raises:
        ValueError: ``argv`` is empty or ``timeout_s`` is not positive.
    """
    args = tuple(argv)
    if not args:
        raise ValueError("argv is empty: there is nothing to run")
    if timeout_s <= 0:
        raise ValueError(f"timeout_s must be positive, got {timeout_s}")
    started = clock()
    try:
        with launching(args, env, cwd) as how:
            proc = subprocess.Popen(  # noqa: S603 - an argument list, never a shell
                how.argv,
                stdin=subprocess.DEVNULL if stdin is None and not how.go else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
                preexec_fn=how.preexec,  # noqa: PLW1509 - no locks taken; see governor.exec.guard
            )
    except OSError as exc:
        return _never_started(args, exc, clock() - started)
    if how.go:  # the shim's go-ahead, written once the guard and the watch know the child
        stdin = how.go + (stdin or b"")
    lines = Lines(on_stdout_line, head_bytes) if on_stdout_line is not None else None
    listener = _LISTENER.get()
    out = Capture(head_bytes, tail_bytes, lines, listener)
    err = Capture(0, tail_bytes, listener=listener)
    supervisor = _Supervisor(proc, out, err, clock, kill_grace_s, stop=stop)
    ticks, watch = start_ticks(proc.pid), _WATCH.get()
    GUARD.watch(proc.pid)
    with proc:
        try:
            if watch is not None:
                watch.started(proc.pid, ticks)
            supervisor.run(stdin, deadline=started + timeout_s)
        finally:
            supervisor.reap()
            GUARD.forget(proc.pid)
            if watch is not None:
                watch.ended(proc.pid, ticks)
    out.finish()
    return ProcessResult(
        argv=args,
        exit_code=proc.returncode,
        spawn_errno=None,
        spawn_error=None,
        timed_out=supervisor.timed_out,
        stopped=supervisor.stopped,
        stdout_head=bytes(out.head),
        stdout_tail=out.tail(),
        stderr_tail=err.tail(),
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        stdout_sha256=out.sha.hexdigest(),
        duration_s=max(0.0, clock() - started),
    )


def _never_started(args: tuple[str, ...], exc: OSError, duration_s: float) -> ProcessResult:
    name = errno.errorcode.get(exc.errno, f"E{exc.errno}") if exc.errno else "EUNKNOWN"
    return ProcessResult(
        argv=args,
        exit_code=None,
        spawn_errno=name,
        spawn_error=str(exc),
        timed_out=False,
        stdout_head=b"",
        stdout_tail=b"",
        stderr_tail=b"",
        stdout_bytes=0,
        stderr_bytes=0,
        stdout_sha256=hashlib.sha256(b"").hexdigest(),
        duration_s=max(0.0, duration_s),
    )


class _Supervisor:
    """The selector loop of one child: feeds stdin, drains output, enforces the deadline."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        out: Capture,
        err: Capture,
        clock: Callable[[], float],
        kill_grace_s: float,
        *,
        stop: Callable[[], bool] | None = None,
    ) -> None:
        self.timed_out = self.stopped = False
        self._stop = stop
        self._ending = False
        self._proc = proc
        self._clock = clock
        self._grace_s = kill_grace_s
        self._sel = selectors.DefaultSelector()
        self._readers: dict[int, Capture] = {}
        for pipe, capture in ((proc.stdout, out), (proc.stderr, err)):
            assert pipe is not None
            self._readers[pipe.fileno()] = capture
            self._sel.register(pipe.fileno(), selectors.EVENT_READ)
        self._stdin: memoryview | None = None
        self._kill_at = 0.0
        self._killed = False
        self._swept = False

    def run(self, stdin: bytes | None, *, deadline: float) -> None:
        """Drive the child until it has exited, its group is gone and its pipes are drained."""
        self._start_stdin(stdin)
        exited_at: float | None = None
        give_up_at = deadline
        tick = _TICK_MIN_S
        while True:
            # The tick only paces exit detection and deadlines; output wakes the loop at once.
            busy = self._pump(tick)
            tick = _TICK_MIN_S if busy else min(2 * tick, _TICK_MAX_S)
            now = self._clock()
            if busy and exited_at is None and not self.stopped and self._stop and self._stop():
                self.stopped = True
                deadline = min(deadline, now)  # ended as a timeout would be
            if exited_at is None and self._has_exited():
                exited_at = now
                self._close_stdin()
            if exited_at is None:
                self._enforce(now, deadline)
            elif not self._swept and (
                not self._readers or self._ending or now >= exited_at + DRAIN_S
            ):
                self._signal(signal.SIGKILL)  # sweep what is left of the group
                self._swept = True
                give_up_at = now + DRAIN_S
            if self._swept and (not self._readers or now >= give_up_at):
                return

    def reap(self) -> None:
        """Reap the child, killing its group first if the loop was left early."""
        self._close_stdin()
        self._sel.close()
        if not self._swept:
            self._signal(signal.SIGKILL)
        self._proc.wait()

    def _enforce(self, now: float, deadline: float) -> None:
        if not self._ending and now >= deadline:
            self._ending = True
            self.timed_out = not self.stopped
            self._kill_at = now + self._grace_s
            self._signal(signal.SIGTERM)
        elif self._ending and not self._killed and now >= self._kill_at:
            self._killed = True
            self._signal(signal.SIGKILL)

    def _pump(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for pipe events and serve them; True if any came."""
        events = self._sel.select(timeout_s)
        for key, mask in events:
            if mask & selectors.EVENT_WRITE:
                self._write_stdin()
            else:
                self._read(key.fd)
        return bool(events)

    def _read(self, fd: int) -> None:
        data = os.read(fd, _CHUNK)
        if data:
            self._readers[fd].feed(data)
        else:
            self._sel.unregister(fd)
            del self._readers[fd]

    def _start_stdin(self, data: bytes | None) -> None:
        pipe = self._proc.stdin
        if pipe is None or data is None:
            return
        if not data:
            self._close_stdin()
            return
        os.set_blocking(pipe.fileno(), False)
        self._stdin = memoryview(data)
        self._sel.register(pipe.fileno(), selectors.EVENT_WRITE)

    def _write_stdin(self) -> None:
        pipe = self._proc.stdin
        assert pipe is not None
        assert self._stdin is not None
        try:
            written = os.write(pipe.fileno(), self._stdin[:_CHUNK])
        except BlockingIOError:
            return
        except BrokenPipeError:
            written = len(self._stdin)  # the child closed its stdin: it has read enough
        self._stdin = self._stdin[written:]
        if not self._stdin:
            self._close_stdin()

    def _close_stdin(self) -> None:
        pipe: IO[bytes] | None = self._proc.stdin
        if pipe is None or pipe.closed:
            return
        if self._stdin is not None:
            self._sel.unregister(pipe.fileno())
            self._stdin = None
        with contextlib.suppress(BrokenPipeError):
            pipe.close()

    def _has_exited(self) -> bool:
        """Whether the child has exited, without reaping it (its pid keeps the group id)."""
        try:
            info = os.waitid(os.P_PID, self._proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)
