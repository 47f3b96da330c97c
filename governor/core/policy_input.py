"""Policies from input: plain values, overrides and ``field=value`` text read as a ``Policy``.

Rules:
    * Every door that takes a policy from a person (options, goal files, grids, what-if)
      reads it here: durations may be written ``90s``, ``5m``, ``2h``; anything but a
      mapping is refused, never read as the defaults.
    * A failure is one ``PolicyError`` naming the first unknown field (with the nearest
      known name) or out-of-range value.
    * Lowering ``max_replans`` without naming ``max_milestones`` lowers the milestones with
      it (``with_overrides``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from governor.core.durations import policy_durations
from governor.core.policy import Policy, UpstreamBackoff, whole
from governor.errors import PolicyError, did_you_mean


def policy_from(values: Mapping[str, Any] | Policy | None = None) -> Policy:
    """Build a policy from plain values, turning validation failures into one clear error.

    Args:
        values: policy fields (a mapping); omitted fields take their defaults, and so does
            ``None`` (no policy given). Durations may be written ``90s``, ``5m``, ``2h``
            (``governor.core.durations``). Anything but a mapping (or a ``Policy``) is
            refused, never read as the defaults.

    Raises:
        PolicyError: naming the first unknown field or out-of-range value.
    """
    given: object = {} if values is None else values
    if isinstance(given, Mapping):
        given = policy_durations(given)  # a dict (``_default_milestones`` reads one): "2h" is 7200
    elif not isinstance(given, Policy):
        raise PolicyError(
            f"policy: a policy is a mapping of its fields, not {type(given).__name__}"
        )
    try:
        return Policy.model_validate(given)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(part) for part in err["loc"])
        if err["type"] == "extra_forbidden":
            raise PolicyError(
                f"unknown policy field '{field}'{_suggest(field)}", field=field
            ) from exc
        message = err["msg"].removeprefix("Value error, ")
        if not field:  # the rule between fields (``_milestones_within_replans``)
            raise PolicyError(f"policy: {message}", field="max_milestones") from exc
        raise PolicyError(f"policy field '{field}': {err['msg']}", field=field) from exc


def _suggest(field: str) -> str:
    """The nearest known name of a misspelt policy field (nested ones by their path)."""
    head, _, tail = field.rpartition(".")
    if head == "upstream_backoff":
        return did_you_mean(tail, UpstreamBackoff.model_fields)
    known = [*Policy.model_fields, *(f"upstream_backoff.{f}" for f in UpstreamBackoff.model_fields)]
    return did_you_mean(field, known)


def with_overrides(policy: Policy, overrides: dict[str, Any]) -> Policy:
    """Return ``policy`` with some fields replaced, validated as a whole.

    Nested ``upstream_backoff`` fields may be given as ``upstream_backoff.initial_s``.
    Lowering ``max_replans`` without naming ``max_milestones`` lowers the milestones with
    it (to at most the new ``max_replans - 1``), as an omitted ``max_milestones`` would be.
    The result is not checked against SPEC §12.1 (a recorded policy may break it): callers
    that recommend a policy check ``completion_problem``.

    Raises:
        PolicyError: naming the unknown field or the bad value.
    """
    merged: dict[str, Any] = policy.model_dump()
    for key, value in overrides.items():
        head, _, tail = key.partition(".")
        if tail:
            if head != "upstream_backoff":
                raise PolicyError(f"unknown policy field '{key}'{_suggest(key)}", field=key)
            merged["upstream_backoff"] = {**merged["upstream_backoff"], tail: value}
        else:
            merged[key] = value
    replans = whole(merged["max_replans"])
    if "max_milestones" not in overrides and replans is not None:
        merged["max_milestones"] = min(merged["max_milestones"], max(0, replans - 1))
    return policy_from(merged)


def _value(text: str) -> Any:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text.strip()


def parse_assignments(text: str) -> dict[str, Any]:
    """``"max_replans=8,auto_apply=false"`` as a dict of typed values.

    Raises:
        PolicyError: for a part without ``=``.
    """
    out: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise PolicyError(f"'{part}' is not field=value", field=key.strip() or None)
        out[key.strip()] = _value(value)
    return out
