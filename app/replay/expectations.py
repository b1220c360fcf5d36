"""Scenario expectations: the models, and the checks that say pass or fail with a readable diff.

Memories (scope, location or NPC id, category, status, title/text contains, tag, count), the
same of the archive's memories, cursors, counts, exact prompt files (a unified diff when they
differ; `--update-expected` rewrites them), `coverage_min` and `memory_locations_reported`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cairn.models.game import GameState
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemoryStatus
from cairn.replay.limits import ScenarioLocationId
from cairn.services.context.context_service import PROMPT_KINDS

LineOf = Callable[..., int]
"""Gives the scenario line of a field: `line_of("expect", "memories", 0)`."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CountRange(_Model):
    """How many: `3` (exactly), or `{min: 1}`, `{max: 2}`, `{min: 1, max: 3}`."""

    min: int = Field(0, ge=0)
    max: int | None = Field(None, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _exact(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return {"min": value, "max": value}
        return value

    def contains(self, count: int) -> bool:
        """Whether `count` is in the range."""
        return count >= self.min and (self.max is None or count <= self.max)

    def describe(self) -> str:
        """ "exactly 2", "at least 1", "at most 3" or "1 to 3"."""
        if self.max is None:
            return f"at least {self.min}"
        if self.max == self.min:
            return f"exactly {self.min}"
        return f"at most {self.max}" if self.min == 0 else f"{self.min} to {self.max}"


class MemoryExpectation(_Model):
    """Memories matching every given field; `count` of them (default: at least one).

    `status` defaults to `visible` (ACTIVE or TENTATIVE); `any` includes SUPERSEDED ones.
    `title_contains` and `text_contains` are case-insensitive.
    """

    scope: MemoryScope | None = None
    location: ScenarioLocationId | None = None
    npc: str | None = None
    category: MemoryCategory | None = None
    status: MemoryStatus | Literal["visible", "any"] = "visible"
    title_contains: str | None = None
    text_contains: str | None = None
    tag: str | None = None
    count: CountRange = Field(default_factory=lambda: CountRange(min=1))

    def describe(self) -> str:
        """The criteria in words: `location 79, SUCCESS, visible, text contains "x"`."""
        parts = [f"scope {self.scope.value}"] if self.scope else []
        parts += [f"location {self.location}"] if self.location is not None else []
        parts += [f"npc {self.npc}"] if self.npc else []
        parts += [self.category.value] if self.category else []
        parts.append(
            str(self.status.value if isinstance(self.status, MemoryStatus) else self.status)
        )
        parts += [f"title contains {self.title_contains!r}"] if self.title_contains else []
        parts += [f"text contains {self.text_contains!r}"] if self.text_contains else []
        parts += [f"tag {self.tag!r}"] if self.tag else []
        return ", ".join(parts)

    def mismatches(self, entry: MemoryEntry) -> list[str]:
        """What about `entry` differs from this expectation (empty: it matches)."""
        out: list[str] = []
        if self.scope is not None and entry.scope is not self.scope:
            out.append(f"scope is {entry.scope.value}")
        if self.location is not None and entry.location_id != self.location:
            out.append(f"location is {entry.location_id}")
        if self.npc is not None and self.npc not in entry.npc_ids:
            out.append(f"npcs are {entry.npc_ids}")
        if self.category is not None and entry.category is not self.category:
            out.append(f"category is {entry.category.value}")
        if not _status_matches(self.status, entry):
            out.append(f"status is {entry.status.value}")
        if self.title_contains and self.title_contains.lower() not in entry.title.lower():
            out.append(f"title lacks {self.title_contains!r}")
        if self.text_contains and self.text_contains.lower() not in entry.text.lower():
            out.append(f"text lacks {self.text_contains!r}")
        if self.tag is not None and self.tag not in entry.tags:
            out.append(f"tags are {entry.tags}")
        return out


class ArchiveExpectation(MemoryExpectation):
    """Memories of the store's archive (`store.archived()`) matching every given field;
    `status` defaults to `any` (the archive holds SUPERSEDED memories)."""

    status: MemoryStatus | Literal["visible", "any"] = "any"


def _status_matches(wanted: MemoryStatus | str, entry: MemoryEntry) -> bool:
    if wanted == "any":
        return True
    if wanted == "visible":
        return entry.visible
    return entry.status is wanted


class CursorExpectation(_Model):
    """The scenario cursors at the end: world, per location id, per NPC id."""

    world: int | None = None
    locations: dict[ScenarioLocationId, int] = Field(default_factory=dict)
    npcs: dict[str, int] = Field(default_factory=dict)


class CountExpectation(_Model):
    """Counts at the end: memories by scope (visible only), superseded, all, locations visited."""

    all: CountRange | None = None
    visible: CountRange | None = None
    location: CountRange | None = None
    npc: CountRange | None = None
    world: CountRange | None = None
    superseded: CountRange | None = None
    locations_visited: CountRange | None = None


class PromptExpectation(_Model):
    """The exact prompt text of `kind`, held in `file` (relative to the scenario).

    Assembled for the current location at the end, or right after the step whose `id` is `at`.
    """

    file: str = Field(min_length=1)
    kind: str = "narrative"
    at: str | None = None

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        if value not in PROMPT_KINDS:
            raise ValueError(f"unknown prompt kind {value!r}; known: {', '.join(PROMPT_KINDS)}")
        return value


class Expectations(_Model):
    """What must hold after the replay."""

    memories: list[MemoryExpectation] = Field(default_factory=list)
    archived: list[ArchiveExpectation] = Field(default_factory=list)
    """Memories the store moved to its archive (SUPERSEDED ones at an episode's end)."""
    cursors: CursorExpectation | None = None
    counts: CountExpectation | None = None
    prompts: list[PromptExpectation] = Field(default_factory=list)
    coverage_min: float | None = Field(None, ge=0, le=1)
    """Least share of visited locations holding at least one visible location memory."""
    memory_locations_reported: bool = False
    """Every memory's location id is an int and a location the game (or world) reported."""


# -- what a replay produced -------------------------------------------------------------------


@dataclass
class ReplayOutcome:
    """What the checks read: every stored memory, the final game state, places and prompts."""

    entries: list[MemoryEntry]
    """All memories in store order, SUPERSEDED ones included."""
    game_state: GameState
    visited: list[int]
    """Locations arrived at, first visit first."""
    reported: set[int]
    """Every location id the game reported (or the narrative world declared)."""
    prompts: dict[int, str] = field(default_factory=dict)
    """Prompt text by the index of its expectation in `expect.prompts`."""
    archived: list[MemoryEntry] = field(default_factory=list)
    """The store's archive (read only when an expectation names it)."""

    @property
    def visible(self) -> list[MemoryEntry]:
        """Memories that reach prompts."""
        return [e for e in self.entries if e.visible]

    def remembered_locations(self) -> set[int]:
        """Visited locations with at least one visible location memory."""
        held = {e.location_id for e in self.visible if e.scope is MemoryScope.LOCATION}
        return {loc for loc in self.visited if loc in held}


@dataclass
class CheckResult:
    """One expectation's verdict: a one-line summary, and details when there is more to say."""

    name: str
    passed: bool
    summary: str
    detail: str = ""
    line: int | None = None

    def render(self, where: str = "") -> str:
        """`PASS name (file:line): summary`, then the indented detail."""
        status = "PASS" if self.passed else "FAIL"
        place = f" ({where}:{self.line})" if where and self.line else ""
        lines = [f"  {status} {self.name}{place}: {self.summary}"]
        lines += [f"      {line}" for line in self.detail.splitlines()]
        return "\n".join(lines)


def evaluate(
    expect: Expectations,
    outcome: ReplayOutcome,
    *,
    line_of: LineOf,
    prompt_files: Sequence[Path],
    update_expected: bool = False,
) -> list[CheckResult]:
    """Every check of `expect` against `outcome`, in the order they are written.

    `prompt_files` are the expected prompt files, one per `expect.prompts` (resolved and
    checked to be inside the scenario's folder by `ScenarioDocument.prompt_paths`)."""
    results = [
        check_memory(exp, outcome.entries, f"memories[{i}]", line_of("expect", "memories", i))
        for i, exp in enumerate(expect.memories)
    ]
    results += [
        check_memory(exp, outcome.archived, f"archived[{i}]", line_of("expect", "archived", i))
        for i, exp in enumerate(expect.archived)
    ]
    if expect.cursors is not None:
        results += check_cursors(expect.cursors, outcome.game_state, line_of)
    if expect.counts is not None:
        results += check_counts(expect.counts, outcome, line_of)
    for i, path in enumerate(prompt_files):
        actual = outcome.prompts.get(i, "")
        line = line_of("expect", "prompts", i)
        results.append(check_prompt(f"prompts[{i}]", path, actual, update_expected, line))
    if expect.coverage_min is not None:
        line = line_of("expect", "coverage_min")
        results.append(check_coverage(expect.coverage_min, outcome, line))
    if expect.memory_locations_reported:
        line = line_of("expect", "memory_locations_reported")
        results.append(check_locations_reported(outcome, line))
    return results


# -- the checks -------------------------------------------------------------------------------


def describe_entry(entry: MemoryEntry, max_text: int = 100) -> str:
    """`[SUCCESS] Title (location 79, ACTIVE, id m-...): text` on one line."""
    where = entry.place
    text = " ".join(entry.text.split())
    text = text if len(text) <= max_text else text[: max_text - 3] + "..."
    return f"[{entry.category.value}] {entry.title} ({where}, {entry.status.value}): {text}"


def check_memory(
    exp: MemoryExpectation, entries: list[MemoryEntry], name: str, line: int | None = None
) -> CheckResult:
    """Count the memories matching `exp`; on failure show the closest ones and why they differ."""
    matching = [e for e in entries if not exp.mismatches(e)]
    single = exp.count.max == 1 or (exp.count.max is None and exp.count.min <= 1)
    noun = "memory" if single else "memories"
    wanted = f"{exp.count.describe()} {noun}: {exp.describe()}"
    summary = f"{wanted} (found {len(matching)})"
    if exp.count.contains(len(matching)):
        return CheckResult(name, True, summary, line=line)
    detail = [f"expected {wanted}", f"found {len(matching)} matching of {len(entries)} stored"]
    if matching:
        detail.append("matching:")
        detail += [f"  - {describe_entry(e)}" for e in matching[:5]]
    else:
        ranked = sorted(entries, key=lambda e: len(exp.mismatches(e)))
        detail.append("closest:" if ranked else "no memories were stored")
        for e in ranked[:3]:
            detail.append(f"  - {describe_entry(e)}")
            detail.append(f"    differs: {'; '.join(exp.mismatches(e))}")
    return CheckResult(name, False, summary, "\n".join(detail), line)


def check_cursors(exp: CursorExpectation, gs: GameState, line_of: LineOf) -> list[CheckResult]:
    """One check per expected cursor value."""
    scenario = gs.scenario
    results = []
    if exp.world is not None:
        results.append(
            _equal("cursors.world", exp.world, scenario.last_world_message_index, line_of)
        )
    for loc, want in exp.locations.items():
        got = scenario.last_location_message_index.get(loc)
        results.append(_equal(f"cursors.locations[{loc}]", want, got, line_of))
    for npc, want in exp.npcs.items():
        got = scenario.last_npc_message_index.get(npc)
        results.append(_equal(f"cursors.npcs.{npc}", want, got, line_of))
    return results


def _equal(name: str, want: int, got: int | None, line_of: LineOf) -> CheckResult:
    parts = name.replace("[", ".").replace("]", "").split(".")
    line = line_of("expect", *parts)
    if want == got:
        return CheckResult(name, True, f"== {want}", line=line)
    shown = "unset" if got is None else str(got)
    return CheckResult(name, False, f"expected {want}, got {shown}", line=line)


def check_counts(
    exp: CountExpectation, outcome: ReplayOutcome, line_of: LineOf
) -> list[CheckResult]:
    """One check per expected count."""
    visible = outcome.visible
    actual = {
        "all": len(outcome.entries),
        "visible": len(visible),
        "location": sum(e.scope is MemoryScope.LOCATION for e in visible),
        "npc": sum(e.scope is MemoryScope.NPC for e in visible),
        "world": sum(e.scope is MemoryScope.WORLD for e in visible),
        "superseded": sum(not e.visible for e in outcome.entries),
        "locations_visited": len(outcome.visited),
    }
    results = []
    for key, got in actual.items():
        want: CountRange | None = getattr(exp, key)
        if want is None:
            continue
        passed = want.contains(got)
        summary = f"{key}: expected {want.describe()}, got {got}"
        results.append(
            CheckResult(f"counts.{key}", passed, summary, line=line_of("expect", "counts", key))
        )
    return results


def check_prompt(
    name: str, path: Path, actual: str, update_expected: bool, line: int | None = None
) -> CheckResult:
    """Compare a prompt with its expected file (a trailing newline is ignored); with
    `update_expected` write the file instead when it is missing or differs."""
    try:
        expected = path.read_text(encoding="utf-8") if path.is_file() else None
        if expected is not None and expected.removesuffix("\n") == actual:
            return CheckResult(name, True, f"prompt matches {path}", line=line)
        if update_expected:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual + "\n", encoding="utf-8")
            verb = "written" if expected is None else "updated"
            return CheckResult(name, True, f"{verb} {path}", line=line)
    except (OSError, UnicodeDecodeError) as exc:
        return CheckResult(name, False, f"cannot use the prompt file {path}: {exc}", line=line)
    if expected is None:
        summary = f"missing expected prompt file {path} (run with --update-expected)"
        return CheckResult(name, False, summary, actual, line)
    diff = difflib.unified_diff(
        expected.removesuffix("\n").splitlines(),
        actual.splitlines(),
        fromfile=f"{path} (expected)",
        tofile="actual prompt",
        lineterm="",
    )
    return CheckResult(name, False, f"prompt differs from {path}", "\n".join(diff), line)


def check_coverage(minimum: float, outcome: ReplayOutcome, line: int | None = None) -> CheckResult:
    """Share of visited locations with a visible location memory, at least `minimum`."""
    visited = outcome.visited
    held = outcome.remembered_locations()
    share = len(held) / len(visited) if visited else 0.0
    summary = (
        f"{len(held)}/{len(visited)} visited locations have memories ({share:.0%}, "
        f"need {minimum:.0%})"
    )
    if share >= minimum and visited:
        return CheckResult("coverage_min", True, summary, line=line)
    missing = [loc for loc in visited if loc not in held]
    detail = f"without a memory: {missing}" if visited else "no location was visited"
    return CheckResult("coverage_min", False, summary, detail, line)


def check_locations_reported(outcome: ReplayOutcome, line: int | None = None) -> CheckResult:
    """Every memory's location id is an int and a location the game reported."""
    bad = [
        e
        for e in outcome.entries
        if e.location_id is not None
        and (type(e.location_id) is not int or e.location_id not in outcome.reported)
    ]
    keyed = sum(e.location_id is not None for e in outcome.entries)
    summary = f"{keyed - len(bad)}/{keyed} memory location ids are ints the game reported"
    if not bad:
        return CheckResult("memory_locations_reported", True, summary, line=line)
    detail = "\n".join(f"- {describe_entry(e)} [id {e.location_id!r}]" for e in bad[:10])
    return CheckResult("memory_locations_reported", False, summary, detail, line)
