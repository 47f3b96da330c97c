"""Children start through the shim without a fork of the runner, and get what a fork gave
them (decision records 0007 and 0026): real files, real processes, a real runner killed
before it gave the go-ahead."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from governor.exec.launch import launching, shim
from governor.exec.process import run_process
from tests.exec.conftest import dies_soon

pytestmark = pytest.mark.skipif(
    shim() is None, reason="no setpriv that knows --pdeathsig here: every child is forked"
)


def shimmed(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> bool:
    with launching(tuple(argv), env, cwd) as how:
        assert (how.preexec is None) == how.shimmed
        return how.shimmed


def script(path: Path, text: str, mode: int = 0o755) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param(["true"], True, id="an ELF found on PATH takes the shim"),
        pytest.param(["family.sh", "x"], True, id="a sh script found on PATH takes the shim"),
        pytest.param(["./family.sh"], True, id="a relative path resolves in the child's cwd"),
        pytest.param(
            ["definitely-not-installed-xyz"], False, id="a missing file is forked (ENOENT)"
        ),
        pytest.param(["no_exec.sh"], False, id="a file we may not execute is forked (EACCES)"),
        pytest.param(["no_shebang"], False, id="a file without #! is forked (ENOEXEC)"),
    ],
)
def test_the_shim_is_taken_only_where_exec_would_start_the_program(
    bin_dir: Path, base_env: dict[str, str], argv: list[str], expected: bool
) -> None:
    env = {**base_env, "PATH": f"{bin_dir}:{base_env['PATH']}"}
    assert shimmed(argv, env, bin_dir) is expected


@pytest.mark.parametrize(
    ("first_line", "expected"),
    [
        pytest.param("#!/bin/sh", True, id="an interpreter that is an ELF"),
        pytest.param("#!/usr/bin/env sh", True, id="an interpreter with an argument"),
        pytest.param("#!/nowhere/python9", False, id="a missing interpreter is forked (ENOENT)"),
        pytest.param("#!sh", False, id="a relative interpreter is forked"),
        pytest.param("#!", False, id="an empty #! line is forked"),
    ],
)
def test_a_script_takes_the_shim_only_when_its_interpreter_is_a_program(
    tmp_path: Path, base_env: dict[str, str], first_line: str, expected: bool
) -> None:
    path = script(tmp_path / "agent", f"{first_line}\necho hi\n")
    assert shimmed([str(path)], base_env) is expected


def test_a_script_whose_interpreter_is_a_script_is_forked(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    inner = script(tmp_path / "inner", "#!/bin/sh\nexec cat\n")
    path = script(tmp_path / "agent", f"#!{inner}\n")
    assert not shimmed([str(path)], base_env)


def test_an_environment_naming_pwd_is_forked_so_the_shell_cannot_change_it(
    base_env: dict[str, str],
) -> None:
    assert not shimmed(["true"], {**base_env, "PWD": "/somewhere"})


def test_the_child_gets_exactly_its_argv_environment_and_stdin(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    agent = script(
        tmp_path / "agent",
        "#!/bin/sh\ncat /proc/$$/cmdline; echo; cat /proc/$$/environ; echo; cat\n",
    )
    assert shimmed([str(agent)], base_env)
    stdin = b"first line\n\nthird, after an empty one\n"
    result = run_process([str(agent), "a b", "$HOME", ""], stdin=stdin, env=base_env, timeout_s=60)
    cmdline, environ, rest = result.stdout_head.split(b"\n", 2)
    assert cmdline.split(b"\0") == [b"/bin/sh", str(agent).encode(), b"a b", b"$HOME", b"", b""]
    given = sorted(f"{k}={v}".encode() for k, v in base_env.items())
    assert sorted(environ.rstrip(b"\0").split(b"\0")) == given  # no PWD, nothing added
    assert rest == stdin  # the go-ahead was the shim's alone


def test_without_input_the_child_reads_an_empty_stdin(base_env: dict[str, str]) -> None:
    assert shimmed(["cat"], base_env)
    result = run_process(["cat"], env=base_env, timeout_s=60)
    assert (result.exit_code, result.stdout_bytes) == (0, 0)


def test_the_child_leads_its_own_session_and_group(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    agent = script(tmp_path / "agent", "#!/bin/sh\necho $$; cat /proc/$$/stat\n")
    result = run_process([str(agent)], env=base_env, timeout_s=60)
    pid, stat = result.stdout_head.decode().splitlines()
    fields = stat.rsplit(")", 1)[1].split()
    assert fields[2] == pid  # process group
    assert fields[3] == pid  # session
    assert fields[1] == str(os.getpid())  # its parent is the runner (no shim left between)


RUNNER = """
import subprocess, sys, time
from governor.exec.launch import launching

with launching((sys.argv[1],), {"PATH": "/usr/bin:/bin"}, None) as how:
    assert how.shimmed
    proc = subprocess.Popen(how.argv, stdin=subprocess.PIPE, start_new_session=True)
print(proc.pid, flush=True)
time.sleep(600)  # killed before it gives the go-ahead
"""


def test_a_runner_that_dies_before_the_go_ahead_never_runs_its_agent(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    agent = script(tmp_path / "agent", f"#!/bin/sh\ntouch {marker}\n")
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(agent)],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).parents[2],
    )
    assert runner.stdout is not None
    shim_pid = int(runner.stdout.readline())
    runner.send_signal(signal.SIGKILL)
    runner.wait(timeout=60)
    assert dies_soon(shim_pid)
    time.sleep(0.2)  # not a timing assertion: the shim is gone, nothing can touch it later
    assert not marker.exists()


IN_A_REMOVED_FOLDER = """
import os, sys, tempfile
folder = tempfile.mkdtemp()
os.chdir(folder)
os.rmdir(folder)
from governor.exec.process import run_process
for argv in (["true"], ["/bin/true"]):
    result = run_process(argv, env={"PATH": "/usr/bin:/bin"}, timeout_s=60)
    print(result.exit_code, result.spawn_errno)
"""


def test_a_runner_whose_folder_was_removed_still_starts_its_agents() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IN_A_REMOVED_FOLDER],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["0 None", "0 None"]  # inherited, as a fork's child
