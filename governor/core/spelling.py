"""Did you mean …? The closest of a closed set of names to a word someone mistyped.

Rules: pure (``difflib``); at most one suggestion, only when it is close (a typo, not a
guess); used where a name from a closed set is refused — a goal file's ``harness``, a
command line's choice (``governor probe codx``, ``governor replya``).
"""

from __future__ import annotations

from collections.abc import Iterable
from difflib import get_close_matches
from typing import Final

CLOSE: Final = 0.6
"""``difflib``'s similarity a suggestion needs (its default)."""


def did_you_mean(word: str, names: Iterable[str]) -> str:
    """`` (did you mean 'codex'?)`` for the closest name, or ``""`` when none is close."""
    close = get_close_matches(word, list(names), n=1, cutoff=CLOSE)
    return f" (did you mean '{close[0]}'?)" if close else ""
