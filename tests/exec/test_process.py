"""The process runner, against real children: errnos, timeouts, groups, capture, stdin."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from governor.exec.process import DRAIN_S, run_process
from tests.exec.conftest import dies_soon, open_fds, zombie_children


def test_a_clean_run_reports_its_output_exit_code_and_digest(base_env: dict[str, str]) -> None:
    result = run_process(["printf", "hello\nworld"], env=base_env, timeout_s=10)
    assert result.started
    assert result.exit_code == 0
    assert not result.timed_out
    assert result.stdout_head == b"hello\nworld"
    assert result.stdout_tail == b"hello\nworld"
    assert result.stdout_bytes == 11
    assert result.stdout_sha256 == hashlib.sha256(b"hello\nworld").hexdigest()
    assert result.stdout_complete
    assert result.duration_s >= 0


@pytest.mark.parametrize(
    ("name", "errno_name"),
    [
        pytest.param("definitely-not-installed-xyz", "ENOENT", id="a missing binary is ENOENT"),
        pytest.param("no_exec.sh", "EACCES", id="a file without execute permission is EACCES"),
        pytest.param("no_shebang", "ENOEXEC", id="a file without a shebang is ENOEXEC"),
    ],
)
def test_a_child_that_never_started_carries_its_errno(
    bin_dir: Path, base_env: dict[str, str], name: str, errno_name: str
) -> None:
    path = bin_dir / name
    argv = [str(path) if path.exists() else name]
    result = run_process(argv, env=base_env, timeout_s=10)
    assert not result.started
    assert result.exit_code is None
    assert result.spawn_errno == errno_name
    assert result.spawn_error
    assert result.stdout_bytes == 0


def test_a_missing_working_directory_is_enoent(base_env: dict[str, str], tmp_path: Path) -> None:
    result = run_process(["true"], env=base_env, cwd=tmp_path / "gone", timeout_s=10)
    assert result.spawn_errno == "ENOENT"


def test_a_non_zero_exit_is_a_result(bin_dir: Path, base_env: dict[str, str]) -> None:
    result = run_process([str(bin_dir / "exit127.sh")], env=base_env, timeout_s=10)
    assert result.exit_code == 127
    assert result.spawn_errno is None
    assert b"not found" in result.stderr_tail


def test_a_child_killed_by_a_signal_has_a_negative_exit_code(base_env: dict[str, str]) -> None:
    result = run_process(["sh", "-c", "kill -9 $$"], env=base_env, timeout_s=10)
    assert result.exit_code == -9
    assert not result.timed_out


def test_the_path_is_looked_up_in_the_childs_environment(base_env: dict[str, str]) -> None:
    result = run_process(["sh", "-c", "true"], env={"PATH": "/nonexistent"}, timeout_s=10)
    assert result.spawn_errno == "ENOENT"


def test_a_timeout_terminates_the_child(base_env: dict[str, str]) -> None:
    started = time.monotonic()
    result = run_process(["sleep", "30"], env=base_env, timeout_s=0.3, kill_grace_s=5)
    assert result.timed_out
    assert result.exit_code == -15
    assert time.monotonic() - started < 5


def test_a_child_that_exits_0_when_signalled_is_still_timed_out(
    bin_dir: Path, base_env: dict[str, str]
) -> None:
    result = run_process([str(bin_dir / "exit0_on_term.sh")], env=base_env, timeout_s=0.5)
    assert result.timed_out
    assert result.exit_code == 0
    assert b"got TERM" in result.stderr_tail


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(
    bin_dir: Path, base_env: dict[str, str]
) -> None:
    started = time.monotonic()
    result = run_process(
        [str(bin_dir / "ignore_term.sh")], env=base_env, timeout_s=0.3, kill_grace_s=0.3
    )
    assert result.timed_out
    assert result.exit_code == -9
    assert 0.6 <= time.monotonic() - started < 5
    assert result.stdout_head == b"started\n"


def test_a_timeout_kills_the_grandchild_too(
    bin_dir: Path, base_env: dict[str, str], tmp_path: Path
) -> None:
    pid_file = tmp_path / "pids"
    result = run_process(
        [str(bin_dir / "fork_grandchild.sh"), str(pid_file)],
        env=base_env,
        timeout_s=0.5,
        kill_grace_s=0.3,
    )
    assert result.timed_out
    child, grandchild = (int(pid) for pid in pid_file.read_text().split())
    assert dies_soon(child)
    assert dies_soon(grandchild)


def test_a_background_grandchild_holding_the_pipes_does_not_hold_the_run(
    bin_dir: Path, base_env: dict[str, str], tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    result = run_process(
        [str(bin_dir / "background_holder.sh"), str(pid_file)], env=base_env, timeout_s=30
    )
    assert result.exit_code == 0
    assert not result.timed_out
    assert result.stdout_head == b"leader done\n"
    assert time.monotonic() - started < DRAIN_S + 3
    assert dies_soon(int(pid_file.read_text()))


def test_head_tail_counts_and_digest_are_exact_when_output_outgrows_them(
    base_env: dict[str, str],
) -> None:
    data = bytes(range(256)) * 4000  # 1,024,000 bytes
    script = "import sys; sys.stdout.buffer.write(bytes(range(256)) * 4000)"
    result = run_process(
        [sys.executable, "-c", script], env=base_env, timeout_s=30, head_bytes=1000, tail_bytes=3000
    )
    assert result.stdout_bytes == len(data)
    assert result.stdout_head == data[:1000]
    assert result.stdout_tail == data[-3000:]
    assert result.stdout_sha256 == hashlib.sha256(data).hexdigest()
    assert not result.stdout_complete


def test_stderr_keeps_its_tail(base_env: dict[str, str]) -> None:
    script = "import sys; sys.stderr.write('x' * 100000 + 'THE REASON')"
    result = run_process([sys.executable, "-c", script], env=base_env, timeout_s=30, tail_bytes=50)
    assert result.stderr_bytes == 100010
    assert result.stderr_tail == b"x" * 40 + b"THE REASON"


def test_stdout_lines_stream_to_the_callback_cut_to_the_head_size(
    base_env: dict[str, str],
) -> None:
    lines: list[bytes] = []
    result = run_process(
        ["printf", "one\n" + "x" * 50 + "\nthree"],
        env=base_env,
        timeout_s=10,
        head_bytes=10,
        on_stdout_line=lines.append,
    )
    assert lines == [b"one", b"x" * 10, b"three"]
    assert result.stdout_bytes == 4 + 51 + 5


def test_a_failing_callback_still_kills_and_reaps_the_child(base_env: dict[str, str]) -> None:
    def explode(line: bytes) -> None:
        raise RuntimeError(line.decode())

    with pytest.raises(RuntimeError, match="boom"):
        run_process(
            ["sh", "-c", "echo boom; sleep 30"],
            env=base_env,
            timeout_s=30,
            on_stdout_line=explode,
        )
    assert zombie_children() == []


def test_stdin_is_written_while_the_child_writes_a_lot(
    bin_dir: Path, base_env: dict[str, str]
) -> None:
    stdin = b"z" * (8 << 20)  # far beyond a 64 KiB pipe buffer
    result = run_process(
        [str(bin_dir / "chatty_reader.py"), str(8 << 20)],
        stdin=stdin,
        env=base_env,
        timeout_s=30,
    )
    assert not result.timed_out
    assert result.exit_code == 0
    assert result.stdout_bytes == 8 << 20
    assert result.stderr_tail == f"read {8 << 20} bytes of stdin\n".encode()


def test_cat_echoes_a_large_stdin_without_deadlock(base_env: dict[str, str]) -> None:
    stdin = bytes(range(256)) * 40000
    result = run_process(["cat"], stdin=stdin, env=base_env, timeout_s=30)
    assert result.exit_code == 0
    assert result.stdout_sha256 == hashlib.sha256(stdin).hexdigest()


def test_a_child_that_does_not_read_stdin_is_fine(base_env: dict[str, str]) -> None:
    result = run_process(["true"], stdin=b"q" * (4 << 20), env=base_env, timeout_s=10)
    assert result.exit_code == 0


def test_stdin_is_closed_after_writing_and_empty_without_input(base_env: dict[str, str]) -> None:
    assert run_process(["cat"], stdin=b"", env=base_env, timeout_s=10).stdout_bytes == 0
    assert run_process(["cat"], env=base_env, timeout_s=10).stdout_bytes == 0


def test_runs_leak_neither_file_descriptors_nor_zombies(
    bin_dir: Path, base_env: dict[str, str]
) -> None:
    before = open_fds()
    for argv in (["true"], ["definitely-not-installed-xyz"], [str(bin_dir / "exit127.sh")]):
        run_process(argv, stdin=b"x", env=base_env, timeout_s=10)
    run_process(["sleep", "30"], env=base_env, timeout_s=0.2)
    assert open_fds() == before
    assert zombie_children() == []


def test_the_injected_clock_measures_the_duration(base_env: dict[str, str]) -> None:
    ticks = iter(float(n) for n in range(1_000_000))
    result = run_process(["true"], env=base_env, timeout_s=1e9, clock=lambda: next(ticks))
    assert result.duration_s >= 1.0
    assert not result.timed_out


@pytest.mark.parametrize(
    ("argv", "timeout_s"),
    [pytest.param([], 1.0, id="empty argv"), pytest.param(["true"], 0.0, id="zero timeout")],
)
def test_nonsense_arguments_are_refused(
    base_env: dict[str, str], argv: list[str], timeout_s: float
) -> None:
    with pytest.raises(ValueError, match=r"argv|timeout_s"):
        run_process(argv, env=base_env, timeout_s=timeout_s)


MEASURE = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from governor.exec.process import run_process

    def status(field):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])

    # reset the peak (VmHWM) to the current RSS, so the peak below is the capture's own
    Path("/proc/self/clear_refs").write_text("5")
    before = status("VmRSS")
    result = run_process(["head", "-c", "1G", "/dev/zero"], env={"PATH": sys.argv[1]},
                         timeout_s=120)
    print(json.dumps({"before_kib": before, "peak_kib": status("VmHWM"),
                      "bytes": result.stdout_bytes, "sha256": result.stdout_sha256,
                      "exit_code": result.exit_code, "duration_s": result.duration_s}))
    """
)
ZEROS_1GIB_SHA256 = "49bc20df15e412a64472421e13fe86ff1c5165e18b2afccf160d4dc19fe68a14"


@pytest.mark.slow
def test_a_gibibyte_of_output_keeps_memory_bounded(base_env: dict[str, str]) -> None:
    # measured in a fresh interpreter whose peak RSS is reset just before the capture
    completed = subprocess.run(
        [sys.executable, "-c", MEASURE, base_env["PATH"]],
        capture_output=True,
        check=True,
        timeout=300,
    )
    report = json.loads(completed.stdout)
    growth_mib = (report["peak_kib"] - report["before_kib"]) / 1024
    print(
        f"1 GiB capture: RSS {report['before_kib'] / 1024:.1f} MiB before, peak "
        f"{report['peak_kib'] / 1024:.1f} MiB during (growth {growth_mib:.1f} MiB), "
        f"{report['duration_s']:.2f} s"
    )
    assert report["exit_code"] == 0
    assert report["bytes"] == 1 << 30
    assert report["sha256"] == ZEROS_1GIB_SHA256
    assert growth_mib < 100
