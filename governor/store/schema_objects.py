"""What a database's schema holds, against what its migrations built: the tables, columns
and indexes each version made, read back from the migrations' own statements.

Rules (issue 35; docs/store.md "Checking a store"):
    * A version is *built* when every table and column its migration makes exists; the
      built version is the highest of a gapless run from 0. Indexes are not part of it:
      a dropped index is mended on its own (its ``CREATE INDEX`` run again).
    * A database whose ``schema_version`` lost rows (or the whole table) while its tables
      stayed is read as the version it is built to, never migrated again from scratch;
      the missing rows are recorded again (``governor.store.migrate``).
    * The statements are parsed, never evaluated: names come from the migrations only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

_TABLE: Final = re.compile(r"^\s*CREATE TABLE (?:IF NOT EXISTS )?(\w+)", re.IGNORECASE)
_COLUMN: Final = re.compile(r"^\s*ALTER TABLE (\w+) ADD COLUMN (\w+)", re.IGNORECASE)
_INDEX: Final = re.compile(r"^\s*CREATE (?:UNIQUE )?INDEX (?:IF NOT EXISTS )?(\w+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Catalogue:
    """The schema objects a database holds (names lower-cased)."""

    tables: frozenset[str]
    columns: frozenset[tuple[str, str]]
    """(table, column) pairs."""
    indexes: frozenset[str]


@dataclass(frozen=True, slots=True)
class Made:
    """What one migration makes."""

    tables: tuple[str, ...] = ()
    columns: tuple[tuple[str, str], ...] = ()
    indexes: dict[str, str] = field(default_factory=dict)
    """Index name -> the statement that creates it."""


def made(migration: Sequence[str]) -> Made:
    """The tables, added columns and indexes of one migration's statements."""
    tables: list[str] = []
    columns: list[tuple[str, str]] = []
    indexes: dict[str, str] = {}
    for statement in migration:
        if found := _TABLE.match(statement):
            tables.append(found[1].lower())
        elif found := _COLUMN.match(statement):
            columns.append((found[1].lower(), found[2].lower()))
        elif found := _INDEX.match(statement):
            indexes[found[1].lower()] = statement
    return Made(tuple(tables), tuple(columns), indexes)


def built_version(catalogue: Catalogue, migrations: Sequence[Sequence[str]]) -> int:
    """The highest version whose tables and columns (and every earlier one's) exist; -1
    when not even the first's do.

    A migration that makes no table or column (it only changes rows) has nothing to see
    it by: it counts as built when a later migration's objects exist (they were made after
    it), and not otherwise (the last ones may run again: they are written to be rerun)."""
    built = -1
    for version, migration in enumerate(migrations):
        m = made(migration)
        if not m.tables and not m.columns:
            continue  # known built only through a later migration's objects
        if not set(m.tables) <= catalogue.tables or not set(m.columns) <= catalogue.columns:
            break
        built = version
    return built


def missing_indexes(
    catalogue: Catalogue, migrations: Sequence[Sequence[str]], upto: int
) -> list[tuple[str, str]]:
    """(name, statement) of each index versions 0..``upto`` create that is not there."""
    return [
        (name, statement)
        for migration in migrations[: upto + 1]
        for name, statement in made(migration).indexes.items()
        if name not in catalogue.indexes
    ]


def unrecorded(recorded: Sequence[int], built: int) -> list[int]:
    """The versions 0..``built`` that ``schema_version`` has no row of."""
    have = set(recorded)
    return [v for v in range(built + 1) if v not in have]


def spans(versions: Sequence[int]) -> str:
    """``0-5``, ``2``, ``0-2, 4``: versions as short ranges."""
    parts: list[str] = []
    for v in sorted(versions):
        if parts and parts[-1].split("-")[-1] == str(v - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{v}"
        else:
            parts.append(str(v))
    return ", ".join(parts)
