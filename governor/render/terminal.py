"""Text made safe to print: nothing a goal's history holds can drive the reader's terminal.

Rules:
    * Agents write text that ends up in events (reasons, errors, summaries); ``events``,
      ``explain`` and every other text output print it. A control character in it (an
      ANSI escape sequence, a carriage return that overwrites the line, a bell, a title
      change) is printed as its escape (``\\x1b``), never as itself; newlines and tabs
      stay.
    * So are the Unicode controls that reorder or hide what is shown (bidirectional
      overrides and isolates, C1 controls) and lone surrogates, which no terminal
      encoding can carry.
    * ``--json`` output needs none of this: JSON escapes control characters itself.
"""

from __future__ import annotations

import re
from typing import Final

UNSAFE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
"""C0 controls but tab and newline, DEL, C1 controls, bidirectional marks, overrides and
isolates, and lone surrogates."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every character that could drive a terminal written as its escape."""
    return UNSAFE.sub(_escape, text)
