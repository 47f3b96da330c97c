"""How a listing of goal summaries (``GoalQuery``) becomes SQL, for SQLite and PostgreSQL.

Rules:
    * A listing's SQL is joined from the literal fragments below, chosen by the query's
      shape; its values (a status, the search text) are always parameters, never text.
    * Both dialects mean the same: a search matches when the goal id or the title holds
      the text, ignoring the case of ASCII letters only (SQLite's ``lower``; PostgreSQL
      ``translate``s the same 26 letters, whatever its locale).
    * Ordered by attention, the rows are walked in an index: ``goals_attention`` (attention,
      updated DESC, goal id) for every goal or those that need a person, and
      ``goals_status_attention`` (status first) for one status. A search has no index: it
      reads every summary and sorts the ones that match (in SQLite ``+attention`` keeps
      the planner from walking the index and looking up each row, which costs more when
      few match; PostgreSQL weighs that itself).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final, Literal

from governor.store.base import GoalQuery

Dialect = Literal["sqlite", "postgres"]


@dataclass(frozen=True, slots=True)
class _Fragments:
    one_status: str
    statuses: str
    search: str
    by_attention: str
    scanning: str
    """The attention order without its index (a search)."""
    placeholder: str


_UPPER: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_FRAGMENTS: Final = {
    "sqlite": _Fragments(
        one_status="status = ?",
        statuses="status IN (SELECT value FROM json_each(?))",
        search="(instr(lower(goal_id), ?) > 0 OR instr(lower(title), ?) > 0)",
        by_attention=" ORDER BY attention, updated_at_us DESC, goal_id",
        scanning=" ORDER BY +attention, updated_at_us DESC, goal_id",
        placeholder="?",
    ),
    "postgres": _Fragments(
        one_status="status = %s",
        statuses="status = ANY(%s)",
        search=(
            f"(strpos(translate(goal_id, '{_UPPER}', '{_UPPER.lower()}'), %s) > 0"
            f" OR strpos(translate(title, '{_UPPER}', '{_UPPER.lower()}'), %s) > 0)"
        ),
        by_attention=" ORDER BY attention, updated_at DESC, goal_id",
        scanning=" ORDER BY attention, updated_at DESC, goal_id",
        placeholder="%s",
    ),
}
NEEDS_PERSON: Final = "attention = 0"
"""The rank of ``governor.core.summary.NEEDS_PERSON``."""


def where(query: GoalQuery, dialect: Dialect) -> tuple[str, list[object]]:
    """The WHERE clause of a listing (empty for every goal) and the values it takes."""
    sql = _FRAGMENTS[dialect]
    terms: list[str] = []
    values: list[object] = []
    if query.statuses is not None and len(query.statuses) == 1:
        terms.append(sql.one_status)
        values.append(query.statuses[0])
    elif query.statuses is not None:
        terms.append(sql.statuses)
        statuses = list(query.statuses)
        values.append(json.dumps(statuses) if dialect == "sqlite" else statuses)
    if query.needs_person:
        terms.append(NEEDS_PERSON)
    if query.search:
        terms.append(sql.search)
        values += [query.search, query.search]
    return (" WHERE " + " AND ".join(terms) if terms else ""), values


def select(columns: str, query: GoalQuery, dialect: Dialect) -> tuple[str, list[object]]:
    """``columns`` (a literal ``SELECT … FROM goals``) of one page of a listing, in its
    order; the values end with the page's limit and offset, which the caller appends."""
    clause, values = where(query, dialect)
    sql = _FRAGMENTS[dialect]
    order = " ORDER BY goal_id"
    if query.order == "attention":
        order = sql.scanning if query.search else sql.by_attention
    mark = sql.placeholder
    return f"{columns}{clause}{order} LIMIT {mark} OFFSET {mark}", values


def count(query: GoalQuery, dialect: Dialect) -> tuple[str, list[object]]:
    """The statement that counts a listing's goals, and its values."""
    clause, values = where(query, dialect)
    return f"SELECT COUNT(*) FROM goals{clause}", values  # noqa: S608 - literal fragments only
