"""The JSON Schema of goal files (``governor schema goal``), derived from the models that
validate them, so an editor checks a goal file as its author types.

Rules (issue 35):
    * The policy and each profile are the core's own ``Policy`` and ``Profile`` models'
      schemas (pydantic's generator): a field added there is in the schema at once.
    * The goal file's own keys are ``governor.drive.goalfile.KEYS``; where a goal file takes
      more than the model (a duration written ``5m`` for a ``*_s`` field:
      ``governor.core.durations``), the schema takes it too, so no file ``new`` accepts is
      marked wrong. ``new`` still checks what a schema cannot (a policy that leaves no call
      for the completion, arguments the OS cannot take).
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import TypeAdapter

from governor.core.durations import BACKOFF_DURATIONS, POLICY_DURATIONS
from governor.core.event_fields import ID_PATTERN, POOL_NAME_PATTERN, Profile
from governor.core.policy import Policy
from governor.drive.goalfile import KEYS

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
DURATION: Final = {
    "type": "string",
    "pattern": r"^\s*(\d+(\.\d+)?|\.\d+)\s*$|^\s*((\d+(\.\d+)?|\.\d+)[smhdSMHD])+\s*$",
    "description": "a duration: 90, 90s, 5m, 2h, 1d or 1h30m",
}
_TEXT: Final = {"type": "string", "minLength": 1, "pattern": r"\S"}


def _or_duration(schema: dict[str, Any], fields: tuple[str, ...]) -> None:
    """Let each of ``fields`` of an object schema be written as a duration too."""
    for name in fields:
        if (field := schema.get("properties", {}).get(name)) is not None:
            schema["properties"][name] = {"anyOf": [field, DURATION]}


def goal_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a goal file's keys."""
    defs: dict[str, Any] = {}
    for name, model in (("Policy", Policy), ("Profile", Profile)):
        schema = TypeAdapter(model).json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        defs[name] = schema
    _or_duration(defs["Policy"], POLICY_DURATIONS)
    _or_duration(defs.get("UpstreamBackoff", {}), BACKOFF_DURATIONS)
    _or_duration(defs["Profile"], ("timeout_s",))
    properties: dict[str, Any] = {
        "id": {"type": "string", "pattern": ID_PATTERN, "description": "generated when absent"},
        "title": _TEXT,
        "objective": _TEXT,
        "acceptance": {"type": "array", "items": {"type": "string"}},
        "planner": {**_TEXT, "description": "the profile that plans"},
        "worker": {**_TEXT, "description": "the default profile of work items"},
        "policy": {"$ref": "#/$defs/Policy"},
        "profiles": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {"$ref": "#/$defs/Profile"},
        },
        "pools": {
            "type": "array",
            "items": {"type": "string", "pattern": POOL_NAME_PATTERN},
            "description": "the pools whose budgets this goal spends (SPEC §13.6)",
        },
    }
    assert set(properties) == KEYS, "every key a goal file may hold, and no other"
    return {
        "$schema": DIALECT,
        "$id": "https://governor.dev/schemas/goal.json",
        "title": "governor goal file",
        "type": "object",
        "additionalProperties": False,
        "required": ["title", "objective", "planner", "worker", "profiles"],
        "properties": properties,
        "$defs": defs,
    }
