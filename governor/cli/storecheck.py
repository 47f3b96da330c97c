"""``governor store check``: verify the store (every stream's checksum chain and seq, every
summary against its events, every other row) and, with ``--repair``, mend what is derived.

Read commands trust the summaries (docs/store.md); this is how an operator verifies them.
"""

from __future__ import annotations

import argparse
import sys

from governor.cli.exit_codes import ExitCode
from governor.cli.io import err, json_line, out, store_from
from governor.cli.live import is_terminal, screen
from governor.render.checks import finding_record, format_progress, format_tally, tally_record
from governor.store.findings import CheckTally


def cmd_store_check(args: argparse.Namespace) -> int:
    tally = CheckTally()

    def now() -> str:
        return format_progress(tally)

    # progress on stderr: a live row on a terminal, else a plain line after 30 s of silence
    with (
        store_from(args.store, read_only=not args.repair) as store,
        screen(lambda: [now()], now) as shown,
    ):
        both_on_a_terminal = is_terminal(sys.stdout) and is_terminal(sys.stderr)
        for finding in store.check(repair=args.repair, tally=tally):
            if args.json:
                json_line(finding_record(finding))
            elif both_on_a_terminal:
                shown.line(finding.line)  # above the live row, not through it
            else:
                out(finding.line)
    if args.json:
        json_line(tally_record(tally))
    else:
        out(format_tally(tally))
    left = tally.findings - tally.repaired
    if left:
        what = "difference" if left == 1 else "differences"
        hint = (
            f"; `governor store check --repair` mends {tally.mendable:,}" if tally.mendable else ""
        )
        err(f"error: the store has {left:,} {what} (listed above){hint}")
        return ExitCode.STORE_ERROR
    return ExitCode.OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    store = sub.add_parser(
        "store", help="verify the store: checksums, seqs, summaries against events (--repair)"
    )
    verbs = store.add_subparsers(dest="store_command", required=True, metavar="VERB")
    p = verbs.add_parser(
        "check",
        help="check every stream, summary and row; exit 7 when anything differs",
    )
    p.add_argument(
        "--repair",
        action="store_true",
        help="rebuild summaries from their events, release damaged leases, drop damaged "
        "health, registry and agent rows (events are never changed)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per finding, then a tally")
    p.set_defaults(func=cmd_store_check)
