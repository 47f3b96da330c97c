"""Tune's grid: candidate policies from ``FIELD=VALUES`` specs, and the ones SPEC §12.1 refuses.

Rules (``docs/tuning.md``):
    * ``parse_grid`` reads ``field=a,b,c`` or ``field=lo..hi`` per field; ``candidates`` is
      their product, at most ``MAX_CANDIDATES``.
    * ``split_grid`` sets apart the candidates a new goal may not have (a policy that
      cannot afford its completion call), each with why.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Final

from governor.core.policy import (
    Policy,
    check_policy_value,
    default_milestones,
    milestones_above_replans,
    whole,
)
from governor.errors import PolicyError

Grid = dict[str, list[Any]]


def parse_grid(specs: Sequence[str]) -> Grid:
    """``["max_replans=1..10", "auto_apply=true,false", "upstream_backoff.initial_s=10..60:10"]``."""
    grid: Grid = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        if not sep or not values:
            raise PolicyError(f"--grid '{spec}' is not field=a..b, field=a..b:step or field=a,b,c")
        grid[name.strip()] = _checked(name.strip(), values.strip())
    return grid


def _checked(name: str, text: str) -> list[Any]:
    """The values of one grid field, each a value the field may hold (SPEC §11.1: never a
    non-finite number); whether they fit together is the candidates' business."""
    values = _values(name, text)
    for value in values:
        if name in Policy.model_fields:
            problem = check_policy_value(name, value)
        elif isinstance(value, float) and not math.isfinite(value):
            problem = "Input should be a finite number"
        else:
            continue  # an unknown field, a nested one: the policy built from it says
        if problem is not None:
            raise PolicyError(
                f"--grid {name}={text}: {value!r} is not a valid {name} ({problem})", field=name
            )
    return values


def _values(name: str, text: str) -> list[Any]:
    from governor.core.durations import duration_or_same  # noqa: PLC0415 - with the parser
    from governor.core.policy_input import parse_assignments  # noqa: PLC0415 - one parser of values

    read = duration_or_same if name.endswith("_s") else (lambda value: value)
    if ".." in text:
        low, _, rest = text.partition("..")
        high, _, step = rest.partition(":")
        a, b = (read(parse_assignments(f"x={v}")["x"]) for v in (low, high))
        s = read(parse_assignments(f"x={step}")["x"]) if step else 1
        numbers = all(isinstance(v, int | float) and math.isfinite(v) for v in (a, b, s))
        if not numbers or s <= 0 or b < a:
            raise PolicyError(
                f"--grid {name}={text}: a range is low..high[:step] of finite numbers, low <= high"
            )
        count = math.floor((b - a) / s + 1e-9) + 1
        _check_size(f"--grid {name}={text}", count)
        return [
            type(a)(a + i * s) if isinstance(a, int) and isinstance(s, int) else a + i * s
            for i in range(count)
        ]
    return [read(parse_assignments(f"x={v}")["x"]) for v in text.split(",")]


MAX_CANDIDATES: Final = 10_000
"""The most candidate policies one tune evaluates (each is re-folded over every history)."""


def _check_size(what: str, count: int) -> None:
    if count > MAX_CANDIDATES:
        shown = f"{count:,}" if count < 10**9 else "over a billion"
        raise PolicyError(
            f"{what} has {shown} candidate policies; a tune evaluates at most "
            f"{MAX_CANDIDATES:,}: narrow the ranges or take larger steps"
        )


def candidates(grid: Grid) -> list[dict[str, Any]]:
    """Every combination of the grid's values that makes a policy a goal may have, as
    overrides (``split_grid``'s first list).

    Raises:
        PolicyError: for milestones without replans, or when no combination is feasible.
    """
    return split_grid(grid)[0]


def split_grid(grid: Grid) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], str]]]:
    """The grid's combinations: those to estimate, and those SPEC §12.1 refuses — no planner
    call left for the completion review (``max_replans`` below 2, or ``max_milestones``
    above ``max_replans - 1``) — each with why. Those are listed as ``infeasible``, never
    estimated nor recommended. A lower ``max_replans`` takes the milestones down with it
    (``with_overrides``); a grid over the milestones must also range over the replans
    (else its validity would depend on each history's recorded replans).

    Raises:
        PolicyError: for milestones without replans, or when no combination is feasible.
    """
    names = list(grid)
    _check_size("the grid", math.prod(len(values) for values in grid.values()))
    if "max_milestones" in grid and "max_replans" not in grid:
        raise PolicyError(
            "--grid max_milestones needs a --grid max_replans too: a policy's max_milestones "
            "must leave a planner call for the completion review under its max_replans"
        )
    feasible, infeasible = [], []
    for combo in itertools.product(*(grid[n] for n in names)):
        override = dict(zip(names, combo, strict=True))
        problem = _infeasible(override)
        if problem is None:
            feasible.append(override)
        else:
            infeasible.append((override, problem))
    if infeasible and not feasible:
        raise PolicyError(f"no policy of the grid can succeed: {infeasible[0][1]}")
    return feasible, infeasible


def _infeasible(override: dict[str, Any]) -> str | None:
    """Why a grid point breaks SPEC §12.1 on its own (None: it does not)."""
    replans = whole(override.get("max_replans"))
    if replans is None:
        return None
    named = whole(override.get("max_milestones"))
    milestones = default_milestones(replans) if named is None else named
    if replans >= 2 and milestones <= replans - 1:
        return None
    return milestones_above_replans(milestones, replans)
