"""governor: drive multi-step AI-agent goals to completion under honest budgets.

Every fact is an append-only event; all state is a pure fold of a goal's stream, so any
history can be replayed, explained and re-evaluated under another policy.

Names are imported on first use, so ``python -m governor.exec.scripted_player`` (run
once per scripted agent call) starts without loading pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["MAX_UNCHARGED_REPLANS", "Policy", "UpstreamUnavailable", "__version__"]

if TYPE_CHECKING:
    from governor.core.policy import MAX_UNCHARGED_REPLANS, Policy
    from governor.exec.python import UpstreamUnavailable


def __getattr__(name: str) -> Any:
    if name in ("MAX_UNCHARGED_REPLANS", "Policy"):
        from governor.core import policy  # noqa: PLC0415 - lazy on purpose (see above)

        return getattr(policy, name)
    if name == "UpstreamUnavailable":
        from governor.exec import python  # noqa: PLC0415 - lazy on purpose (see above)

        return python.UpstreamUnavailable
    raise AttributeError(f"module 'governor' has no attribute {name!r}")
