"""The upstream text list (SPEC §4 rule 4, §11.7): when failure text alone names a vendor refusal.

Rules:
    * An HTTP status 429/5xx *in status context* (``HTTP/1.1 503``, ``status 503``,
      ``status: 429``, ``status code 502``, ``status=529``, ``api_error_status: 529``,
      ``"status": 503``, ``503 Service Unavailable`` at a line's start), or a phrase —
      circuit open, service unavailable, too many requests, rate limit, overloaded, bad
      gateway, gateway timeout, internal server error — its words joined by space, ``_``,
      ``-`` or nothing.
    * Never ``error 503`` mid-line, ``429 items``, ``502 seconds``, ``port 5001``,
      ``HTTP 5031``, ``status 5000``, ``quota exceeded``, ``401``, ``ECONNRESET``: a false
      match grants a free retry, so the list stays tight (``tests/core/test_classify.py``
      pins both sides; ``docs/classification.md`` quotes it).
"""

from __future__ import annotations

import re
from typing import Final

_STATUS = r"(?:429|5\d\d)(?!\d)"
_SEP = r"[ _-]?"
"""Between the words of a phrase: nothing, a space, ``_`` or ``-`` (SPEC §11.7)."""
_START = r"(?<![a-z0-9])"
"""A word start where ``_`` and ``-`` separate words too (``\b`` treats ``_`` as a letter)."""
_END = r"(?![a-z0-9])"


def _phrase(*words: str) -> str:
    return _SEP.join(words)


_REASON_PHRASES = "|".join(
    (
        _phrase("too", "many", "requests"),
        _phrase("internal", "server", "error"),
        _phrase("not", "implemented"),
        _phrase("bad", "gateway"),
        _phrase("service", "unavailable"),
        _phrase("gateway", "time", "out"),
        _phrase("http", "version", "not", "supported"),
        _phrase("insufficient", "storage"),
        _phrase("loop", "detected"),
        _phrase("not", "extended"),
        _phrase("network", "authentication", "required"),
        _phrase("site", "(?:is", ")?overloaded"),
    )
)
_UPSTREAM_PATTERNS: Final = (
    # HTTP status lines: "HTTP/1.1 503", "HTTP/2 429", "HTTP 502"
    rf"{_START}HTTP(?:/\d(?:\.\d)?)?[ \t]+{_STATUS}",
    # "status 503", "status: 429", "status=529", "status code 502", "status_code: 500", and
    # what vendor envelopes write: "api_error_status: 529", '"status": 503'
    rf"{_START}status(?:[ _]code)?\"?[ \t]*[:=]?[ \t]*{_STATUS}",
    # a status line's code and reason phrase at the start of a line: "503 Service Unavailable"
    rf"^[ \t]*{_STATUS}[ \t]+(?:{_REASON_PHRASES}){_END}",
    rf"{_START}{_phrase('circuit', '(?:breaker', ')?(?:is', ')?open')}{_END}",
    rf"{_START}{_phrase('service', 'unavailable')}",
    rf"{_START}{_phrase('too', 'many', 'requests')}",
    rf"{_START}{_phrase('rate', 'limit')}",
    rf"{_START}overloaded(?:{_SEP}error)?{_END}",
    rf"{_START}{_phrase('bad', 'gateway')}",
    rf"{_START}{_phrase('gateway', 'time', 'out')}",
    rf"{_START}{_phrase('internal', 'server', 'error')}",
)
UPSTREAM_TEXT: Final = re.compile("|".join(_UPSTREAM_PATTERNS), re.IGNORECASE | re.MULTILINE)
"""The upstream text list of SPEC §4 as one expression; ``docs/classification.md`` quotes it."""


def is_upstream_status(status: int | None) -> bool:
    """A structured vendor status that means the vendor refused: 429 or any 5xx (incl. 529)."""
    return status is not None and (status == 429 or 500 <= status <= 599)


def is_upstream_text(text: str | None) -> bool:
    """Whether failure text names an upstream refusal in status context or by phrase."""
    return bool(text) and UPSTREAM_TEXT.search(text or "") is not None
