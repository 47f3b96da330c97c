"""What a child may see of our environment, and what of its output may be recorded.

Rules (SPEC §10, Secrets):
    * Children get an allow-listed environment: ``BASE_ALLOW`` plus the names a harness
      or a profile asks for. Nothing else passes, whatever the parent holds.
    * Every text that may be recorded (failure tails, replies that go into events) goes
      through a ``Redactor`` first. It replaces with ``[REDACTED]`` the values of
      variables whose names end in ``_KEY``, ``_TOKEN``, ``_SECRET`` or ``_PASSWORD``
      (values shorter than ``MIN_SECRET_LEN`` are left alone, so that ``X_KEY=1`` does
      not mangle every ``1``), and known credential shapes
      (``governor.core.credentials``): ``sk-…`` API keys, ``Bearer …`` tokens,
      ``Authorization:`` and ``x-api-key:`` header values, GitHub tokens and AWS access
      key ids. Header and Bearer prefixes are kept so the text still reads.
    * One compiled expression per set of secret values, cached, so redaction is a
      single pass over the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Final

from governor.core.credentials import CREDENTIAL_PATTERNS

BASE_ALLOW: Final = frozenset({"PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER"})
"""Variables every child receives when the parent has them."""

SECRET_SUFFIXES: Final = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
"""A variable whose name ends in one of these holds a secret; its value is redacted."""

MIN_SECRET_LEN: Final = 6
"""Shorter secret values are not redacted: they would mangle ordinary text."""

REDACTED: Final = "[REDACTED]"


def scrubbed_env(source: Mapping[str, str], allow: Iterable[str]) -> dict[str, str]:
    """The environment a child receives: ``BASE_ALLOW`` plus ``allow``, nothing else.

    Args:
        source: the environment to take values from (``os.environ`` or a snapshot).
        allow: extra names to pass through: the harness's own configuration
            variables and the profile's ``env`` names.

    Returns:
        A new dict holding only the allowed names that ``source`` has.
    """
    names = BASE_ALLOW.union(allow)
    return {name: value for name, value in source.items() if name in names}


def is_secret_name(name: str) -> bool:
    """Whether a variable name says its value is a secret (``*_KEY``, ``*_TOKEN`` …)."""
    return name.upper().endswith(SECRET_SUFFIXES)


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values of ``env`` that must never be recorded, longest first."""
    values = {
        value
        for name, value in env.items()
        if is_secret_name(name) and len(value) >= MIN_SECRET_LEN
    }
    return tuple(sorted(values, key=lambda value: (-len(value), value)))


@lru_cache(maxsize=32)
def _compile(values: tuple[str, ...]) -> re.Pattern[str]:
    literals = [re.escape(value) for value in values]
    return re.compile("|".join([*literals, *CREDENTIAL_PATTERNS]))


def _replace(match: re.Match[str]) -> str:
    keep = match.group("header") or match.group("bearer") or ""
    return keep + REDACTED


class Redactor:
    """Removes secrets from text that may be recorded; build one per environment."""

    def __init__(self, env: Mapping[str, str]) -> None:
        """Prepare the single expression for ``env``'s secret values and known patterns.

        Args:
            env: the environment whose ``*_KEY``/``*_TOKEN``/``*_SECRET``/``*_PASSWORD``
                values are secrets (the parent's, not the scrubbed one: a child may
                learn a secret some other way).
        """
        self._pattern = _compile(secret_values(env))

    def __call__(self, text: str) -> str:
        """Return ``text`` with every secret replaced by ``[REDACTED]``."""
        return self._pattern.sub(_replace, text)


def redact(text: str, env: Mapping[str, str]) -> str:
    """Return ``text`` with the secrets of ``env`` and known credential shapes redacted.

    Args:
        text: any text that may be recorded.
        env: the environment whose secret-named variables' values are redacted.

    Returns:
        The redacted text.
    """
    return Redactor(env)(text)
