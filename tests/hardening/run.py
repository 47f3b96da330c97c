"""The real ``governor`` command, run the way a user (or an attacker) runs it."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from subprocess import CompletedProcess, run

from governor.cli.exit_codes import ExitCode

GOVERNOR = shutil.which("governor", path=str(Path(sys.executable).parent)) or "governor"
DOCUMENTED = frozenset(int(code) for code in ExitCode if code is not ExitCode.FAILURE)
"""Every exit code docs/cli.md lists for a user-caused outcome (1 is a bug: never here)."""


def governor(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    stdin: str | None = None,
) -> CompletedProcess[str]:
    """Run ``governor ARGS`` in ``cwd``; its store is ``cwd/s.db`` unless ``env`` says."""
    environment = {
        **os.environ,
        "GOVERNOR_STORE": str(cwd / "s.db"),
        "PYTHONWARNINGS": "ignore",
        **(env or {}),
    }
    environment.pop("GOVERNOR_DEBUG", None)
    return run(
        [GOVERNOR, *args],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        cwd=cwd,
        env=environment,
        timeout=timeout,
        input=stdin,
        check=False,
    )


def assert_one_line(result: CompletedProcess[str], code: int, *needles: str) -> str:
    """The command failed with ``code`` and one line on stderr holding every needle."""
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
