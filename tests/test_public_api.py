"""The public API is pinned, so removing a name is a deliberate act."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import governor

PUBLIC = [
    "AgentContext",
    "AgentReply",
    "CommandRefusedError",
    "Goal",
    "GoalStatus",
    "GovernorError",
    "GovernorRunError",
    "InputError",
    "MAX_UNCHARGED_REPLANS",
    "NotFoundError",
    "Policy",
    "Question",
    "RunResult",
    "UpstreamUnavailable",
    "__version__",
    "instrument",
    "planning_graph",
    "uninstrument",
]


def test_package_exports() -> None:
    assert sorted(governor.__all__) == sorted(PUBLIC)


def test_every_public_name_resolves_and_is_documented() -> None:
    api = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text()
    for name in PUBLIC:
        assert getattr(governor, name) is not None
        if name not in ("__version__", "MAX_UNCHARGED_REPLANS", "Policy"):
            assert name in api, f"docs/api.md never mentions {name}"


def test_max_uncharged_replans_is_the_default() -> None:
    assert governor.MAX_UNCHARGED_REPLANS == 3
    assert governor.Policy().max_uncharged_replans == governor.MAX_UNCHARGED_REPLANS


def test_importing_governor_loads_nothing_heavy() -> None:
    probe = "import sys, governor; print(sorted(m for m in ('pydantic', 'langgraph', 'langchain_core') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert loaded.stdout.strip() == "[]", loaded.stderr
