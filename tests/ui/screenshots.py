"""Take the documentation's screenshots of ``governor ui`` with the browser the tests use.

    .venv/bin/python -m tests.ui.screenshots docs/img

Builds the test fleet (a goal in every status, made by real runs, and two vendors' health
records) in a temporary folder, serves it with the real ``governor ui --allow-actions``,
opens the token link once, and saves at 1400 x 900: the list (people first), a goal page
(its header, timeline and ledger) and a goal waiting on a decision with the form that
answers it. Times differ from run to run; nothing else does.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.ui.fleet import build
from tests.ui.serve import chromium, missing_browser, start_ui

SIZE = {"width": 1400, "height": 900}
SHOTS = (
    ("ui-goals.png", ""),
    ("ui-goal.png", "goals/g-succeeded"),
    ("ui-decision.png", "goals/g-blocked-decision"),
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
        server = start_ui(
            "--store", str(fleet.db), "--page-size", "20", "--refresh-s", "0",
            "--allow-actions", "--actor", "alice",
        )  # fmt: skip
        try:
            with chromium() as browser:
                page = browser.new_page()
                page.set_viewport_size(SIZE)
                page.goto(server.token_link)
                for name, path in SHOTS:
                    page.goto(server.at("/" + path))
                    for _ in range(100):  # a goal's advice may take a moment to work out
                        if not path or page.locator("#advice[data-ready=true]").count():
                            break
                        page.wait_for_timeout(100)
                        page.reload()
                    page.screenshot(path=str(out / name))
                    print(f"wrote {out / name}")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img")))
