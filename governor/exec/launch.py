"""How ``run_process`` starts a child: through a shim that spares the runner a fork.

Rules (decision record 0026; what the child must get is decision record 0007's):
    * A runner is a large process (its interpreter, LangGraph): forking it copies its page
      tables, ~15 ms a spawn on a small VM, and CPython forks whenever a ``preexec_fn``
      must run in the child. So a child is started with ``vfork`` — no code of ours in
      it — through a shim: ``/bin/sh`` waits for a go-ahead line on its stdin, then execs
      ``setpriv --pdeathsig KILL -- ARGV`` (util-linux), which asks the kernel for
      SIGKILL when its parent dies and execs the agent. The pid, session, process group
      and start time are the agent's all along.
    * The go-ahead is the first byte ``run_process`` writes on the child's stdin, after
      the guard knows the child's group and the watch recorded it. A runner that dies
      before that closes the pipe: the shim reads no line and exits without running the
      agent. So, as with the fork, no agent ever runs unknown to the guard.
    * The script is a constant: the agent's arguments reach it as positional parameters,
      never as shell text. ``sh`` sets ``PWD``: the shim unsets it, and an environment
      that names ``PWD`` itself takes the fork path, so the child's environment is
      exactly the one given.
    * The shim is taken only when it cannot change what a start reports: the file exec
      would run for ``argv[0]`` (the first that exists, searched as exec searches) is a
      regular executable file, an ELF of this machine's kind or a script whose
      interpreter is one. Anything else — a missing file, no permission, no ``#!``, a
      runner whose own folder was removed — takes the fork path, whose errno is the
      kernel's (``ENOENT``, ``EACCES``, ``ENOEXEC``).
    * Linux only, and only where ``setpriv`` knows ``--pdeathsig`` (asked once a
      process); elsewhere every child takes the fork path (``governor.exec.guard``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from governor.exec.guard import IS_LINUX, spawning

SHIM_SCRIPT: Final = 'read -r go || exit 125; unset PWD; exec "$0" --pdeathsig KILL -- "$@"'
"""The shim's script: ``$0`` is setpriv, ``$@`` the agent's argv; exit 125 without a go-ahead."""
GO: Final = b"\n"
"""The go-ahead: the first line of the child's stdin, read by the shim alone."""
_SH: Final = "/bin/sh"
_SETPRIV: Final = ("/usr/bin/setpriv", "/bin/setpriv")
_HEAD: Final = 256
"""How much of a file exec looks at for ``#!`` (the kernel's BINPRM_BUF_SIZE)."""


@dataclass(frozen=True, slots=True)
class Launch:
    """How one child is started: what ``Popen`` runs, the fork path's ``preexec_fn``
    (None through the shim), and what goes on its stdin before the caller's input."""

    argv: tuple[str, ...]
    preexec: Callable[[], None] | None
    go: bytes

    @property
    def shimmed(self) -> bool:
        return bool(self.go)


@contextlib.contextmanager
def launching(
    args: tuple[str, ...], env: Mapping[str, str], cwd: str | Path | None
) -> Iterator[Launch]:
    """How to start ``args`` (valid inside this context): through the shim when it can
    report no differently than a fork would, else the fork path of ``governor.exec.guard``."""
    setpriv = shim()
    if setpriv is not None and "PWD" not in env and _runs_as_is(args[0], env, cwd):
        yield Launch((_SH, "-c", SHIM_SCRIPT, setpriv, *args), None, GO)
        return
    with spawning() as setup:
        yield Launch(args, setup, b"")


@functools.cache
def shim() -> str | None:
    """setpriv's path when it can set the parent-death signal here (asked once); else None."""
    if not IS_LINUX:
        return None
    for path in _SETPRIV:
        if not os.access(path, os.X_OK):
            continue
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run(  # noqa: S603 - fixed paths, no input
                [path, "--pdeathsig", "KILL", "--", _SH, "-c", ":"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={},
                timeout=30,
                check=False,
            )
            if done.returncode == 0:
                return path
    return None


def _runs_as_is(name: str, env: Mapping[str, str], cwd: str | Path | None) -> bool:
    """Whether exec of ``name`` would start a known kind of program (module rules)."""
    try:
        where = Path(os.getcwd() if cwd is None else cwd)
    except OSError:  # our own folder was removed: the child inherits it all the same
        return False
    target = _target(name, env, where)
    if target is None:
        return False
    head = _head(target)
    if head.startswith(b"#!"):
        line, newline, _ = head[2:].partition(b"\n")
        words = line.split()
        if not newline or not words or not words[0].startswith(b"/"):
            return False
        interpreter = os.fsdecode(words[0])
        return _executable(interpreter) and _native(_head(interpreter))
    return _native(head)


def _target(name: str, env: Mapping[str, str], cwd: Path) -> str | None:
    """The file exec would run for ``name`` — the first candidate that exists, as both
    CPython and ``execvp`` search — when it is a regular file we may execute."""
    candidates = [name] if "/" in name else [os.path.join(d, name) for d in os.get_exec_path(env)]
    for candidate in candidates:
        path = os.path.join(cwd, candidate)
        try:
            os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return None
        return path if _executable(path) else None
    return None


def _executable(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode) and os.access(path, os.X_OK)
    except OSError:
        return False


def _head(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read(_HEAD)
    except OSError:
        return b""


def _native(head: bytes) -> bool:
    """An ELF of the same class, byte order and machine as this interpreter's."""
    own = _own_head()
    return len(head) >= 20 and head[:6] == own[:6] and head[18:20] == own[18:20]


@functools.cache
def _own_head() -> bytes:
    return _head("/proc/self/exe")
