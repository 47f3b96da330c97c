"""What ``governor store check`` reports: a ``Finding`` per difference, and the
``CheckTally`` of what it looked at (values only: the store contract names them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

RESTORE: Final = "restore the store from a backup or an export (a check never changes events)"


@dataclass(frozen=True, slots=True)
class Finding:
    """One difference a check found, and what ``--repair`` does (or did) about it."""

    table: str
    key: str
    detail: str
    fix: str | None
    """What a repair does (``rebuilt from its events``, ``dropped``); None: nothing can."""
    repaired: bool = False

    @property
    def line(self) -> str:
        """The finding as the one line ``governor store check`` prints."""
        if self.fix is None:
            then = RESTORE
        elif self.repaired:
            then = f"repaired: {self.fix}"
        else:
            then = f"--repair: {self.fix}"
        return f"{self.table} row {self.key}: {self.detail}; {then}"


@dataclass
class CheckTally:
    """What a check has looked at so far (for the progress line and the summary line)."""

    goals: int = 0
    events: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    """Rows of the other tables checked, by table."""
    expected_goals: int = 0
    """Summary rows when the check began: about how many goals it will walk."""
    findings: int = 0
    repaired: int = 0
    busy: int = 0
    """Goals a runner wrote during every walk of them: not compared this time."""
    mendable: int = 0
    """Findings a repair would mend (not repaired in this check)."""

    def add(self, finding: Finding) -> Finding:
        self.findings += 1
        self.repaired += finding.repaired
        self.mendable += finding.fix is not None and not finding.repaired
        return finding
