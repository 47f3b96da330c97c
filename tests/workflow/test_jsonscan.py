"""The answer of a reply: its last top-level JSON object, found in bounded time (SPEC §7)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governor.workflow.jsonscan import MAX_DEPTH, MAX_REPLY_CHARS, MAX_TOKENS, find_answer
from governor.workflow.reply import parse_worker_reply, read_answer

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
objects = st.dictionaries(st.text(), values, max_size=5)
prose = st.text(alphabet=st.characters(blacklist_characters='{}[]"\\'), max_size=40)


def dumped(value: Any) -> str:
    return orjson.dumps(value).decode()


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ('{"status": "done"}', {"status": "done"}),
        ('I did it.\n```json\n{"status": "done"}\n```\n', {"status": "done"}),
        ('{"a": 1} then {"b": 2}', {"b": 2}),
        ('{"a": {"b": 1}}', {"a": {"b": 1}}),
        ('{"x": {"status": "done"} oops }', {"status": "done"}),
        ('prose { with a brace {"c": 1}', {"c": 1}),
        ('[{"in": "a list"}]', {"in": "a list"}),
        ('{"braces": "in a {string}"}', {"braces": "in a {string}"}),
        ('{"pair": "\\ud83d\\ude00"}', {"pair": "\U0001f600"}),
    ],
    ids=[
        "a bare object is the answer",
        "prose and a fence around it are tolerated",
        "the last of two objects wins",
        "a nested object is not an answer of its own",
        "a broken candidate yields the last object completed inside it",
        "an unclosed brace in prose does not hide the answer",
        "an object inside a top-level array counts",
        "braces inside strings are text",
        "an escaped surrogate pair is one character",
    ],
)
def test_the_answer_is_the_last_top_level_object(text: str, answer: dict[str, Any]) -> None:
    assert find_answer(text).value == answer


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no json at all", "holds no JSON object"),
        ('{"q": "which \\udfff?"}', "unpaired surrogate"),
        ('{"q": "a raw \x1b escape"}', "raw control character"),
        ('{"n": NaN}', "unexpected 'NaN}'"),
        ('{"n": 1e400}', "number is infinity"),
        ('{"a": 1,}', "unexpected '}'"),
        ('{"a": "open', "no closing quote"),
        ("{" * 1_000_000, "holds no JSON object"),
        ('{"a": [' * 100_000, f"more than {MAX_TOKENS:,} JSON tokens"),
    ],
    ids=[
        "no object",
        "a lone surrogate escape",
        "a raw control character in a string",
        "NaN is not JSON",
        "a number beyond a double",
        "a trailing comma",
        "an unterminated string",
        "a megabyte of braces",
        "too many tokens",
    ],
)
def test_a_reply_without_a_readable_answer_says_why(text: str, problem: str) -> None:
    answer = find_answer(text)
    assert answer.value is None
    assert answer.problem is not None
    assert problem in answer.problem, answer.problem


def test_nesting_deeper_than_the_limit_is_not_read_and_never_raises() -> None:
    deep = '{"a": ' * 100_000 + "1" + "}" * 100_000
    assert find_answer(deep).value != json.loads('{"a": ' * 100 + "1" + "}" * 100)
    limit = '{"a": ' * (MAX_DEPTH - 1) + "[1]" + "}" * (MAX_DEPTH - 1)
    assert find_answer(limit).value == json.loads(limit)
    too_deep = '{"a": ' * MAX_DEPTH + "[1]" + "}" * MAX_DEPTH
    assert find_answer(too_deep).value != json.loads(too_deep)
    assert isinstance(parse_worker_reply(deep), list)  # problems, not a RecursionError


def test_only_the_tail_of_an_overlong_reply_is_read() -> None:
    answer = '{"status": "done"}'
    head = '{"status": "failed"}' + " " * MAX_REPLY_CHARS
    assert find_answer(head + answer).value == {"status": "done"}
    assert find_answer(answer + " " * MAX_REPLY_CHARS).value is None


@given(objects, prose, prose)
@settings(max_examples=300)
def test_any_object_in_prose_is_found_as_it_was_written(
    value: dict[str, Any], before: str, after: str
) -> None:
    expected = orjson.loads(dumped(value))
    assert find_answer(before + dumped(value) + after).value == expected
    assert find_answer(before + json.dumps(value, indent=2) + after).value == expected


@given(st.lists(objects, min_size=1, max_size=4), prose)
@settings(max_examples=200)
def test_the_last_of_several_objects_wins(found: list[dict[str, Any]], gap: str) -> None:
    text = gap.join(dumped(value) for value in found)
    assert find_answer(text).value == orjson.loads(dumped(found[-1]))


@given(st.text(alphabet='{}[]":,\\ aeu0123456789.-+tfnrlsx\x1f\udfff', max_size=200))
@settings(max_examples=1000)
def test_any_text_gives_an_answer_or_a_problem_and_agrees_with_a_strict_parser(
    text: str,
) -> None:
    answer = find_answer(text)
    assert (answer.value is None) != (answer.problem is None)
    stripped = text.strip(" \t\n\r")
    try:
        whole = orjson.loads(stripped)
    except (orjson.JSONDecodeError, UnicodeEncodeError):
        return
    if isinstance(whole, dict) and stripped.startswith("{"):
        assert answer.value == whole  # a reply that is one object is that object


def test_decoded_strings_are_redacted_keys_included() -> None:
    text = '{"status": "failed", "summary": "\\u0073k-abcdefghijklmnopqrstu", "\\u0073k-abcdefghijklmnopqrstu": 1}'

    def redact(value: str) -> str:
        return value.replace("sk-abcdefghijklmnopqrstu", "[REDACTED]")

    assert read_answer(text, redact) == {
        "status": "failed",
        "summary": "[REDACTED]",
        "[REDACTED]": 1,
    }


def test_a_reply_whose_object_breaks_names_the_break_before_the_nested_objects_problems() -> None:
    # the worker's object holds a lone surrogate escape, so it is not JSON; the object
    # nested in it is read, fails the reply's shape, and the retry says why, first
    text = (
        '{"status": "done", "acceptance": [{"criterion": "c", "status": "satisfied"}], '
        '"summary": "half \\ud800 a pair"}'
    )
    answer = find_answer(text)
    assert answer.value == {"criterion": "c", "status": "satisfied"}
    assert answer.passed_over is not None
    assert "not valid JSON (a string that is not JSON (an unpaired surrogate" in answer.passed_over
    problems = parse_worker_reply(text)
    assert isinstance(problems, list)
    assert problems[0].startswith("the reply's last JSON object begun is not valid JSON")
    assert "the object read is the one at character 34" in problems[0]
    assert any(p.startswith("status:") for p in problems[1:])


@pytest.mark.parametrize(
    "text",
    [
        '{"status": "done"} then {"status": "failed", "summary": "\\ud800"} but {"status": "done"}',
        '{"status": "done", "note": {"a": 1}}',
    ],
    ids=["a complete object after the broken one is the answer", "no object breaks"],
)
def test_nothing_is_passed_over_when_the_answer_is_the_last_object_begun(text: str) -> None:
    answer = find_answer(text)
    assert answer.value is not None
    assert answer.value["status"] == "done"
    assert answer.passed_over is None


def test_a_valid_nested_answer_is_taken_without_a_note() -> None:
    # the documented rule still holds: a broken candidate yields its last inner object
    reply = parse_worker_reply('{"x": {"status": "done", "summary": "ok"} oops }')
    assert not isinstance(reply, list)
    assert reply.status == "done"
