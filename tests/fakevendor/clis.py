"""Finding the real agent CLIs and pointing them at a fake vendor, offline and in a sandbox.

The CLIs come from the npm registry into ``.cache/npm`` (``.ci/install-node-clis``) or
from ``PATH``. :func:`require_cli` skips a test when one is missing, unless
``GOVERNOR_REQUIRE_ALL=1`` (CI), where a missing CLI fails the test instead. Each CLI is
pinned at two releases (``governor/exec/cli_pins.json``): the oldest supported one is the
default in ``.cache/npm/node_modules/.bin``, a newer one sits in a prefix of its own,
``.cache/npm/versions/<cli>@<version>``; ``require_cli(name, version)`` finds either and
checks that it reports that version.

Each run gets its own temporary ``HOME`` (and ``CODEX_HOME`` / ``CLAUDE_CONFIG_DIR``
inside it), so the user's configuration and credentials are never read, and a
configuration that sends no traffic anywhere but the fake vendor.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from functools import cache
from pathlib import Path
from typing import Final

import pytest

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import is_uncharged_failure
from governor.exec.cli_pins import cli_pins, version_of
from governor.exec.gemini import insecure_ancestor

REPO: Final = Path(__file__).resolve().parents[2]
NPM_BIN: Final = REPO / ".cache" / "npm" / "node_modules" / ".bin"
NPM_VERSIONS: Final = REPO / ".cache" / "npm" / "versions"
REQUIRE_ALL: Final = "GOVERNOR_REQUIRE_ALL"

FAKE_OPENAI_KEY: Final = "sk-fake-openai-0123456789abcdef"
"""The API key codex sends to the fake vendor (variable ``FAKE_VENDOR_API_KEY``)."""
FAKE_ANTHROPIC_KEY: Final = "sk-ant-fake-0123456789abcdef"
"""The API key claude sends to the fake vendor (variable ``ANTHROPIC_API_KEY``)."""

CODEX_CONFIG: Final = """\
# Written by tests/fakevendor/clis.py: codex talks to the fake vendor and nothing else.
model_provider = "fake"
model = "gpt-5-codex"

[model_providers.fake]
name = "fake-vendor"
base_url = "{base_url}/v1"
wire_api = "responses"
env_key = "FAKE_VENDOR_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false        # no curated-plugin sync (git and HTTPS to github.com)
remote_plugin = false
apps = false           # no ChatGPT connectors
shell_snapshot = false # no login shell spawned at start

[analytics]
enabled = false
"""


def find_cli(name: str, version: str | None = None) -> str | None:
    """The path of CLI ``name``: the npm cache first, then ``PATH``; with ``version``, the
    first of its own prefix, the npm cache and ``PATH`` that reports that version."""
    candidates = [NPM_BIN / name]
    if version is not None:
        candidates.insert(0, NPM_VERSIONS / f"{name}@{version}" / "node_modules" / ".bin" / name)
    found = [str(c) for c in candidates if c.is_file() and os.access(c, os.X_OK)]
    on_path = shutil.which(name)
    found += [on_path] if on_path is not None else []
    if version is None:
        return found[0] if found else None
    return next((path for path in found if reported_version(path) == version), None)


@cache
def reported_version(cli: str) -> str | None:
    """The version ``cli --version`` reports (None: it printed none, or failed)."""
    try:
        done = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return version_of(done.stdout)


def pinned_versions(name: str) -> tuple[str, ...]:
    """The releases of CLI ``name`` the live tests run against (oldest first)."""
    return cli_pins()[name].versions


def require_cli(name: str, version: str | None = None) -> str:
    """The path of CLI ``name`` (at ``version``, if given); skip the test without it (fail
    when ``GOVERNOR_REQUIRE_ALL=1``)."""
    path = find_cli(name, version)
    if path is not None:
        return path
    what = name if version is None else f"{name} {version}"
    message = f"{what} CLI not installed: run ./dev test (it calls .ci/install-node-clis)"
    if os.environ.get(REQUIRE_ALL) == "1":
        pytest.fail(f"{message}; {REQUIRE_ALL}=1 forbids skipping", pytrace=False)
    pytest.skip(message)


def dead_url() -> str:
    """``http://127.0.0.1:PORT`` of a port nothing listens on (SPEC §12.7): one the kernel
    just gave out, closed again."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def tool_path(cli: str) -> str:
    """A ``PATH`` with the CLI's folder, node's folder and the system folders."""
    folders = [str(Path(cli).parent)]
    node = shutil.which("node")
    if node is not None:
        folders.append(str(Path(node).parent))
    folders += ["/usr/local/bin", "/usr/bin", "/bin"]
    return os.pathsep.join(dict.fromkeys(folders))


def codex_env(home: Path, base_url: str, cli: str) -> dict[str, str]:
    """The source environment for a codex run against the fake vendor at ``base_url``."""
    codex_home = home / "codex-home"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(base_url=base_url))
    return {
        "PATH": tool_path(cli),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CODEX_HOME": str(codex_home),
        "FAKE_VENDOR_API_KEY": FAKE_OPENAI_KEY,
    }


def claude_env(home: Path, base_url: str, cli: str) -> dict[str, str]:
    """The source environment for a claude run against the fake vendor at ``base_url``."""
    config = home / "claude-config"
    config.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": tool_path(cli),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_KEY,
    }


FAKE_GEMINI_KEY: Final = "fake-gemini-key-0123456789abcdef"
"""The API key gemini sends to the fake vendor (variable ``GEMINI_API_KEY``)."""
GEMINI_MODEL: Final = "gemini-2.5-flash"
GEMINI_CALLS: Final = REPO / ".cache" / "gemini-calls"
"""Where the gemini harness writes its per-call settings in the tests: a folder no one
else may write (gemini ignores a system settings file under ``/tmp``)."""


def gemini_env(home: Path, base_url: str, cli: str) -> dict[str, str]:
    """The source environment for a gemini run against the fake vendor at ``base_url``:
    API-key auth selected in the temporary HOME's ``~/.gemini/settings.json``."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    GEMINI_CALLS.mkdir(mode=0o700, parents=True, exist_ok=True)
    shared = insecure_ancestor(GEMINI_CALLS)
    if shared is not None:
        pytest.fail(
            f"{shared} is writable by others: gemini would ignore governor's settings under "
            f"{GEMINI_CALLS} (check out the repository where only you can write)",
            pytrace=False,
        )
    return {
        "PATH": tool_path(cli),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "GEMINI_API_KEY": FAKE_GEMINI_KEY,
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GOVERNOR_GEMINI_DIR": str(GEMINI_CALLS),
    }


def gemini_profile(timeout_s: float = 60.0, *, args: tuple[str, ...] = ()) -> Profile:
    """A gemini profile with a fixed model (no ``auto`` routing: one request per turn)."""
    return Profile(harness="gemini", model=GEMINI_MODEL, timeout_s=timeout_s, args=args)


def codex_profile(timeout_s: float = 60.0, *, args: tuple[str, ...] = ()) -> Profile:
    """A codex profile that passes the fake vendor's key variable through."""
    return Profile(harness="codex", timeout_s=timeout_s, env=("FAKE_VENDOR_API_KEY",), args=args)


def claude_profile(timeout_s: float = 60.0, *, args: tuple[str, ...] = ()) -> Profile:
    """A claude profile (its key and base URL pass through as Claude Code's own variables)."""
    return Profile(harness="claude", timeout_s=timeout_s, args=args)


PLAN: Final = {
    "decision": "apply",
    "rationale": "one step is enough",
    "work": [{"key": "hello", "title": "Say hello", "objective": "Print hello"}],
}
"""The plan the fake vendor's model answers with in the CLI tests."""
PROMPT: Final = "Plan the goal: say hello."


def is_charged(result: SpawnResult) -> bool:
    """Whether the core's gate charges a failed result."""
    return not is_uncharged_failure(result.failure_class, result.evidence)
