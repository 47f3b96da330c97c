"""``governor demo``: a goal driven end to end on the embedded defaults."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from governor.cli.exit_codes import STATUS_CODES, ExitCode
from governor.cli.io import out, progress
from governor.core.decision import Decision
from governor.demo import SCENARIOS, run_demo
from governor.errors import InputError
from governor.render.text import format_status


def cmd_demo(args: argparse.Namespace) -> int:
    def show(goal_id: str, decision: Decision) -> None:
        out("\n" + format_status(goal_id, "", decision))

    folder = Path(args.dir).resolve() if args.dir else None
    if folder is not None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise InputError(f"--dir {args.dir}: is a file, not a folder; name a folder") from None
        except OSError as exc:
            raise InputError(f"--dir {args.dir}: cannot make the folder: {exc.strerror}") from None
    result = run_demo(args.scenario, out, progress, show, folder=folder)
    if args.keep or args.dir:
        out(
            f"\nthe demo's store and files are in {result.folder} "
            f"(try: governor --store {result.folder / 'governor.db'} replay …)"
        )
    else:
        shutil.rmtree(result.folder, ignore_errors=True)
    return STATUS_CODES.get(result.decision.status, ExitCode.OK)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "demo",
        help="run the demo goal end to end (SQLite + the scripted harness, in a temp folder)",
    )
    p.add_argument("--scenario", choices=SCENARIOS, default="story")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    p.add_argument("--dir", metavar="FOLDER", help="run in this folder instead (kept)")
    p.set_defaults(func=cmd_demo)
