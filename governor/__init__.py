"""governor: drive multi-step AI-agent goals to completion under honest budgets.

Every fact is an append-only event; all state is a pure fold of a goal's stream, so any
history can be replayed, explained and re-evaluated under another policy.

The public API (``docs/api.md``)::

    goal = governor.Goal.create({...}, store="sqlite:///goals.db")
    goal.run()                      # drive it (LangChain callbacks and config welcome)
    goal.status().question          # what a person is asked, if anything
    goal.answer("use PostgreSQL")   # recorded as `governor work retry` / `resume` would
    governor.planning_graph(...)    # the LangGraph graph, to run or embed

Names are imported on first use, so ``python -m governor.exec.scripted_player`` (run
once per scripted agent call) starts without loading pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

from governor._version import __version__

_NAMES: Final[dict[str, str]] = {
    "AgentContext": "governor.exec.call",
    "AgentReply": "governor.exec.python",
    "CommandRefusedError": "governor.errors",
    "Goal": "governor.api",
    "GoalStatus": "governor.api",
    "GovernorError": "governor.errors",
    "GovernorRunError": "governor.graph.deploy",
    "InputError": "governor.errors",
    "MAX_UNCHARGED_REPLANS": "governor.core.policy",
    "NotFoundError": "governor.errors",
    "Policy": "governor.core.policy",
    "Question": "governor.core.question",
    "RunResult": "governor.api",
    "UpstreamUnavailable": "governor.exec.python",
    "instrument": "governor.drive.spans",
    "planning_graph": "governor.graph.deploy",
    "uninstrument": "governor.drive.spans",
}
"""Each public name and the module it lives in (imported when the name is first used)."""

__all__ = [
    "MAX_UNCHARGED_REPLANS",
    "AgentContext",
    "AgentReply",
    "CommandRefusedError",
    "Goal",
    "GoalStatus",
    "GovernorError",
    "GovernorRunError",
    "InputError",
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

if TYPE_CHECKING:
    from governor.api import Goal, GoalStatus, RunResult
    from governor.core.policy import MAX_UNCHARGED_REPLANS, Policy
    from governor.core.question import Question
    from governor.drive.spans import instrument, uninstrument
    from governor.errors import CommandRefusedError, GovernorError, InputError, NotFoundError
    from governor.exec.call import AgentContext
    from governor.exec.python import AgentReply, UpstreamUnavailable
    from governor.graph.deploy import GovernorRunError, planning_graph


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'governor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES})
