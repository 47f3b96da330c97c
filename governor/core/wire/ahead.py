"""The wire's generated functions written ahead of time: a read command compiles none (issue 36).

Rules:
    * The generated code (``governor.core.wire.generate``: each model's finish, build and
      encode functions, replay's line and chunk loops) is derived from the event models at
      run time, as before. What is written ahead is only its *compiled form*: each
      function's source, as ``module_text`` writes it into ``derived_code`` (a module,
      so Python's own bytecode cache holds it compiled), inside a factory that takes the
      values the function reads (its scope) and returns it.
    * A function is taken from ``derived_code`` only when its source and the names of its
      scope, derived now, hash to a factory written there (``key``); anything else (a
      model changed since, a loop of another shape) is compiled from its source as before
      (``made`` returns ``None``). So a stale ``derived_code`` costs time, never a
      difference: it is a cache of ``compile``, keyed by exactly what is compiled.
    * ``tests/core/test_ahead.py`` holds ``derived_code`` to what ``module_text`` writes
      for the functions every read derives (``GOVERNOR_UPDATE_GOLDEN=1`` writes it again).
    * Only our own identifiers and the generated statements reach the module, never
      outside text (the same rule as ``generate``).

Decision record 0038 says why a cache of ``compile`` keyed by its source, and not a file
under the user's cache folder nor the whole derivation generated at build time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Final, NamedTuple, cast

from governor.core.wire import derived_code


class Written(NamedTuple):
    """One generated function, as ``module_text`` writes it."""

    name: str
    source: str
    names: tuple[str, ...]
    """The names of its scope, sorted: the factory's parameters."""


SEEN: Final[dict[str, Written]] = {}
"""Every function generated in this process, by key (what ``module_text`` writes)."""
MISSED: Final[list[str]] = []
"""The names of the functions compiled from source in this process (not written ahead)."""


def key(source: str, names: tuple[str, ...]) -> str:
    """What a written function is found by: its source and the names of its scope."""
    return hashlib.sha256("\0".join([*names, source]).encode()).hexdigest()


def made(name: str, source: str, scope: dict[str, Any]) -> Callable[..., Any] | None:
    """The function ``name`` of ``source`` over ``scope``, from its factory written ahead;
    ``None`` when none was written for exactly this source and these names."""
    names = tuple(sorted(n for n in scope if not n.startswith("__")))
    found = key(source, names)
    SEEN[found] = Written(name, source, names)
    # (``derived_code`` is generated and untyped: each factory takes and returns Any)
    factory = cast("Callable[..., Any] | None", derived_code.FACTORIES.get(found))
    if factory is None:
        MISSED.append(name)
        return None
    function: Callable[..., Any] = factory(**{n: scope[n] for n in names})
    return function


HEADER: Final = '''"""The wire's generated functions, compiled ahead (issue 36): do not edit, it is derived.

Written by ``governor.core.wire.ahead.module_text`` from the functions a read derives
(``GOVERNOR_UPDATE_GOLDEN=1 pytest tests/core/test_ahead.py`` writes it again); each
factory takes the values its function reads and returns it. A function whose source
changed is compiled from its source instead (``ahead.made``).
"""
# ruff: noqa
# mypy: ignore-errors
# fmt: off
'''


def module_text(written: list[Written] | None = None) -> str:
    """The text of ``derived_code`` for ``written`` (every function seen, by default),
    one factory each, in the order of their names and keys."""
    entries = sorted(
        ((key(w.source, w.names), w) for w in (written or SEEN.values())),
        key=lambda pair: (pair[1].name, pair[0]),
    )
    lines = [HEADER]
    for found, w in entries:
        params = ", ".join(w.names)
        lines += [
            f"def _{found[:16]}({params}):",
            *("    " + line if line else line for line in w.source.splitlines()),
            f"    return {w.name}",
            "",
            "",
        ]
    lines.append("FACTORIES = {")
    lines += [f"    {found!r}: _{found[:16]}," for found, _ in entries]
    lines.append("}")
    return "\n".join(lines) + "\n"
