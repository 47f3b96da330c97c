"""Governor's data converter writes pydantic's payloads byte for byte, and every payload
converter Temporal makes (one per workflow run) reads with the same type adapters."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("temporalio")

from temporalio.contrib.pydantic import pydantic_data_converter

from governor.temporal.convert import adapter, data_converter
from governor.temporal.wire import Appended

HISTORIES = Path(__file__).parent / "histories"


def appended_payloads() -> list[dict[str, Any]]:
    """The recorded answers of local appends in the lean histories (the payloads' JSON)."""
    found = []
    for path in sorted(HISTORIES.glob("*-lean.json")):
        for event in json.loads(path.read_text())["events"]:
            details = event.get("markerRecordedEventAttributes", {}).get("details", {})
            if "result" not in details or "data" not in details:
                continue
            data = json.loads(base64.b64decode(details["data"]["payloads"][0]["data"]))
            if data.get("activity_type") == "governor.append":
                found.append(details["result"]["payloads"][0])
    return found


def test_the_lean_histories_hold_appends() -> None:
    assert appended_payloads()


def test_an_answer_reads_and_writes_as_pydantics_converter_does() -> None:
    from google.protobuf.json_format import ParseDict
    from temporalio.api.common.v1 import Payload

    ours, theirs = data_converter.payload_converter, pydantic_data_converter.payload_converter
    for raw in appended_payloads():
        payload = ParseDict(raw, Payload())
        [mine] = ours.from_payloads([payload], [Appended])
        [pydantics] = theirs.from_payloads([payload], [Appended])
        assert mine == pydantics
        assert ours.to_payloads([mine]) == theirs.to_payloads([pydantics])


def test_each_new_converter_reads_with_the_same_adapter() -> None:
    """Temporal makes a payload converter per workflow run: the second one builds no
    adapter the first one built."""
    first = data_converter.payload_converter_class()
    payload = first.to_payloads([Appended(False, [], {})])
    [read] = first.from_payloads(payload, [Appended])
    before = adapter.cache_info()
    second = data_converter.payload_converter_class()
    assert second is not first
    [again] = second.from_payloads(payload, [Appended])
    assert again == read
    after = adapter.cache_info()
    assert after.misses == before.misses
    assert after.hits > before.hits
