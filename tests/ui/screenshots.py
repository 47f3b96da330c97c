"""Take the README's screenshots of ``governor ui`` with the browser the tests use.

    .venv/bin/python -m tests.ui.screenshots docs/img

Builds the test fleet (a goal in every status, made by real runs) in a temporary folder,
serves it with the real ``governor ui``, and saves the list and two goal pages as PNG.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.ui.fleet import build
from tests.ui.serve import chromium, missing_browser, start_ui

SHOTS = (
    ("ui-goals.png", "", 1400, True),
    ("ui-goal.png", "goals/g-succeeded", 1400, True),
    ("ui-decision.png", "goals/g-blocked-decision", 1400, True),
)


def main(out: Path) -> int:
    reason = missing_browser()
    if reason:
        print(f"error: {reason}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="governor-ui-") as folder:
        fleet = build(Path(folder))
        fleet.store.close()
        server = start_ui("--store", str(fleet.db), "--page-size", "20", "--refresh-s", "0")
        try:
            with chromium() as browser:
                page = browser.new_page()
                for name, path, width, full in SHOTS:
                    page.set_viewport_size({"width": width, "height": 820})
                    page.goto(server.at("/" + path))
                    page.screenshot(path=str(out / name), full_page=full)
                    print(f"wrote {out / name}")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img")))
