"""``governor probe codex --json`` against the fake vendor: the class and evidence of each scenario."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import PLAN
from tests.fakevendor.server import FakeVendor

pytest_plugins = ["tests.vendor_conftest"]

GOVERNOR = shutil.which("governor", path=str(Path(sys.executable).parent)) or "governor"


def probe(env: dict[str, str], cwd: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = subprocess.run(
        [
            GOVERNOR,
            "probe",
            "codex",
            "--json",
            "--pass-env",
            "FAKE_VENDOR_API_KEY",
            "--timeout-s",
            "60",
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=90,
    )
    return result.returncode, json.loads(result.stdout)


SCENARIOS = {
    "a valid streamed reply": (sc.reply("Planned.\n" + json.dumps(PLAN)), True, None, None),
    "503 on the first request": (sc.status(503), False, "upstream", ("absent", "absent", "absent")),
    "429 on the first request": (sc.status(429), False, "upstream", ("absent", "absent", "absent")),
    "500 after a tool call ran": (
        sc.fail_after_tool_call(500),
        False,
        "upstream",
        ("observed", None, None),
    ),
    "a malformed stream": (sc.malformed(), False, None, ("unknown", "unknown", "unknown")),
}


@pytest.mark.parametrize(
    ("scenario", "ok", "cls", "evidence"), SCENARIOS.values(), ids=SCENARIOS.keys()
)
def test_probe_codex_json_prints_class_and_evidence(
    fake_vendor: FakeVendor,
    codex_source_env: dict[str, str],
    workdir: Path,
    scenario: sc.Scenario,
    ok: bool,
    cls: str | None,
    evidence: tuple[str | None, ...] | None,
) -> None:
    fake_vendor.play(scenario)
    code, result = probe(codex_source_env, workdir)
    assert (code == 0) is ok
    assert result["ok"] is ok
    assert result["class"] == cls
    if evidence is not None:
        observed = (
            result["evidence"]["effects"],
            result["evidence"]["output"],
            result["evidence"]["refusal"],
        )
        assert all(
            want is None or got == want for got, want in zip(observed, evidence, strict=True)
        ), observed
    if ok:
        assert json.loads(result["reply"].splitlines()[-1]) == PLAN


def test_probe_codex_without_the_binary_is_environment(
    codex_source_env: dict[str, str], workdir: Path
) -> None:
    code, result = probe({**codex_source_env, "PATH": "/nonexistent"}, workdir)
    assert code == 8
    assert (result["class"], result["evidence"]["source"], result["evidence"]["ref"]) == (
        "environment",
        "exec:spawn-errno",
        "ENOENT",
    )
