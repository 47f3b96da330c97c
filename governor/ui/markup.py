"""HTML built from values, where every piece of text is escaped unless it is already markup.

Rules:
    * ``Html`` marks a string as markup. Everything else handed to ``el`` — a ``str``
      from an agent, a number, None — is text: it goes through ``text`` and is escaped.
      There is no other way to put a string into a page, so agent text is always inert.
    * ``text`` makes hostile text harmless *and visible*: a lone surrogate (which UTF-8
      cannot encode) becomes U+FFFD, control characters (ANSI escapes among them) are
      spelled ``\x1b``, bidirectional overrides ``<U+202E>``, and a huge string is cut
      with a note of how much was left out.
    * Attribute values are escaped with their quotes; attribute names are code, never data.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from typing import Final

TEXT_LIMIT: Final = 4000
"""Characters shown of any one piece of text (event texts are at most 2000)."""

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _visible_controls() -> dict[int, str]:
    """Control and bidi-override characters -> an ASCII spelling no terminal or layout obeys.

    ``\x1b[31m`` reads as the escape it is; ASCII renders in every font.
    """
    controls = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
    table = {code: f"\\x{code:02x}" for code in controls if chr(code) not in "\t\n"}
    bidi = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]
    table.update({code: f"<U+{code:04X}>" for code in bidi})
    return table


_CONTROLS: Final = _visible_controls()


class Html(str):
    """A string that is already markup: ``el`` inserts it as it is."""

    __slots__ = ()


def text(value: object, *, limit: int = TEXT_LIMIT) -> Html:
    """Any value as escaped, visible, bounded text (None is an em dash)."""
    raw = "—" if value is None else str(value)
    raw = _SURROGATE.sub("\ufffd", raw).replace("\r\n", "\n").translate(_CONTROLS)
    if len(raw) > limit:
        raw = f"{raw[:limit]}… ({len(raw) - limit} more characters not shown)"
    return Html(html.escape(raw, quote=True))


def _child(child: object) -> str:
    if isinstance(child, Html):
        return child
    if isinstance(child, str | int | float) or child is None:
        return text(child)
    if isinstance(child, list | tuple | Iterator):  # not a dict's keys, not bytes' numbers
        return "".join(_child(c) for c in child)
    raise TypeError(f"cannot put a {type(child).__name__} into a page")


def _attr(name: str, value: object) -> str:
    name = name.rstrip("_").replace("_", "-")
    if value is True:
        return f" {name}"
    if value is False or value is None:
        return ""
    return f' {name}="{text(value)}"'


def el(tag: str, *children: object, **attrs: object) -> Html:
    """``<tag attrs>children</tag>``; ``class_="x"`` gives ``class``, ``data_x`` gives ``data-x``."""
    opened = f"<{tag}{''.join(_attr(k, v) for k, v in attrs.items())}>"
    return Html(f"{opened}{''.join(_child(c) for c in children)}</{tag}>")


def void(tag: str, **attrs: object) -> Html:
    """An element without content (``<meta>``, ``<link>``)."""
    return Html(f"<{tag}{''.join(_attr(k, v) for k, v in attrs.items())}>")


def join(parts: Iterable[object]) -> Html:
    """Several children as one piece of markup."""
    return Html("".join(_child(p) for p in parts))
