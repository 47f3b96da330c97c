"""Failure signatures: when two failures are "the same failure again" (SPEC §12.10).

Rules (decision record 0017):
    * A signature is the failure's class, the classification rule that fired and its
      error text *normalised*: what varies from one run of the same failure to the next
      is replaced — times and dates, UUIDs and hex ids, the folders of a path (its file
      name is kept), and every number — runs of blanks are one blank, and empty lines go.
    * A text cut at its head (``…``, tail-preserved) loses its first, partial line: two
      cuts of the same output at different places would differ there.
    * The signature is ``<class>/<rule> <digest>: <excerpt>``: the digest (12 hex digits of
      the SHA-256 of the whole normalised text) tells failures apart, the excerpt (the last
      normalised line, where vendors and tools put the reason) lets a person read it.
    * It is computed once, when the failure is recorded, and recorded with it: a replay
      reads the recorded signature and never normalises again, so a better normalisation
      later changes no recorded history.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

SIGNATURE_LIMIT: Final = 300
"""The longest signature (``events.Signature``): class, rule, digest and an excerpt."""
EXCERPT_LIMIT: Final = 120

_REPLACEMENTS: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    # an RFC 3339 / ISO 8601 time, or a date, or a clock time (before the numbers go)
    (
        re.compile(
            r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?"
            r"(?:[Zz]|[+-]\d{2}:?\d{2})?)?"
        ),
        "<time>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    # a UUID, a 0x number, a hex id of 8 or more digits with a letter and a digit in it
    (re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b"), "<id>"),
    (re.compile(r"\b0[xX][0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{8,}\b"), "<hex>"),
    # an absolute path, or one from ``~``, ``.`` or ``..`` (not a URL's): its folders go, its
    # file name stays (``/tmp/x1/src/app.py`` -> ``<path>/app.py``)
    (
        re.compile(r"(?<![\w<>:/])(?:~|\.{1,2})?(?:/[^\s/:'\"`()\[\]{},;<>|]+)+/(?=[^\s/])"),
        "<path>/",
    ),
    # every other number (``1.5`` too)
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
    (re.compile(r"[ \t]+"), " "),
)


def normalise(text: str | None) -> str:
    """The error text with what varies between runs of one failure replaced (see above)."""
    body = text or ""
    if body.startswith("…"):
        _, _, body = body.partition("\n")
    for pattern, replacement in _REPLACEMENTS:
        body = pattern.sub(replacement, body)
    lines = (line.strip() for line in body.splitlines())
    return "\n".join(line for line in lines if line)


def signature(failure_class: str | None, rule: str | None, error: str | None) -> str:
    """The signature of a failure: ``<class>/<rule> <digest>: <excerpt>`` (see above)."""
    text = normalise(error)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    excerpt = text.rpartition("\n")[2][:EXCERPT_LIMIT] or "(no error text)"
    return f"{failure_class or 'none'}/{rule or 'none'} {digest}: {excerpt}"
