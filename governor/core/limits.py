"""The ceilings of every number governor holds, without the models that enforce them.

``governor.core.numbers`` builds the pydantic number types from these (and re-exports
them); this module imports nothing, so the command line checks its arguments against the
same ceilings without importing pydantic (start-up, issue 12).
"""

from __future__ import annotations

from typing import Final

MAX_INT64: Final = 2**63 - 1
"""The largest integer any event carries (seq, attempt numbers, byte counts)."""

MAX_COUNT: Final = 1_000_000_000
"""The largest limit of anything counted: plans, attempts, work items (a billion)."""

MAX_PARALLEL: Final = 1000
"""The most work items dispatched at once (each is an agent process)."""

MAX_WAIT_S: Final = 30 * 24 * 3600
"""The longest wait or agent timeout, in seconds: 30 days (2,592,000 s)."""

MAX_RUNTIME_S: Final = 10_000_000_000
"""The largest cumulative runtime budget, in seconds (about 317 years)."""

MAX_USD: Final = 1_000_000_000
"""The largest cost, budget or reported, in US dollars (a billion)."""

MAX_FACTOR: Final = 100
"""The largest growth factor of a back-off."""
