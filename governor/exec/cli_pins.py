"""The supported releases of each agent CLI: the pins file, and where a version stands.

Rules (issue 32, build item 6):
    * ``cli_pins.json`` (next to this module, shipped in the wheel) names for each CLI
      governor drives its npm package, the **oldest** release governor supports and the
      **newest** one the live matrix was run on. ``.ci/install-node-clis`` installs both,
      the live CLI tests run against both, and ``governor doctor`` reads it here.
    * A version is compared by its numeric ``MAJOR.MINOR.PATCH`` (a pre-release suffix
      such as ``-nightly…`` is ignored): older than the oldest is ``older``, newer than
      the newest is ``newer``, between them ``supported``; a text with no version in it
      is ``unknown``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final, Literal

PINS_FILE: Final = Path(__file__).with_name("cli_pins.json")
VERSION: Final = re.compile(r"(?<![\d.])(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?!\.?\d)")
"""The first ``MAJOR.MINOR.PATCH`` in a ``--version`` line (``2.1.332 (Claude Code)``,
``codex-cli 0.171.0``, ``0.61.0``)."""

Standing = Literal["supported", "older", "newer", "unknown"]


@dataclass(frozen=True, slots=True)
class CliPin:
    """One CLI's supported range."""

    name: str
    package: str
    oldest: str
    newest: str

    @property
    def versions(self) -> tuple[str, ...]:
        """The pinned releases, oldest first, without repeats."""
        return tuple(dict.fromkeys((self.oldest, self.newest)))


@cache
def cli_pins() -> dict[str, CliPin]:
    """Every pinned CLI by name (read once from ``cli_pins.json``)."""
    data = json.loads(PINS_FILE.read_text(encoding="utf-8"))
    return {
        name: CliPin(name, entry["package"], entry["oldest"], entry["newest"])
        for name, entry in data["clis"].items()
    }


def version_of(text: str | None) -> str | None:
    """The ``MAJOR.MINOR.PATCH`` a ``--version`` line names, if any."""
    found = VERSION.search(text or "")
    return ".".join(found.groups()) if found else None


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def standing(pin: CliPin, version: str | None) -> Standing:
    """Where ``version`` stands against ``pin``'s range (see the module rules)."""
    if version is None or version_of(version) is None:
        return "unknown"
    key = _key(version_of(version) or "")
    if key < _key(pin.oldest):
        return "older"
    if key > _key(pin.newest):
        return "newer"
    return "supported"


def range_note(pin: CliPin, version: str | None) -> str | None:
    """What ``governor doctor`` says about an installed version outside the range, or None."""
    where = standing(pin, version)
    if where == "older":
        return (
            f"{pin.name} {version} is older than the oldest release governor supports "
            f"({pin.oldest}): upgrade it (npm install -g {pin.package}@{pin.newest})"
        )
    if where == "newer":
        return (
            f"{pin.name} {version} is newer than the newest release governor was tested on "
            f"({pin.newest}): its failures may be worded in ways governor does not read yet"
        )
    if where == "unknown":
        return f"{pin.name} printed no version governor can read"
    return None
