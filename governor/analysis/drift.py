"""The drift report: where a CLI's own words said another class than its vendor's wire.

Rules (SPEC §13.1; docs/classification.md "The drift report"):
    * A failure classified from the wire records, when the CLI's text alone would have
      come to another class, ``evidence.disagreement`` (the text's class and rule, and the
      CLI as its requests named it). This reads every recorded failure of a store
      (``plan.failed``, a failed ``attempt.finished``) and counts them per CLI.
    * One line per CLI, as ``governor doctor`` prints it: "claude-cli/2.1.332 worded 3
      failures differently from what its vendor sent (the text said: charged 2,
      upstream 1)". A CLI that never disagreed is not listed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from governor.core.events import Event
from governor.store.base import EventStore

UNNAMED: Final = "an agent CLI (no version on the wire)"


@dataclass
class Drift:
    """How often one CLI's words disagreed with its vendor's wire."""

    cli: str
    failures: int = 0
    text_said: Counter[str] = field(default_factory=Counter)
    """The text's class (``charged`` for none) -> how many times."""
    wire_said: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        """The doctor's line for it."""
        noun = "failure" if self.failures == 1 else "failures"
        said = ", ".join(f"{what} {n}" for what, n in self.text_said.most_common())
        return (
            f"{self.cli} worded {self.failures} {noun} differently from what its vendor sent "
            f"(the text said: {said}; the wire won)"
        )

    def as_json(self) -> dict[str, object]:
        return {
            "cli": self.cli,
            "failures": self.failures,
            "text_said": dict(self.text_said),
            "wire_said": dict(self.wire_said),
        }


def drift(events: Iterable[Event]) -> dict[str, Drift]:
    """The disagreements recorded on ``events``, per CLI."""
    found: dict[str, Drift] = {}
    for event in events:
        evidence = getattr(event, "evidence", None)
        disagreement = getattr(evidence, "disagreement", None)
        if disagreement is None:
            continue
        cli = disagreement.cli or UNNAMED
        entry = found.setdefault(cli, Drift(cli))
        entry.failures += 1
        entry.text_said[disagreement.text_class or "charged"] += 1
        entry.wire_said[getattr(event, "failure_class", None) or "charged"] += 1
    return found


def store_drift(store: EventStore) -> list[Drift]:
    """Every disagreement recorded in ``store``, per CLI, the most frequent first."""
    total: dict[str, Drift] = {}
    for summary in store.goals():
        for cli, entry in drift(store.load(summary.goal_id)).items():
            into = total.setdefault(cli, Drift(cli))
            into.failures += entry.failures
            into.text_said.update(entry.text_said)
            into.wire_said.update(entry.wire_said)
    return sorted(total.values(), key=lambda d: (-d.failures, d.cli))
