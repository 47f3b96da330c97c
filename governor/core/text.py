"""Text helpers every output shares: timestamps, counted nouns, the last line of a failure.

Rules:
    * A timestamp prints as RFC 3339 UTC ending in ``Z``; a count names its noun in the
      right number; a failure's reason is its last non-empty line, bounded.
    * Text an agent wrote (a question, an error, a summary) is quoted where governor's
      sentences carry it: between “ and ”, its back-quotes shown as ``'`` and its own
      curly quotes as ``"``, so it never passes for governor's words or a `command`.
    * The line a failure is told by (``telling_line``) is its last line that reads as a
      verdict — an HTTP status, a failing test, an error — whichever stream it came from
      (the recorded text is stderr then stdout), else its last line: ``calling
      https://api…`` printed after the 503 is not what failed.
    * A leaf: it imports nothing of the core, so decisions, rules and the shell share it.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final


def stamp(when: datetime) -> str:
    """A timestamp as RFC 3339 UTC ending in ``Z``, as every output prints it."""
    return when.isoformat().replace("+00:00", "Z")


def count(n: int, noun: str) -> str:
    """``1 attempt``, ``3 attempts``: a number with its noun in the right number."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def same_way(n: int, error: str | None, who: str = "") -> str:
    """SPEC §12.10's reason: "failed the same way N times in a row: <error>" (``who``: the
    planner's, "the planner ")."""
    return f"{who}failed the same way {n} times in a row: {said(error, 'no error recorded')}"


def last_line(text: str | None, fallback: str) -> str:
    """The last non-empty line of a failure text (vendors put the reason last), bounded."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:300] if lines else fallback


_UNQUOTE = str.maketrans({"`": "'", "“": '"', "”": '"'})


def quoted(text: str) -> str:
    """Agent text as quoted data: ``“…”``, back-quotes as ``'`` (never a governor `command`)."""
    return f"“{text.translate(_UNQUOTE)}”"


TELLING: Final = re.compile(
    r"\bHTTP/[\d.]+ [45]\d\d\b"
    r"|\b[45]\d\d (?:Service|Too Many|Internal|Bad|Gateway|Unauthorized|Forbidden|Not Found)"
    r"|\bstatus(?: code)?[\"']?[:= ]+[45]\d\d\b"
    r"|^(?:FAILED|ERROR|FAIL:?) \S"
    r"|\b\d+ (?:failed|errors?)\b"
    r"|^[\w.]*(?:Error|Exception)\b:"
    r"|^(?:error|fatal)(?:\[\w+\])?:",
    re.IGNORECASE,
)
"""A line that reads as the verdict of a failure (first match from the end wins)."""


def telling_line(text: str | None, fallback: str) -> str:
    """The line a failure is told by: its last line matching ``TELLING`` (a status, a
    failing test, an error), else its last non-empty line; bounded like ``last_line``."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in reversed(lines):
        if TELLING.search(line):
            return line[:300]
    return lines[-1][:300] if lines else fallback


def said(text: str | None, fallback: str) -> str:
    """The telling line of an agent's text (``telling_line``), quoted (``quoted``);
    ``fallback`` (governor's own words) when it wrote nothing."""
    line = telling_line(text, "")
    return quoted(line) if line else fallback
