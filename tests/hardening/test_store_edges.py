"""Issue 24, item 10 (the store and command-line parts), each through the real command.

* ``tune --grid max_replans=nan`` exited 1 (``KeyError``): a grid value its field cannot
  hold is one line, exit 3.
* ``export -o`` with a file name over 255 bytes exited 1: one line, exit 3 — and a name the
  file system does take (250 bytes) is written.
* A store in a folder nobody can write (a read-only mount, another user's folder) could
  not even be read: every read command exited 7 ("cannot open the database file").
  SQLite's ``mode=ro`` needs a shared-memory file beside the database; where none can be
  made, no writer can be using the file either, and it is read as ``immutable``.
  Root ignores ``chmod``, so as root the commands run without the capabilities that let it
  (``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH`` dropped from their bounding set): the
  folder is then as read-only to them as to anyone. Where the machine lets the test make a
  private mount namespace, the same commands also read the store from a tmpfs mounted
  read-only, which nobody can write.
"""

from __future__ import annotations

import ctypes
import io
import os
import re
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from governor.store.sqlite import SqliteEventStore
from governor.store.transfer import export_history, import_history
from tests.hardening.run import GOVERNOR, assert_one_line, governor

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
HISTORY = GOLDEN / "replans_exhausted.jsonl"
READS = (
    ("list",),
    ("list", "--json"),
    ("status",),
    ("status", "{goal}"),
    ("status", "{goal}", "--json"),
    ("events", "{goal}"),
    ("export", "{goal}"),
    ("replay", "{goal}"),
    ("explain", "{goal}"),
    ("upstreams",),
    ("upstreams", "--json"),
    ("service", "status"),
    ("service", "status", "--json"),
    ("store", "check"),
)
_PR_CAPBSET_DROP = 24
_WRITE_ANYWHERE = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


# --- tune and export -----------------------------------------------------------------------


@pytest.mark.parametrize("grid", ["max_replans=nan", "max_replans=nan,3", "max_replans=abc"])
def test_a_grid_value_its_field_cannot_hold_is_one_line(tmp_path: Path, grid: str) -> None:
    result = governor(tmp_path, "tune", str(HISTORY), "--grid", grid, "--bootstrap", "0")
    assert_one_line(result, 3, f"--grid {grid}", "is not a valid max_replans")


def test_an_export_name_longer_than_the_file_system_takes_is_one_line(tmp_path: Path) -> None:
    goal = store_of(tmp_path)
    result = governor(tmp_path, "export", goal, "-o", "a" * 300)
    assert_one_line(result, 3, "cannot be written", "File name too long")
    taken = "b" * 250  # within the limit: written (its temporary name is shortened)
    written = governor(tmp_path, "export", goal, "-o", taken)
    assert written.returncode == 0, written.stderr
    assert (tmp_path / taken).read_text() == governor(tmp_path, "export", goal).stdout
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")]


# --- read-only stores ----------------------------------------------------------------------


def store_of(folder: Path) -> str:
    with SqliteEventStore(folder / "s.db") as store:
        goal = import_history(store, HISTORY).goal_id
    assert not list(folder.glob("s.db-*")), "a clean close leaves no -wal or -shm file"
    return goal


def _drop_write_anywhere() -> None:
    """In the child, before it runs: no capability that lets root ignore a folder's mode."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in _WRITE_ANYWHERE:
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def as_anyone(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``governor ARGS`` on ``folder/s.db`` with no right to write where its mode says not."""
    env = {**os.environ, "GOVERNOR_STORE": str(folder / "s.db"), "PYTHONWARNINGS": "ignore"}
    env.pop("GOVERNOR_DEBUG", None)
    return subprocess.run(
        [GOVERNOR, *args],
        capture_output=True,
        text=True,
        cwd=folder.parent,
        env=env,
        timeout=120,
        check=False,
        preexec_fn=_drop_write_anywhere if os.geteuid() == 0 else None,
    )


@contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    (folder / "s.db").chmod(0o444)
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


def test_a_store_in_a_folder_nobody_can_write_is_read_by_every_read_command(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    goal = store_of(folder)
    with SqliteEventStore(folder / "s.db") as store:
        exported = io.BytesIO()
        export_history(store, goal, exported)
    with read_only(folder):
        another = str(GOLDEN / "awaiting_review_plan.jsonl")
        probe = as_anyone(folder, "import", another)  # the folder really is read-only
        assert_one_line(probe, 7, "cannot be written here", "commands that only read it")
        for args in READS:
            result = as_anyone(folder, *(a.format(goal=goal) for a in args))
            assert result.returncode == 0, (args, result.stderr)
            assert result.stderr == "", (args, result.stderr)
        assert as_anyone(folder, "export", goal).stdout.encode() == exported.getvalue()
        assert_one_line(as_anyone(folder, "tick", goal), 7, "cannot be written here")
        assert ui_page(folder, f"/goals/{goal}")[0] == 200
        assert sorted(p.name for p in folder.iterdir()) == ["s.db"]  # nothing was made


def ui_page(folder: Path, path: str) -> tuple[int, bytes]:
    """``governor ui`` on ``folder/s.db``, run as ``as_anyone`` runs commands: one GET."""
    ui = subprocess.Popen(
        [GOVERNOR, "ui", "--port", "0", "--store", str(folder / "s.db")],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=folder.parent,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        preexec_fn=_drop_write_anywhere if os.geteuid() == 0 else None,  # noqa: PLW1509 - one prctl, no lock
    )
    try:
        assert ui.stderr is not None
        seen = ""
        while not (found := re.search(r"serving (http://\S+)", seen)):
            line = ui.stderr.readline()
            assert line, f"governor ui did not start: {seen}"
            seen += line
        with urllib.request.urlopen(found.group(1).rstrip("/") + path, timeout=60) as page:
            return page.status, page.read()
    finally:
        ui.terminate()
        ui.wait(timeout=60)


def _namespace() -> list[str] | None:
    """How to run a command in a private mount namespace where it may mount, or None."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    way = [unshare, "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        way[1:1] = ["--user", "--map-root-user"]
    probe = subprocess.run(
        [*way, "mount", "-t", "tmpfs", "none", "/mnt"], capture_output=True, check=False
    )
    return way if probe.returncode == 0 else None


def test_a_store_on_a_read_only_mount_is_read_by_every_read_command(tmp_path: Path) -> None:
    """The honest case of the test above: a read-only tmpfs, which root cannot write either.
    Runs where the machine gives the test a private mount namespace (``unshare``); the test
    above holds the promise everywhere."""
    way = _namespace()
    if way is None:
        return  # see the docstring: no mount namespace here; the chmod test stands
    source = tmp_path / "src"
    source.mkdir()
    goal = store_of(source)
    mount = tmp_path / "mnt"
    mount.mkdir()
    script = [
        'mount -t tmpfs -o size=16m governor-test "$MNT"',
        'cp "$SRC" "$MNT/s.db"',
        'mount -o remount,ro "$MNT"',
        *(
            f'{GOVERNOR} {" ".join(a.format(goal=goal) for a in args)} >/dev/null 2>"$MNT.err"'
            f' || {{ echo "{" ".join(args)}: $?"; cat "$MNT.err"; }}'
            for args in READS
        ),
        f'{GOVERNOR} tick {goal} >/dev/null 2>"$MNT.err" && rc=0 || rc=$?',
        'echo "tick: $rc"; cat "$MNT.err"',
    ]
    env = {
        **os.environ,
        "MNT": str(mount),
        "SRC": str(source / "s.db"),
        "GOVERNOR_STORE": str(mount / "s.db"),
        "PYTHONWARNINGS": "ignore",
    }
    done = subprocess.run(
        [*way, "sh", "-c", "set -e; " + "\n".join(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "tick: 7", done.stdout  # no read failed; the write was refused
    assert "cannot be written here" in lines[1]
    assert len(lines) == 2, done.stdout
