"""Store passwords masked: every message, log line and page that may show a store URL
goes through ``mask_password`` (dependency-free, so every backend can use it)."""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote

MASK: Final = "***"
_USERINFO: Final = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:'\"]*:)(?P<secret>[^\s'\"]*)@"
)
"""``scheme://user:PASSWORD@``: the password runs to the last ``@`` before a space or quote."""
_KEYWORD: Final = re.compile(
    r"(?P<head>\bpassword\s*=\s*)(?P<secret>'(?:[^'\\]|\\.)*'|[^\s'\"]+)", re.I
)
"""``password=SECRET`` in a libpq conninfo string (quoted or not)."""


def mask_password(text: str, url: str | None = None) -> str:
    """``text`` with every password a store URL could carry replaced by ``***``.

    The one function every message, log line and page that may show a store URL goes
    through: passwords in ``scheme://user:password@host`` URLs and in conninfo
    ``password=…`` pairs are masked wherever they appear in ``text``; when ``url`` is
    given, its password is also masked wherever a driver echoed it in another form
    (percent-decoded, or cut out of the URL).
    """
    secrets = [
        m.group("secret") for pattern in (_USERINFO, _KEYWORD) for m in pattern.finditer(url or "")
    ]
    for secret in {s for raw in secrets for s in (raw, unquote(raw), raw.strip("'")) if len(s) > 1}:
        text = text.replace(secret, MASK)
    text = _USERINFO.sub(lambda m: f"{m.group('head')}{MASK}@", text)
    return _KEYWORD.sub(lambda m: f"{m.group('head')}{MASK}", text)
