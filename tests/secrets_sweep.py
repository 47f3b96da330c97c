"""After the suite: no store and no log any test wrote holds a vendor key (SPEC §10, §13.1).

The fake vendors' keys (``tests/fakevendor/clis.py``) are handed to the real codex, claude
and gemini CLIs, to the relay and to command agents throughout the suite. When a worker's
tests are done, every store, history and log under its temporary folder is read back
(SQLite files with their WAL, JSON Lines, logs, JSON) and none may hold one of those keys:
redaction and the relay's metadata-only record are checked over everything the suite
wrote, not only where a test looks. A find fails the last test's teardown, naming the
file and the key.

A vendor CLI's own folders (its home: ``home/``, ``.codex/``, ``.claude/``, ``.gemini/``
…, where the CLI keeps its own session logs of what the model said) are the CLI's, not
governor's, and are not swept.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakevendor.clis import FAKE_ANTHROPIC_KEY, FAKE_GEMINI_KEY, FAKE_OPENAI_KEY

KEYS = (FAKE_OPENAI_KEY, FAKE_ANTHROPIC_KEY, FAKE_GEMINI_KEY)
SWEPT = ("*.db", "*.db-wal", "*.sqlite", "*.jsonl", "*.log", "*.json")
"""What a store, a history or a log is written as."""
LARGEST = 256 * 1024 * 1024
"""Files past this size are read in pieces."""


def holders(root: Path) -> Iterator[tuple[Path, str]]:
    """Each (file, key) under ``root`` where a swept file holds a vendor key."""
    needles = [key.encode() for key in KEYS]
    for pattern in SWEPT:
        for path in root.rglob(pattern):
            if _a_clis_own(path.relative_to(root)):
                continue
            try:
                if not path.is_file() or path.is_symlink():
                    continue
                found = _found_in(path, needles)
            except OSError:
                continue  # removed while we looked: a test's own clean-up
            for needle in found:
                yield path, needle.decode()


def _a_clis_own(relative: Path) -> bool:
    return any(part == "home" or part.startswith(".") for part in relative.parts[:-1])


def _found_in(path: Path, needles: list[bytes]) -> set[bytes]:
    overlap = max(len(n) for n in needles)
    found: set[bytes] = set()
    with path.open("rb") as f:
        tail = b""
        while chunk := f.read(LARGEST // 16):
            window = tail + chunk
            found.update(n for n in needles if n in window)
            tail = window[-overlap:]
    return found


@pytest.fixture(scope="session", autouse=True)
def no_vendor_key_in_any_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    root = tmp_path_factory.getbasetemp()
    leaks = sorted({f"{path.relative_to(root)} holds {key[:12]}…" for path, key in holders(root)})
    assert not leaks, "a vendor key reached a store or a log: " + "; ".join(leaks[:10])
