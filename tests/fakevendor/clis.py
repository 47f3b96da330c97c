"""Finding the real agent CLIs and pointing them at a fake vendor, offline and in a sandbox.

The CLIs come from the npm registry into ``.cache/npm`` (``.ci/install-node-clis``) or
from ``PATH``. :func:`require_cli` skips a test when one is missing, unless
``GOVERNOR_REQUIRE_ALL=1`` (CI), where a missing CLI fails the test instead.

Each run gets its own temporary ``HOME`` (and ``CODEX_HOME`` / ``CLAUDE_CONFIG_DIR``
inside it), so the user's configuration and credentials are never read, and a
configuration that sends no traffic anywhere but the fake vendor.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path
from typing import Final

import pytest

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import is_uncharged_failure

REPO: Final = Path(__file__).resolve().parents[2]
NPM_BIN: Final = REPO / ".cache" / "npm" / "node_modules" / ".bin"
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


def find_cli(name: str) -> str | None:
    """The path of CLI ``name``: the npm cache first, then ``PATH``."""
    cached = NPM_BIN / name
    if cached.is_file() and os.access(cached, os.X_OK):
        return str(cached)
    return shutil.which(name)


def require_cli(name: str) -> str:
    """The path of CLI ``name``; skip the test without it (fail when ``GOVERNOR_REQUIRE_ALL=1``)."""
    path = find_cli(name)
    if path is not None:
        return path
    message = f"{name} CLI not installed: run ./dev test (it calls .ci/install-node-clis)"
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
