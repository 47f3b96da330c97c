"""Fuzz family: hostile agent replies through the command harness (issue 9).

Each case is one goal driven by ``governor run G --max-wait 0`` (in this process, the
code the ``governor`` command runs) with real command agents: small shell scripts that
print a reply file, write some stderr and exit with a chosen code. One of the two agents
is hostile: the planner, or the worker of the plan's one item. Its reply is generated:
replies of the right shape with wrong values, the structured failure envelope with
wrong values, non-finite and huge numbers, lone surrogates, JSON escapes spelling a key,
deep nesting, truncation, prose and fences around JSON, invalid UTF-8, control and
escape bytes, random bytes, up to a few MiB. A share of the cases are *valid* replies
with hostile values (huge strings, lone surrogates, control and bidi characters, a key
spelled with escapes, extra fields), so the accepted path is explored too, and *nearly
valid* ones: a valid reply with one thing wrong (a wrong type in one field, a string
past its bound, NaN or ``1e400``, deep nesting, an extra or duplicated key, a cut).

The promise, after every case:

* the exit code is a documented one and never 1 (an internal error);
* a refused command (exit 2 to 9) says so in one line on stderr; no traceback ever;
* nothing invalid is stored: the goal's history passes every check and its summary is
  at its last seq; no event holds the key a reply spelled with escapes;
* no case hangs (``CASE_TIMEOUT_S`` of wall time, then a SIGALRM fails it);
* the run never dies of the reply: an attempt or plan in flight is finished (a charged
  failure when the reply could not be used), never left for a rerun to repeat;
* every stored event is valid UTF-8: a message holding a lone surrogate survives (its
  marker is in an event, the surrogate replaced) or the reply is refused with a
  one-line error;
* a valid reply is accepted: the goal ends as that reply says (succeeded, blocked on the
  question, or out of budget after the reported failures).

``--fuzz-long`` runs ``LONG`` cases instead of ``SHORT`` (docs/reliability.md).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import string
from contextlib import closing, redirect_stderr, redirect_stdout
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governor.cli.exit_codes import ExitCode
from governor.cli.main import main
from governor.core.history import check_history
from governor.store import open_store
from tests.fuzz.harness import deadline

SHORT: Final = 20
LONG: Final = 1_500
CASE_TIMEOUT_S: Final = 120.0
"""Wall time one case may take: far above what any needs, even on a loaded machine."""
OK_CODES: Final = frozenset(int(c) for c in ExitCode if c is not ExitCode.FAILURE)
REFUSED: Final = frozenset(range(2, 10))
UNUSABLE: Final = "the reply could not be used: "
"""How the error of an attempt or plan whose reply was refused begins."""

AGENT: Final = """#!/bin/sh
role=$1
here=$(dirname "$0")
prompt=$(cat)
if [ "$role" = planner ] && [ -f "$here/planner.milestone" ]; then
  case "$prompt" in
    *"asked now: milestone"*) printf '%s' '{"decision": "complete", "rationale": "done"}'
      exit 0 ;;
  esac
fi
cat "$here/$role.reply"
cat "$here/$role.stderr" >&2
exit "$(cat "$here/$role.code")"
"""

VALID_ITEM: Final[dict[str, Any]] = {
    "key": "a",
    "title": "a",
    "objective": "do a",
    "acceptance": ["a works"],
}
VALID_PLAN: Final = {"decision": "apply", "rationale": "one item", "work": [VALID_ITEM]}
WORKER_FIELDS: Final = frozenset({"status", "summary", "question", "acceptance"})
"""The fields a worker reply is read for; any other is ignored."""
VALID_DONE: Final = {
    "status": "done",
    "summary": "did a",
    "acceptance": [{"criterion": "a works", "status": "satisfied"}],
}

# --- replies -------------------------------------------------------------------------------

texts = st.text(max_size=40) | st.sampled_from(["", "a works", "\udfff", "\x1b[31mred", "\x00"])
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def shaped(keys: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Dictionaries of the right keys, each present or not, each right or any value."""
    return st.fixed_dictionaries({}, optional={k: v | values for k, v in keys.items()}).flatmap(
        lambda d: st.dictionaries(texts, values, max_size=2).map(lambda extra: {**extra, **d})
    )


criteria = st.lists(
    shaped(
        {
            "criterion": st.sampled_from(["a works", "b works"]),
            "status": st.sampled_from(["satisfied", "unsatisfied", "unknown"]),
            "evidence": texts,
        }
    ),
    max_size=3,
)
worker_replies = shaped(
    {
        "status": st.sampled_from(["done", "failed", "blocked", "decision", "partial"]),
        "summary": texts,
        "acceptance": criteria,
        "question": texts,
        "options": st.lists(texts, max_size=3),
        "reason": texts,
    }
)
items = shaped(
    {
        "key": st.sampled_from(["a", "b", "a b", ""]),
        "title": texts,
        "objective": texts,
        "acceptance": st.lists(texts, max_size=3),
        "depends_on": st.lists(st.sampled_from(["a", "b", "z"]), max_size=2),
        "profile": st.sampled_from(["worker", "planner", "nope"]),
    }
)
planner_replies = shaped(
    {
        "decision": st.sampled_from(["apply", "complete", "decide", "replan"]),
        "rationale": texts,
        "work": st.lists(items, max_size=4),
        "question": texts,
        "options": st.lists(texts, max_size=3),
    }
)
envelopes = shaped(
    {
        "status": st.just("failed"),
        "class": st.sampled_from(["upstream", "environment", "agent", "nope"]),
        "vendor_status": st.integers(-5, 1_000),
        "retry_after_s": st.floats() | st.integers(-(2**70), 2**70),
        "effects": st.sampled_from(["absent", "present", "unknown"]),
        "output": st.sampled_from(["absent", "present", "unknown"]),
    }
)

NUMBERS: Final = ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "1" * 5000, "-0", "0e99999"]


def escaped(text: str, rng: random.Random) -> str:
    """``text`` as a JSON string body with some characters spelled as ``\\uXXXX``."""
    return "".join(f"\\u{ord(c):04x}" if rng.random() < 0.5 else c for c in text)


def damage(body: str, how: str, rng: random.Random, secret: str) -> bytes:
    """One way a reply goes wrong, applied to the JSON text ``body``."""
    if how == "invalid-utf8":  # stray bytes and encoded lone surrogates
        raw = body.encode("utf-8", "surrogatepass")
        cut = rng.randrange(len(raw) + 1)
        return raw[:cut] + bytes([0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80]) + raw[cut:]
    return _damage(body, how, rng, secret).encode("utf-8", "surrogatepass")


def _damage(body: str, how: str, rng: random.Random, secret: str) -> str:
    if how == "truncated":
        return body[: rng.randrange(len(body) + 1)]
    if how == "prose":
        return f"Here you go:\n```json\n{body}\n```\nThanks!"
    if how == "twice":
        return f"{body}\n{body}"
    if how == "number":
        return body.replace("1", rng.choice(NUMBERS), 1)
    if how == "surrogate":
        return body.replace('"', '"\\udfff', 1)
    if how == "secret":
        spelled = escaped(secret, rng)
        return body.replace('"', f'"key {spelled} ', 1)
    if how == "nested":
        depth = rng.choice([65, 1_000, 100_000])
        return '{"status": "done", "x": ' + "[" * depth + "]" * depth + "}"
    if how == "braces":
        return "{" * rng.choice([1_000, 1_000_000])
    if how == "huge":
        return body + " " * rng.choice([1 << 20, 3 << 20]) + body
    if how == "control":
        return body.replace(" ", rng.choice(["\x00", "\x1b[2J", "\r", "\x7f", "\u202e"]), 3)
    return body


HOW: Final = [
    "as is",
    "as is",
    "truncated",
    "prose",
    "twice",
    "number",
    "surrogate",
    "secret",
    "secret",
    "nested",
    "braces",
    "huge",
    "invalid-utf8",
    "control",
]


@dataclass(frozen=True, slots=True)
class Reply:
    """One generated reply and what the case checks it against."""

    data: bytes
    secret: str
    """The key the reply may spell with escapes: it must land in no event."""
    expected: int | None = None
    """The exit code a valid reply must lead to (None: any documented code)."""
    marker: str | None = None
    """A word at the end of a message holding a lone surrogate: the message survives
    (the word is in an event) or the reply is refused in one line."""
    shaped: bool = False
    """A valid or nearly valid reply (the planner then answers its milestone right)."""


@st.composite
def replies(draw: st.DrawFn, role: str) -> Reply:
    """A hostile reply: a damaged one, a valid one with hostile values, or a nearly valid one."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    secret = "sk-" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(28))
    kind = draw(st.sampled_from(KINDS))
    if kind in ("valid", "nearly"):
        return draw(valid_replies(role, rng, secret, nearly=kind == "nearly"))
    if kind == "bytes":
        return Reply(draw(st.binary(max_size=2_000)), secret)
    shape = planner_replies if role == "planner" else worker_replies
    obj = draw({"reply": shape, "envelope": envelopes, "any": values}[kind])
    body = json.dumps(obj, ensure_ascii=draw(st.booleans()))
    return Reply(damage(body, draw(st.sampled_from(HOW)), rng, secret), secret)


KINDS: Final = ["reply", "reply", "envelope", "any", "bytes", "valid", "valid", "valid", "nearly"]
"""A third of the cases are valid replies with hostile values, one in nine nearly valid."""

HOSTILE_TEXTS: Final = [
    "plain",
    "",
    "\ud800",  # lone surrogates
    "a\udfffb",
    "\udc00\ud800",
    "\ud83d\ude00 a pair is fine",
    "\x00\x01\x08\x1b[2J\x1b]0;title\x07\x7f",  # control and escape characters
    "\u0085\u2028\u2029\ufeff\u200b",
    "\u202e\u2066\u2069 bidi",
    "é 漢字 🎉 \U0010ffff",
    "\r\n\t",
    "x" * 1_900,
]
"""Hostile values that fit every field's bound (a message is at most 2,000 characters)."""
BOUND_TEXTS: Final = ["x" * 2_001, "y" * 20_001, "z" * 200_000, "w" * (3 << 20)]
"""Strings past the bounds (2,000 for a question or rationale, 20,000 for a summary)."""
WRONG_TYPES: Final = [None, True, 0, -1, 1.5, [], {}, ["a"], {"a": 1}, "", "nope"]
LITERALS: Final = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" * 5_000, "-0", "1e-400"]
NEARLY: Final = [
    "wrong type",
    "past its bound",
    "literal",
    "nested",
    "extra keys",
    "duplicate key",
    "cut",
    "cut in a character",
    "escaped surrogate",
    "bom",
]


def lone_surrogates(value: Any) -> bool:
    """Whether any string of ``value`` (keys too) holds a surrogate that is not one half
    of a pair: JSON cannot spell it (``\ud800`` escaped is refused; raw, it is not UTF-8)."""
    if isinstance(value, dict):
        return any(lone_surrogates(k) or lone_surrogates(v) for k, v in value.items())
    if isinstance(value, list):
        return any(lone_surrogates(v) for v in value)
    if not isinstance(value, str):
        return False
    pairs = re.sub("[\ud800-\udbff][\udc00-\udfff]", "", value)
    return re.search("[\ud800-\udfff]", pairs) is not None


@st.composite
def valid_replies(
    draw: st.DrawFn, role: str, rng: random.Random, secret: str, *, nearly: bool
) -> Reply:
    """A reply of the right shape that the runner must accept (hostile values within their
    bounds), or with ``nearly`` one thing wrong with it."""
    marker = f"marker{draw(st.integers(0, 10**6))}"
    message = draw(st.sampled_from(HOSTILE_TEXTS)) + " " + marker
    if draw(st.booleans()):  # a key spelled with escapes, in a message an event keeps
        message = f"key {secret} {message}"
    kept = True
    """Whether ``message`` is in a field an event keeps (a long summary is not)."""
    if role == "worker":
        status = draw(st.sampled_from(["done", "done", "failed", "decision"]))
        obj: dict[str, Any] = {"status": status}
        if status == "decision":
            field, obj["question"] = "question", message
        else:
            kept = draw(st.integers(0, 3)) > 0
            field, obj["summary"] = "summary", message if kept else "x" * 20_000
            obj["acceptance"] = [
                {"criterion": "a works", "status": "satisfied", "evidence": message}
            ]
        if draw(st.booleans()):  # extra fields are ignored
            extra = texts.filter(lambda k: k not in WORKER_FIELDS)
            obj.update(draw(st.dictionaries(extra, values)))
        expected = {"done": 0, "failed": 11, "decision": 10}[status]
    else:
        status = draw(st.sampled_from(["apply", "apply", "decision"]))
        if status == "decision":
            field, obj = "question", {"status": "decision", "question": message}
        else:
            work = [{**VALID_ITEM, "objective": message}]
            field, obj = "rationale", {"decision": "apply", "rationale": message, "work": work}
        expected = {"apply": 0, "decision": 10}[status]
    how = draw(st.sampled_from(NEARLY)) if nearly else None
    depth = draw(st.sampled_from([10, 63, 64, 65, 200, 5_000]))
    # a planner's message is in its item's objective too; a worker's only in ``field``
    elsewhere = role == "planner" and status == "apply"
    if how == "wrong type":
        key = draw(st.sampled_from(sorted(obj)))
        obj[key] = draw(st.sampled_from(WRONG_TYPES))
        kept = kept and (key != field or elsewhere)
    elif how == "past its bound":
        obj[field] = draw(st.sampled_from(BOUND_TEXTS))
        kept = kept and elsewhere
    elif how == "nested":
        obj["deep"] = "__DEEP__"
    elif how == "extra keys":
        extra = st.sampled_from(HOSTILE_TEXTS) | texts
        obj.update(draw(st.dictionaries(extra, values, min_size=1, max_size=3)))
    ascii_only = draw(st.booleans())
    body = json.dumps(obj, ensure_ascii=ascii_only).replace(secret, escaped(secret, rng))
    if how == "nested":
        body = body.replace('"__DEEP__"', "[" * depth + "]" * depth)
    elif how == "literal":
        body = "{" + f'"n": {draw(st.sampled_from(LITERALS))}, ' + body[1:]
    elif how == "duplicate key":
        key, value = draw(st.sampled_from(sorted(obj))), draw(st.sampled_from(WRONG_TYPES))
        body = "{" + f"{json.dumps(key)}: {json.dumps(value)}, " + body[1:]
    elif how == "escaped surrogate":
        body = body.replace(marker, "\\ud800 " + marker)
    data = body.encode("utf-8", "surrogatepass")
    if how == "cut":
        data = data[: rng.randrange(len(data))]
    elif how == "cut in a character":
        data = '{"status": "done", "summary": "漢字🎉'.encode()[: -rng.randint(1, 3)]
    elif how == "bom":
        data = b"\xef\xbb\xbf" + data
    surrogate = lone_surrogates(message) or how == "escaped surrogate"
    watched = marker if surrogate and kept else None
    if nearly:
        return Reply(data, secret, None, watched, shaped=True)
    # JSON cannot spell a lone surrogate escaped: that reply is refused, the budget spent
    refused = ascii_only and lone_surrogates(obj)
    return Reply(data, secret, 11 if refused else expected, watched, shaped=True)


# --- running a case ---------------------------------------------------------------------------


def governor(*argv: str) -> tuple[int, str]:
    """``governor ARGV`` in this process: its exit code and its stderr."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    with deadline(CASE_TIMEOUT_S), redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
    buffer = err.buffer
    assert isinstance(buffer, io.BytesIO)
    return code, buffer.getvalue().decode("utf-8", "backslashreplace")


class Cases:
    """The folder, store and agents the cases of one test share; one goal per case."""

    def __init__(self, root: Path) -> None:
        self.root, self.count = root, 0
        self.store = str(root / "governor.db")
        self.agent = root / "agent.sh"
        self.agent.write_text(AGENT)
        self.agent.chmod(0o755)
        self.exits: dict[int, int] = {}
        self.accepted = 0
        """Valid replies the runner accepted (the goal succeeded or asks the question)."""

    def goal(self) -> str:
        self.count += 1
        goal_id = f"c{self.count}"
        profile = {"harness": "command", "timeout_s": 60, "max_attempts": 1}
        spec = {
            "id": goal_id,
            "title": goal_id,
            "objective": "Do it.",
            "acceptance": ["it is done"],
            "planner": "planner",
            "worker": "worker",
            "policy": {"max_attempts": 2, "max_replans": 2},
            "profiles": {
                "planner": {**profile, "args": [str(self.agent), "planner"]},
                "worker": {**profile, "args": [str(self.agent), "worker"]},
            },
        }
        path = self.root / "goal.json"
        path.write_text(json.dumps(spec))
        code, stderr = governor("new", str(path), "--store", self.store)
        assert code == 0, stderr
        return goal_id

    def arm(self, role: str, reply: bytes, stderr: bytes, code: int, *, valid: bool) -> None:
        """The hostile agent says ``reply``; the other one answers right. The planner
        answers the milestone question right when the worker is the hostile one, and
        when its reply is a valid or nearly valid one."""
        other = "worker" if role == "planner" else "planner"
        answer = VALID_DONE if other == "worker" else VALID_PLAN
        (self.root / f"{role}.reply").write_bytes(reply)
        (self.root / f"{role}.stderr").write_bytes(stderr)
        (self.root / f"{role}.code").write_text(str(code))
        (self.root / f"{other}.reply").write_text(json.dumps(answer))
        (self.root / f"{other}.stderr").write_bytes(b"")
        (self.root / f"{other}.code").write_text("0")
        milestone = self.root / "planner.milestone"
        if role == "worker" or valid:
            milestone.touch()
        else:
            milestone.unlink(missing_ok=True)

    def check(self, goal_id: str, code: int, stderr: str, reply: Reply) -> None:
        where = f"goal {goal_id}: exit {code}, stderr {stderr!r}, reply {reply.data[:300]!r}"
        assert "Traceback" not in stderr, where
        assert "internal error" not in stderr, where
        assert code in OK_CODES, where
        if code in REFUSED:
            assert len(stderr.strip().splitlines()) == 1, where
        self.exits[code] = self.exits.get(code, 0) + 1
        with closing(open_store(self.store, read_only=True)) as store:
            events = list(store.load(goal_id))
            (row,) = [r for r in store.goals() if r.goal_id == goal_id]
            assert row.seq == len(events) == store.last_seq(goal_id), where
        checked = list(check_history(enumerate(events, start=1), source=goal_id))
        view = checked[-1][2]
        body = "\n".join(e.model_dump_json() for e in events)
        body.encode("utf-8")  # strict: no lone surrogate reached an event
        assert reply.secret not in body, f"{where}: the key landed in an event"
        # nothing left in flight for a rerun to repeat (the crash-loop guard)
        assert all(plan.status != "requested" for plan in view.plans.values()), where
        assert not any(item.running for item in view.work.values()), where
        if reply.marker is not None:  # the message survived, or the reply was refused
            refusals = [
                error
                for e in events
                if (error := getattr(e, "error", None)) and error.startswith(UNUSABLE)
            ]
            assert reply.marker in body or refusals, f"{where}: the message was lost"
            assert all("\n" not in error for error in refusals), where
        if reply.expected is not None:  # a valid reply is accepted
            assert code == reply.expected, where
            self.accepted += reply.expected != 11


def count(config: pytest.Config) -> int:
    return LONG if config.getoption("--fuzz-long", default=False) else SHORT


def test_hostile_replies_through_the_command_harness_keep_the_promise(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    cases = Cases(tmp_path)
    before = Path.cwd()
    os.chdir(tmp_path)

    @settings(
        max_examples=count(request.config),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        role=st.sampled_from(["planner", "worker", "worker"]),
        data=st.data(),
        stderr=st.binary(max_size=300),
        exit_code=st.sampled_from([0, 0, 0, 1, 2, 127, 255]),
    )
    def case(role: str, data: st.DataObject, stderr: bytes, exit_code: int) -> None:
        reply = data.draw(replies(role))
        goal_id = cases.goal()
        if reply.expected is None:
            cases.arm(role, reply.data, stderr, exit_code, valid=reply.shaped)
            if exit_code != 0:  # a failed command: its reply is not read, nor its message
                reply = replace(reply, marker=None)
        else:  # a valid reply, from an agent that exits 0
            cases.arm(role, reply.data, b"", 0, valid=True)
        code, err = governor("run", goal_id, "--max-wait", "0", "--quiet", "--store", cases.store)
        cases.check(goal_id, code, err, reply)

    try:
        case()
    finally:
        os.chdir(before)
        report = os.environ.get("GOVERNOR_FUZZ_REPORT")
        if report:
            line = {
                "family": "agent replies",
                "cases": cases.count,
                "exits": cases.exits,
                "valid_accepted": cases.accepted,
            }
            with open(report, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(line) + "\n")
