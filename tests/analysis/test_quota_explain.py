"""``explain`` and ``replay`` of a goal stopped because its account's usage window reopens
further away than ``max_quota_wait_s`` (SPEC §13.2, rule fleet.6), through the real command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from governor.core import record_work
from governor.core.observation import Window
from governor.core.wire.codec import encode
from tests.story import ABSENT, Story

GOVERNOR = shutil.which("governor", path=str(Path(sys.executable).parent)) or "governor"


def history(tmp_path: Path, **policy: Any) -> Path:
    s = Story(**policy)
    s.plan("a")
    s.start("p1-a")
    run_id = s.view.work["p1-a"].run_id
    assert run_id is not None
    s.tick().add(
        record_work.finish_attempt(
            s.view,
            work_id="p1-a",
            run_id=run_id,
            at=s.now,
            outcome="failed",
            failure_class="upstream",
            evidence=ABSENT,
            error="usage_limit_reached",
            window=Window("acct-a", s.now + timedelta(hours=5)),
        )
    )
    path = tmp_path / "goal.jsonl"
    path.write_bytes(b"".join(encode(e) + b"\n" for e in s.events))
    return path


def governor(*args: str) -> str:
    done = subprocess.run(
        [GOVERNOR, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_explain_names_the_reset_and_the_way_on_never_a_budget(tmp_path: Path) -> None:
    text = governor("explain", str(history(tmp_path, max_quota_wait_s=3600)))
    assert "blocked/none [on environment]" in text
    assert "rule fleet.6" in text
    assert "the usage window of account acct-a is spent until" in text
    advice = text[text.index("advice:") :]
    assert "no budget buys back the vendor's usage window" in advice
    assert "`governor work retry g p1-a" in advice
    assert "governor raise" not in advice


def test_a_history_recorded_without_the_limit_waits_instead(tmp_path: Path) -> None:
    text = governor("explain", str(history(tmp_path, max_quota_wait_s=None)))
    assert "fleet.6" not in text
    assert "[on environment]" not in text
