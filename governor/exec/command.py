"""The ``command`` harness: any executable, the prompt on stdin, the reply on stdout.

Rules (SPEC §4, §7):
    * ``profile.args`` is ``[executable, *arguments]``. An executable given as a
      relative path (it contains a ``/``) resolves against the goal file's folder; a
      bare name is looked up on the scrubbed ``PATH``. Arguments are passed as given.
    * The child sees the scrubbed environment: the base allow-list plus ``profile.env``.
    * A command cannot be observed: its failure evidence is ``unknown`` (so the core's
      gate charges it whatever its class), except when the process never started,
      where the core's ``spawn-errno`` rule records positive no-effect evidence. What
      it wrote to stdout before failing survives as ``partial``.
    * Success is exit status 0 within the timeout; the reply is stdout, redacted.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from governor.core.classify import SpawnResult
from governor.core.events import Profile
from governor.core.evidence import Evidence
from governor.errors import InputError
from governor.exec.environment import Redactor, scrubbed_env
from governor.exec.harness import partial_of, spawn_result, stdout_text
from governor.exec.process import run_process


class CommandHarness:
    """Runs ``profile.args`` as a child process: prompt on stdin, reply on stdout."""

    name: Final = "command"

    def __init__(self, base_dir: Path) -> None:
        """Serve profiles whose relative executables live under ``base_dir`` (the goal's folder)."""
        self.base_dir = base_dir

    def argv(self, profile: Profile) -> tuple[str, ...]:
        """The argument list for ``profile``, its executable resolved.

        Raises:
            InputError: the profile names no executable.
        """
        if not profile.args:
            raise InputError("a 'command' profile needs args = [executable, *arguments]")
        executable, *rest = profile.args
        return (self.binary(profile) or executable, *rest)

    def binary(self, profile: Profile) -> str | None:
        """The executable: a relative path resolved against ``base_dir``, or a bare name."""
        if not profile.args:
            return None
        executable = profile.args[0]
        if "/" in executable and not Path(executable).is_absolute():
            return str(self.base_dir / executable)
        return executable

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        """Run the command once; see the module rules for what it reports."""
        result = run_process(
            self.argv(profile),
            stdin=prompt.encode("utf-8"),
            env=scrubbed_env(env, profile.env),
            cwd=cwd,
            timeout_s=profile.timeout_s,
        )
        ok = result.started and result.exit_code == 0 and not result.timed_out
        return spawn_result(
            result,
            Redactor(env),
            ok=ok,
            reply=stdout_text(result) if ok else None,
            evidence=Evidence(partial=partial_of(result)),
        )
