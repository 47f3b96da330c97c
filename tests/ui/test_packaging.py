"""The view's assets ship in the wheel: ``governor ui`` works from an install, not only a checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ("ui.css", "ui.js", "favicon.svg")


def test_the_wheel_holds_the_style_sheet_the_script_and_the_icon(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("governor-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for asset in ASSETS:
        assert f"governor/ui/static/{asset}" in names
        packaged = zipfile.ZipFile(wheel).read(f"governor/ui/static/{asset}")
        assert packaged == (ROOT / "governor" / "ui" / "static" / asset).read_bytes()
    assert "governor/py.typed" in names  # the API is typed for its users (docs/api.md)
    # the price table that prices codex's and custom agents' usage (SPEC §13.5)
    prices = "governor/exec/prices.toml"
    assert zipfile.ZipFile(wheel).read(prices) == (ROOT / prices).read_bytes()
