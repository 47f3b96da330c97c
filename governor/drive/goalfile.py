"""Goal files: a goal described in TOML (or JSON, or YAML), turned into ``goal.created``.

Rules (SPEC §7):
    * Keys: ``id`` (optional; generated from the title when absent), ``title``,
      ``objective``, ``acceptance``, ``planner``, ``worker``, ``policy`` (any §5 field),
      ``profiles`` ({name: profile}). Anything else is refused, naming the key.
    * Relative paths in a profile's ``args`` and ``probe`` (a command's executable, a
      scripted scenario, a python file) are resolved against the goal file's folder when
      the goal is created, so the recorded goal runs the same from any directory. So is a
      python agent's ``module:name`` (in ``args``) that is not importable but lives under
      that folder.
    * A profile whose ``args`` (or ``probe``) its harness cannot run is refused: a
      ``command`` needs an executable, a ``python`` agent ``module:name``, a ``scripted``
      one scenario at most (``governor.exec.harness.args_problem``).
    * Every problem is one line naming the file and the key: ``goal.toml: policy.max_replans: …``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import tomllib
import uuid
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from governor.core import record
from governor.core.durations import duration_or_same
from governor.core.event_fields import ID_PATTERN, Profile
from governor.core.events import Event
from governor.core.policy_input import policy_from
from governor.core.wire.codec import describe
from governor.errors import GoalFileError, InputError, NotFoundError, PolicyError, did_you_mean
from governor.exec.harness import args_problem
from governor.exec.load import module_file
from governor.store.files import MAX_GOAL_FILE_BYTES, read_bounded

KEYS = frozenset(
    {"id", "title", "objective", "acceptance", "planner", "worker", "policy", "profiles", "pools"}
)


MAX_DEPTH: Final = 16
"""The deepest nesting a goal file may have (a goal needs 4: policy.upstream_backoff.x)."""
MAX_VALUES: Final = 100_000
"""The most values (keys, items, leaves) a goal file may hold, YAML aliases counted."""
PARSERS: Final = {".toml": "TOML", ".json": "JSON", ".yaml": "YAML", ".yml": "YAML"}


def read_goal_file(path: Path) -> dict[str, Any]:
    """The raw mapping of a goal file, by its extension.

    Raises:
        NotFoundError: when there is no such file.
        GoalFileError: for anything else that keeps it from being read as a goal file:
            not a regular file, too large, not UTF-8, not parsable, too deep.
    """
    kind = PARSERS.get(path.suffix)
    if kind is None:
        raise GoalFileError(f"{path}: a goal file ends in .toml, .json, .yaml or .yml")
    try:
        text = read_bounded(path, MAX_GOAL_FILE_BYTES).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GoalFileError(f"{path}: not valid UTF-8 (byte {exc.start})") from None
    except NotFoundError:
        raise
    except InputError as exc:
        raise GoalFileError(str(exc)) from None
    data = _parse(path, kind, text)
    if not isinstance(data, dict):
        raise GoalFileError(f"{path}: a goal file holds one table of keys")
    _check_shape(path, data)
    return data


def _parse(path: Path, kind: str, text: str) -> Any:
    try:
        if kind == "TOML":
            return tomllib.loads(text)
        if kind == "JSON":
            return json.loads(text)
        return _yaml(path, text)
    except RecursionError:
        raise GoalFileError(f"{path}: nested deeper than a goal file may be") from None
    except ValueError as exc:  # TOML and JSON syntax errors, and numbers of > 4300 digits
        detail = "a number has too many digits" if "digits" in str(exc) else str(exc)
        raise GoalFileError(f"{path}: not valid {kind}: {detail}") from None


def _check_shape(path: Path, data: dict[str, Any]) -> None:
    """Refuse a goal file nested deeper than ``MAX_DEPTH`` or holding more than
    ``MAX_VALUES`` values (walked without recursion, so nothing later recurses too deep)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if depth > MAX_DEPTH:
            raise GoalFileError(f"{path}: nested deeper than {MAX_DEPTH} levels")
        if seen > MAX_VALUES:
            raise GoalFileError(f"{path}: holds more than {MAX_VALUES:,} values")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list | tuple):
            stack.extend((v, depth + 1) for v in value)


def _yaml(path: Path, text: str) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise GoalFileError(
            f"{path}: YAML goal files need PyYAML (pip install pyyaml); TOML needs nothing"
        ) from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise GoalFileError(f"{path}: not valid YAML: {exc}") from exc


def _resolve(arg: str, base: Path) -> str:
    """A harness argument with a relative file path made absolute (other arguments unchanged)."""
    head, sep, attr = arg.partition(":")
    if not (sep and head.endswith(".py")):
        head, sep, attr = arg, "", ""
    if "/" not in head and not head.endswith((".py", ".json", ".toml")):
        return arg
    path = Path(head)
    return f"{path if path.is_absolute() else (base / path).resolve()}{sep}{attr}"


def _python_target(arg: str, base: Path) -> str | None:
    """A python agent's ``module:name`` that is not importable as is but lives under the
    goal file's folder, as that file's absolute path (None: leave it as it is)."""
    module, sep, attr = arg.rpartition(":")
    if not sep or not module or module.endswith(".py") or "/" in module:
        return None
    top = module.split(".")[0]
    try:
        if top in sys.modules or importlib.util.find_spec(top) is not None:
            return None
    except (ImportError, ValueError):  # a name find_spec cannot look up: leave it as given
        return None
    path = module_file(module, (base,))
    return f"{path}:{attr}" if path else None


def _profiles(raw: Any, base: Path, where: str) -> dict[str, Profile]:
    if not isinstance(raw, dict) or not raw:
        raise GoalFileError(f"{where}: profiles: give at least one profile, e.g. [profiles.worker]")
    profiles = {}
    for name, fields in raw.items():
        if not isinstance(fields, dict):
            raise GoalFileError(f"{where}: profiles.{name}: a profile is a table of keys")
        unknown = sorted(set(fields) - set(Profile.model_fields))
        if unknown:
            raise GoalFileError(
                f"{where}: profiles.{name}: unknown key '{unknown[0]}'"
                + did_you_mean(unknown[0], Profile.model_fields)
            )
        read = {k: duration_or_same(v) if k == "timeout_s" else v for k, v in fields.items()}
        try:  # "10m" as well as 600
            profile = Profile.model_validate(read)
        except ValidationError as exc:
            raise GoalFileError(f"{where}: profiles.{name}: {describe(exc)}") from exc
        _check_os_text(profile, f"{where}: profiles.{name}")
        for key in ("args", "probe"):
            shape: tuple[str, ...] | None = getattr(profile, key)
            problem = None if shape is None else args_problem(profile.harness, shape)
            if problem:
                raise GoalFileError(f"{where}: profiles.{name}: {key}: {problem}")
        for key in ("args", "probe"):
            given: tuple[str, ...] | None = getattr(profile, key)
            if given:
                first = given[0]
                python = key == "args" and profile.harness == "python"
                target = _python_target(first, base) if python else None
                resolved = (target or _resolve(first, base), *given[1:])
                profile = profile.model_copy(update={key: resolved})
        profiles[name] = profile
    return profiles


def _os_problem(text: str) -> str | None:
    """Why the OS cannot take ``text`` as an argument, a variable or a path (None: it can)."""
    if "\0" in text:
        return f"holds a NUL byte at character {text.index(chr(0)) + 1}"
    try:
        os.fsencode(text)
    except UnicodeError:
        return "holds characters the file system encoding cannot write (a lone surrogate)"
    return None


def _check_os_text(profile: Profile, where: str) -> None:
    """Refuse a profile's arguments, model or variable names the OS cannot take, naming
    the field: caught here, they never reach a spawn (where each call would fail, charged)."""
    fields: list[tuple[str, str]] = [("model", profile.model or "")]
    for key in ("args", "probe", "env"):
        given: tuple[str, ...] = getattr(profile, key) or ()
        fields += [(f"{key}[{i}]", value) for i, value in enumerate(given)]
    for field, value in fields:
        if problem := _os_problem(value):
            raise GoalFileError(f"{where}: {field} {problem}: the OS cannot take it")


def new_goal_id(title: str) -> str:
    """A readable, unique id: the title's words, then six random hex digits."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "goal"
    return f"{slug}-{uuid.uuid4().hex[:6]}"


def goal_from_file(path: Path, *, at: datetime, actor: str = "governor") -> list[Event]:
    """The ``goal.created`` event a goal file describes.

    Raises:
        GoalFileError: naming the file and the first key that is wrong.
    """
    return goal_from_mapping(
        read_goal_file(path), base=path.parent.resolve(), where=str(path), at=at, actor=actor
    )


def goal_from_mapping(
    data: Mapping[str, Any],
    *,
    base: Path,
    where: str,
    at: datetime,
    actor: str = "governor",
    profiles: Mapping[str, Profile] | None = None,
) -> list[Event]:
    """The ``goal.created`` event a goal file's keys describe, wherever they came from.

    Args:
        data: the keys of a goal file.
        base: the folder relative paths in the profiles resolve against.
        where: what to name in errors (the file, or ``goal``).
        at: the event's time.
        actor: who creates the goal.
        profiles: when given, the only profiles the goal may name, and ``data`` may
            hold none of its own (a goal created over a server's API: the deployment
            decides what runs, not the caller).

    Raises:
        GoalFileError: naming ``where`` and the first key that is wrong.
    """
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise GoalFileError(
            f"{where}: unknown key '{unknown[0]}'{did_you_mean(unknown[0], KEYS)} "
            f"(known: {', '.join(sorted(KEYS))})"
        )
    for key in ("title", "objective", "planner", "worker"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise GoalFileError(f"{where}: '{key}' is required (a non-empty string)")
    goal_id = data.get("id") or new_goal_id(data["title"])
    if not isinstance(goal_id, str) or not re.match(ID_PATTERN, goal_id):
        raise GoalFileError(
            f"{where}: id '{goal_id}' must match {ID_PATTERN} (letters, digits, . _ -)"
        )
    try:
        policy = policy_from(data.get("policy"))
    except PolicyError as exc:
        raise GoalFileError(f"{where}: {exc.detail}") from exc
    pools = data.get("pools") or []
    if not isinstance(pools, list) or not all(isinstance(p, str) for p in pools):
        raise GoalFileError(f"{where}: 'pools' is a list of pool names")
    acceptance = data.get("acceptance") or []
    if not isinstance(acceptance, list) or not all(isinstance(a, str) for a in acceptance):
        raise GoalFileError(f"{where}: 'acceptance' is a list of strings")
    try:
        return record.create_goal(
            goal_id,
            title=data["title"],
            objective=data["objective"],
            acceptance=acceptance,
            profiles=_given_profiles(data, base, where, profiles),
            planner=data["planner"],
            worker=data["worker"],
            at=at,
            policy=policy,
            actor=actor,
            pools=list(dict.fromkeys(pools)),
        )
    except PolicyError as exc:  # a policy that leaves no call for the completion (SPEC §12.1)
        raise GoalFileError(f"{where}: {exc.detail}") from exc
    except ValidationError as exc:
        raise GoalFileError(f"{where}: {describe(exc).removesuffix(' in goal.created')}") from exc


def _given_profiles(
    data: Mapping[str, Any], base: Path, where: str, fixed: Mapping[str, Profile] | None
) -> dict[str, Profile]:
    if fixed is None:
        return _profiles(data.get("profiles"), base, where)
    if "profiles" in data:
        raise GoalFileError(
            f"{where}: profiles come from the deployment, not the goal; "
            f"name one of: {', '.join(sorted(fixed)) or '(none configured)'}"
        )
    return dict(fixed)


def profiles_from_file(path: Path) -> dict[str, Profile]:
    """The ``[profiles.NAME]`` tables of a file (a deployment's ``GOVERNOR_PROFILES``),
    relative paths resolved against its folder.

    Raises:
        GoalFileError: naming the file and the profile that is wrong.
    """
    data = read_goal_file(path)
    unknown = sorted(set(data) - {"profiles"})
    if unknown:
        raise GoalFileError(f"{path}: unknown key '{unknown[0]}' (a profiles file holds profiles)")
    return _profiles(data.get("profiles"), path.parent.resolve(), str(path))
