"""Run the real ``governor ui`` process, and Debian's Chromium through Playwright.

Playwright drives the system's browser (``/usr/bin/chromium``, from ``.ci/run``'s
``apt-get install chromium``): ``playwright install`` cannot download one here.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

GOVERNOR: Final = shutil.which("governor", path=str(Path(sys.executable).parent)) or "governor"
CHROMIUM: Final = Path(os.environ.get("GOVERNOR_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
_SERVING: Final = re.compile(r"serving (https?://\S+)")
_TOKEN: Final = re.compile(r"\?token=(\S+) once")


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.is_file():
        return f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install playwright)"
    return None


class Server:
    """A ``governor ui`` process, the address it printed and (with ``--allow-actions``)
    its access token; ``banner`` is what it printed before serving."""

    def __init__(
        self, proc: subprocess.Popen[str], url: str, token: str | None = None, banner: str = ""
    ) -> None:
        self.proc, self.url, self.token, self.banner = proc, url, token, banner

    def at(self, path: str) -> str:
        """The full address of a path on this server."""
        return self.url.rstrip("/") + path

    @property
    def token_link(self) -> str:
        """The address that gives a browser the access token (``--allow-actions``)."""
        assert self.token is not None, "started without --allow-actions"
        return f"{self.url}?token={self.token}"

    def stop(self, sig: int = signal.SIGTERM) -> str:
        """Stop it (SIGTERM, or SIGINT as Ctrl-C sends); returns what it wrote on stderr
        after its banner."""
        self.proc.send_signal(sig)
        _, stderr = self.proc.communicate(timeout=30)
        return stderr


def start_ui(*args: str, cwd: Path | None = None, timeout_s: float = 60) -> Server:
    """Start ``governor ui ARGS --port 0`` and wait for the address it serves."""
    proc = subprocess.Popen(
        [GOVERNOR, "ui", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout_s
    seen = ""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if ready:
            line = proc.stderr.readline()
            seen += line
            if found := _SERVING.search(line):
                token = None
                if "actions allowed" in line:
                    following = proc.stderr.readline()
                    seen += following
                    token = _TOKEN.search(following).group(1)  # type: ignore[union-attr]
                return Server(proc, found.group(1), token, seen)
        if proc.poll() is not None:
            break
    proc.kill()
    out, err = proc.communicate()
    raise AssertionError(f"governor ui did not start: {seen}{err}{out}")


@contextmanager
def chromium() -> Iterator[Any]:
    """A fresh headless Chromium context (its own user-data-dir), closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=list(CHROMIUM_FLAGS),
            viewport={"width": 1400, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()
