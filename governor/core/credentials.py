"""Credential shapes: how a text that holds an API key or a token is recognised.

Rules (SPEC §10, Secrets):
    * ``CREDENTIAL_PATTERNS`` are the known shapes the shell's redactor removes from
      every text it may record (with the values of the environment's secret variables):
      ``sk-…`` API keys, GitHub tokens, AWS access key ids, header values and Bearer
      tokens. Header and Bearer patterns keep their prefix in named groups, so a
      redacted text still reads.
    * ``KEY_SHAPES`` are the subset that are unmistakably a key whatever surrounds them
      (a fixed prefix and a long run of key characters). The store refuses to append an
      event whose body holds one (``find_key``): a last check, after redaction, that
      cannot mistake prose such as "Authorization: header" or "Bearer authentication"
      for a secret.
"""

from __future__ import annotations

import re
from typing import Final

KEY_SHAPES: Final = (
    # OpenAI / Anthropic style keys: sk-…, sk-proj-…, sk-ant-api03-…
    ("an sk-… API key", r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}"),
    # GitHub tokens: classic (ghp_, gho_, ghu_, ghs_, ghr_) and fine-grained
    ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    ("a GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    # AWS access key ids
    ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
)
"""(what it is, its pattern): shapes that are a key wherever they appear."""

CREDENTIAL_PATTERNS: Final = (
    *(pattern for _, pattern in KEY_SHAPES),
    # header values, keeping the header name: "Authorization: Basic …", "x-api-key: …"
    r"(?P<header>\b(?i:authorization|proxy-authorization|x-api-key|api[_-]?key)"
    r"[\"']?[ \t]*[:=][ \t]*[\"']?)(?:(?i:bearer|basic|token|digest)[ \t]+)?[^\s\"',;}]+",
    # bearer tokens anywhere, keeping the word: "Bearer abc.def"
    r"(?P<bearer>\b(?:Bearer|bearer|BEARER)[ \t]+)[A-Za-z0-9._~+/=-]{8,}",
)
"""Every known credential shape, for redaction."""

_PREFIXES: Final = re.compile(rb"sk-|gh[pousr]_|github_pat_|A[KS]IA")
"""Every key shape begins so: a body without any needs no full search (the common case)."""
_KEYS: Final = re.compile(
    "|".join(f"(?P<k{i}>{pattern})" for i, (_, pattern) in enumerate(KEY_SHAPES)).encode()
)


def find_key(body: bytes) -> str | None:
    """What kind of key ``body`` (UTF-8 text, an event's JSON) holds, or None."""
    if _PREFIXES.search(body) is None:
        return None
    found = _KEYS.search(body)
    if found is None:
        return None
    return KEY_SHAPES[int((found.lastgroup or "k0")[1:])][0]
