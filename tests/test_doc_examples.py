"""The docs' Python examples hold: the README's run as printed, and every ``governor``
import any page shows imports (a moved function once broke both unseen)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_every_python_example_of_the_readme_runs() -> None:
    blocks = BLOCK.findall((ROOT / "README.md").read_text())
    assert blocks, "the README shows the library in Python"
    for block in blocks:
        done = _python(block)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip(), "an example prints what it shows"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_governor_import_a_page_shows_imports(page: Path) -> None:
    imports = [
        line
        for block in BLOCK.findall(page.read_text())
        for line in block.splitlines()
        if line.startswith(("from governor", "import governor"))
    ]
    done = _python("\n".join(imports))
    assert done.returncode == 0, f"{page.name}: {done.stderr}"
