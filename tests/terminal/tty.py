"""Run a real ``governor`` process under a pseudo-terminal and read what it draws."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

AS_AT_A_TERMINAL = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)
"""Exec the command with Ctrl-C's default action, as a shell at a terminal starts it: a
suite started in the background (``&`` in a script, ``nohup``) passes SIGINT ignored to
its children, a Python program started so never turns it into ``KeyboardInterrupt``, and
the Ctrl-C test waited out its deadline."""

ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")
"""CSI sequences: cursor moves, line clears, colours."""


@dataclass
class Screenful:
    """What a process wrote to its terminal, and how it ended."""

    raw: bytes
    code: int

    @property
    def text(self) -> str:
        """The output without CSI sequences (carriage returns kept)."""
        return ESCAPES.sub(b"", self.raw).decode("utf-8", "replace")


def run_in_tty(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    columns: int = 100,
    timeout: float = 180,
    until: Callable[[bytes], bool] | None = None,
    then: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> Screenful:
    """Run ``argv`` with stdin, stdout and stderr on a new pseudo-terminal of ``columns``
    columns; read everything it writes until it exits. ``then(process)`` is called once
    ``until(output so far)`` holds (e.g. to send SIGINT)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", AS_AT_A_TERMINAL, *argv],
        cwd=cwd,
        env={**env, "TERM": "xterm-256color", "COLUMNS": str(columns)},
        stdin=follower,
        stdout=follower,
        stderr=follower,
        close_fds=True,
        start_new_session=True,
    )
    os.close(follower)
    seen, fired = b"", False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: every writer closed its end
                    break
                if not chunk:
                    break
                seen += chunk
            elif process.poll() is not None:
                break
            if then is not None and not fired and until is not None and until(seen):
                fired = True
                then(process)
        else:
            process.kill()
            raise AssertionError(f"{argv} did not end within {timeout}s: {seen[-2000:]!r}")
        return Screenful(seen, process.wait(timeout=60))
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
            process.wait()
