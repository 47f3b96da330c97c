"""What two drives of one goal must share: outcome, ledger and events (ids and times aside)."""

from __future__ import annotations

from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from governor.core.fold import project
from governor.core.rules.decide import decide
from governor.core.wire.codec import to_dict
from governor.render.records import ledger_record
from governor.store import open_store

VARYING = ("at", "run_id")
"""Fields that differ between two drives of the same goal: times and run ids."""


def _scrub(value: Any, folder: str) -> Any:
    if isinstance(value, str):
        return value.replace(folder, "<folder>")
    if isinstance(value, dict):
        return {k: _scrub(v, folder) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [_scrub(v, folder) for v in value]
    return value


def drive_facts(store_url: str, goal_id: str, folder: Path) -> dict[str, Any]:
    """The goal's outcome, ledger (without wall times) and events (without ids and times)."""
    with closing(open_store(store_url)) as store:
        events = list(store.load(goal_id))
    decision = decide(project(events), datetime.now(UTC))
    ledger = ledger_record(decision.ledger)
    ledger.pop("runtime_s", None)
    return {
        "status": decision.status,
        "reason": _scrub(decision.reason, str(folder)),
        "ledger": ledger,
        "events": [_scrub(to_dict(e), str(folder)) for e in events],
    }


def assert_same_drive(expected: dict[str, Any], got: dict[str, Any]) -> None:
    assert got["status"] == expected["status"]
    assert got["reason"] == expected["reason"]
    assert got["ledger"] == expected["ledger"]
    types = [e["type"] for e in got["events"]]
    assert types == [e["type"] for e in expected["events"]], types
    for i, (want, have) in enumerate(zip(expected["events"], got["events"], strict=True)):
        assert have == want, f"event {i + 1} differs: {have} != {want}"
