"""One scenario's replay as reported: its checks, or the error that stopped it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cairn.replay.expectations import CheckResult, ReplayOutcome


@dataclass
class ReplayReport:
    """One scenario's replay: its checks (or the error that stopped it) and where it ran."""

    name: str
    path: Path | None
    kind: str
    workdir: Path | None
    checks: list[CheckResult] = field(default_factory=list)
    error: str | None = None
    steps: int = 0
    seconds: float = 0.0
    memories: int = 0
    visited: int = 0
    remembered: int = 0
    outcome: ReplayOutcome | None = None
    """What the replay left behind (memories, final game state, prompts); None on an error."""
    unknown_location_turns: int = 0
    """Turns where the game could not say where the player was (filed under the last room)."""

    @property
    def passed(self) -> bool:
        """No error and every check passed."""
        return self.error is None and all(check.passed for check in self.checks)

    @property
    def failures(self) -> list[CheckResult]:
        """The checks that failed."""
        return [check for check in self.checks if not check.passed]

    def render(self) -> str:
        """A header line, the workdir, then a PASS/FAIL line per check (or the error)."""
        verdict = "PASS" if self.passed else "FAIL"
        where = f" ({self.path})" if self.path is not None else ""
        if self.error is not None:
            return "\n".join(
                [f"FAIL {self.name}{where}"]
                + [f"  ERROR {line}" for line in self.error.splitlines()]
            )
        lines = [
            f"{verdict} {self.name}{where}: {self.kind}, {self.steps} steps, "
            f"{self.memories} memories, {self.remembered}/{self.visited} visited locations "
            f"remembered, {self.seconds:.2f} s"
            + (
                f", {self.unknown_location_turns} turns with no location reported"
                if self.unknown_location_turns
                else ""
            )
        ]
        if self.workdir is not None:
            lines.append(f"  workdir: {self.workdir}")
        lines += [check.render(str(self.path) if self.path else "") for check in self.checks]
        if self.checks:
            failed = len(self.failures)
            lines.append(f"  {len(self.checks) - failed} passed, {failed} failed")
        return "\n".join(lines)
