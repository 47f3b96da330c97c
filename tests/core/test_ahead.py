"""The wire's generated functions written ahead (``governor.core.wire.ahead``, issue 36).

``derived_code.py`` must be what ``module_text`` writes for the functions a read derives
(each model's finish, build and encode, replay's line and chunk loops), and a function
taken from it must read every golden history as the same function compiled from its
source does. Set ``GOVERNOR_UPDATE_GOLDEN=1`` to write it again after a change of the
event models or of the generated code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from governor.core.wire import ahead, derived_code
from governor.core.wire.generate import generated

ROOT = Path(__file__).resolve().parents[2]
DERIVED = Path(derived_code.__file__)
"""The module as imported (the compiled build's tests import the installed wheel's)."""
GOLDEN = ROOT / "tests" / "golden"

DERIVE_ALL = """
import json, sys
from governor.core.wire import ahead
from governor.core.wire.codec import _REMEMBER
from governor.core.wire.decoder import chunk_reader, line_reader
from governor.core.wire.derive import compiled
from governor.core.wire.encoder import encoders
compiled(); line_reader(_REMEMBER); chunk_reader(_REMEMBER); encoders()
sys.stdout.write(json.dumps([ahead.module_text(), ahead.MISSED]))
"""

READ_GOLDEN = """
import json, sys
from pathlib import Path
from governor.core.wire import derived_code
if sys.argv[2] == "from-source":
    derived_code.FACTORIES.clear()
from governor.core.wire import ahead
from governor.core.wire.codec import LineDecoder, encode
from governor.core.wire.decoder import decode_compiled, event_of
read = []
def each(pairs):
    try:
        for line, struct in pairs:
            event = event_of(struct)
            read.append([line, event.model_dump_json(by_alias=True), encode(event).decode()])
    except Exception as exc:  # a history the format refuses: refused alike
        read.append(str(exc))
for path in sorted(Path(sys.argv[1]).glob("*.jsonl")):
    lines = path.read_bytes().splitlines(keepends=True)
    for raw in lines:  # the one-event reads: each event, or None (pydantic decides)
        event = decode_compiled(raw)
        read.append(None if event is None else event.model_dump_json(by_alias=True))
    each(LineDecoder(str(path), structs=True).lines(iter(lines)))  # replay's line loop
    each(LineDecoder(str(path), structs=True).chunks([lines]))  # its chunk loop
print(json.dumps([read, ahead.MISSED, len(derived_code.FACTORIES)]))
"""


def _python(script: str, *argv: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout


def test_derived_code_is_what_module_text_writes_for_every_function_a_read_derives() -> None:
    text, missed = json.loads(_python(DERIVE_ALL))
    if os.environ.get("GOVERNOR_UPDATE_GOLDEN") == "1":
        DERIVED.write_text(text)
    assert text == DERIVED.read_text(), (
        "governor/core/wire/derived_code.py is stale: run "
        "GOVERNOR_UPDATE_GOLDEN=1 pytest tests/core/test_ahead.py"
    )
    assert missed == []  # every function was taken from it: none compiled from source


def test_the_functions_written_ahead_read_every_golden_history_as_those_compiled_now() -> None:
    ahead_read, missed, factories = json.loads(_python(READ_GOLDEN, str(GOLDEN), "ahead"))
    assert (missed, factories > 0) == ([], True)
    source_read, missed, factories = json.loads(_python(READ_GOLDEN, str(GOLDEN), "from-source"))
    assert factories == 0
    assert {"finish_AttemptStarted", "read_lines", "read_chunks", "encode_GoalCreated"} <= set(
        missed
    )
    assert sum(isinstance(r, list) for r in ahead_read) > 1000
    assert ahead_read == source_read


def test_a_function_not_written_ahead_is_compiled_from_its_source() -> None:
    missed = len(ahead.MISSED)
    twice = generated("twice_plus", ["    return s * 2 + plus"], {"plus": 1})
    assert twice(20) == 41
    assert ahead.MISSED[missed:] == ["twice_plus"]


def test_a_function_is_found_by_its_source_and_the_names_of_its_scope() -> None:
    source = "def f(s):\n    return s\n"
    assert ahead.key(source, ("a",)) != ahead.key(source, ("b",))
    assert ahead.key(source, ("a",)) != ahead.key(source.replace("s", "t"), ("a",))
    written = ahead.Written("f", "def f(s):\n    return s + a\n", ("a",))
    scope: dict[str, object] = {}
    exec(ahead.module_text([written]), scope)
    factory = scope["FACTORIES"][ahead.key(written.source, written.names)]  # type: ignore[index]
    assert factory(a=2)(40) == 42
