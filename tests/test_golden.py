"""Golden histories: hand-written from SPEC §3-§6, checked against the implementation.

Each ``tests/golden/NAME.jsonl`` is a history; ``NAME.expected.json`` holds either the
expected final decision (taken with ``now`` = the last event's ``at`` unless ``"now"`` is
given) or, for a corrupt history, ``{"error_line": N, "error_contains": "..."}``.
The expectations were written from the spec alone; see ``description`` in each file.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from governor.core.history import check_history
from governor.core.rules.decide import decide
from governor.core.wire.codec import decode_lines
from governor.errors import HistoryError
from governor.render.records import ledger_record

GOLDEN = Path(__file__).parent / "golden"
NAMES = sorted(p.name.removesuffix(".jsonl") for p in GOLDEN.glob("*.jsonl"))

# Disagreements with the spec (name -> why), kept strict so a fix shows up as XPASS.
KNOWN_BUGS: dict[str, str] = {}


def _param(name: str) -> Any:
    marks = [pytest.mark.xfail(reason=KNOWN_BUGS[name], strict=True)] if name in KNOWN_BUGS else []
    return pytest.param(name, id=name, marks=marks)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _replay(path: Path) -> tuple[Any, Any]:
    """Read and check the whole history; return the last event and the view after it."""
    last = None
    with path.open("rb") as fh:
        for _line, event, view in check_history(decode_lines(fh, source=path.name)):
            last = (event, view)
    assert last is not None
    return last


def _assert_subset(expected: Any, actual: Any, where: str) -> None:
    """Every field the golden file names must match; fields it leaves out are not checked."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}.{key} missing (have {sorted(actual)})"
            _assert_subset(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected), f"{where}: {actual!r} != {expected!r}"
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def test_golden_corpus_is_large_enough() -> None:
    assert len(NAMES) >= 14


@pytest.mark.parametrize("name", [_param(n) for n in NAMES])
def test_golden(name: str) -> None:
    path = GOLDEN / f"{name}.jsonl"
    expected = json.loads((GOLDEN / f"{name}.expected.json").read_text(encoding="utf-8"))

    if "error_line" in expected:
        with pytest.raises(HistoryError) as caught:
            _replay(path)
        assert caught.value.line == expected["error_line"], str(caught.value)
        assert expected["error_contains"].lower() in caught.value.detail.lower(), str(caught.value)
        return

    last_event, view = _replay(path)
    now = _time(expected["now"]) if expected.get("now") else last_event.at
    decision = decide(view, now)
    got = (decision.status, decision.next_action, decision.blocked_on, decision.exhausted)
    want = (
        expected["status"],
        expected["next_action"],
        expected["blocked_on"],
        expected["exhausted"],
    )
    assert got == want, f"(status, next_action, blocked_on, exhausted); reason: {decision.reason}"

    want_nb = _time(expected["not_before"]) if expected.get("not_before") else None
    assert decision.not_before == want_nb, decision.reason
    for part in expected["reason_contains"]:
        assert part in decision.reason, f"{part!r} not in reason {decision.reason!r}"
    if "rule" in expected:
        assert decision.rule == expected["rule"], decision.reason
    if "trigger" in expected:
        assert decision.trigger == expected["trigger"], decision.reason
    _assert_subset(expected["ledger"], ledger_record(decision.ledger), "ledger")
    _check_items(expected.get("work_decisions", {}), decision)


def _check_items(expected: dict[str, dict[str, Any]], decision: Any) -> None:
    """Item decisions (SPEC §6.1) of the active plan, where the golden file names them."""
    items = {item.work_id: item for item in decision.items}
    for work_id, want in expected.items():
        assert work_id in items, f"no decision for {work_id} (have {sorted(items)})"
        got = items[work_id]
        for key, value in want.items():
            if key == "reason_contains":
                for part in value:
                    assert part in got.reason, f"{work_id}: {part!r} not in {got.reason!r}"
            elif key == "not_before":
                assert got.not_before == (_time(value) if value else None), f"{work_id}.not_before"
            else:
                assert getattr(got, key) == value, f"{work_id}.{key}: {getattr(got, key)!r}"
