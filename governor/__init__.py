"""governor: drive multi-step AI-agent goals to completion under honest budgets.

Every fact is an append-only event; all state is a pure fold of a goal's stream, so any
history can be replayed, explained and re-evaluated under another policy.
"""

from governor.core.policy import MAX_UNCHARGED_REPLANS, Policy

__version__ = "0.1.0"

__all__ = ["MAX_UNCHARGED_REPLANS", "Policy", "__version__"]
