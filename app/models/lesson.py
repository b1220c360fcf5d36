"""A lesson's typed fields: what a memory claims about the game, and how that is known.

A memory of an action (a score, a way, a change, a death, a refusal) carries a `Lesson`
beside its prose. The prose in Memories.md is rendered from these fields (`render`), never
parsed back: the offline player, the objectives and every other reader take the fields.

Each claim says how it is known (`Evidence`):

- `tested`: cairn asked the game. From the state before the action, a second interpreter
  played the action without the item (or without the step, or with a harmless command in
  place of the fatal one) and the game answered as the claim says.
- `observed`: seen once in play and not tested (the game could not be asked: no second
  interpreter, a state no longer kept, an action the game does not repeat the same way).
- `claimed`: a model said so and the game could not be asked.

A refuted claim is never written. See docs/lessons.md for the schema as users read it.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Evidence(StrEnum):
    """How a claim is known (see the module docstring)."""

    TESTED = "tested"
    OBSERVED = "observed"
    CLAIMED = "claimed"


class EffectKind(StrEnum):
    """What an action did."""

    SCORED = "scored"
    MOVED = "moved"
    CHANGED = "changed"
    DIED = "died"
    WON = "won"
    LOST = "lost"
    """Points lost (`points`: how many): harm short of a death."""
    REFUSED = "refused"


class Effect(BaseModel):
    """What the action did: scored `points`, moved to `room_id` (`room` its name), changed
    the world, died, won, lost `points`, or was refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: EffectKind
    points: int | None = None
    room_id: int | None = None
    room: str | None = None


class DeathBy(StrEnum):
    """What a death is blamed on."""

    ACTION = "action"
    """The command killed: a harmless command in its place kept the player alive."""
    EVENT = "event"
    """The world killed: the player dies whatever is sent (a harmless command too)."""
    UNKNOWN = "unknown"
    """Not tested, or the test could not tell."""


class DeathCause(BaseModel):
    """Why a death happened: `by` the command `action`, by an event, or unknown."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    by: DeathBy = DeathBy.UNKNOWN
    action: str | None = None
    reason: str | None = None
    """The cause class in a word or two (darkness, combat, a fall, thirst...)."""


class Lesson(BaseModel):
    """The typed claims of one memory (see the module docstring). `episode` and `turn` name
    the turn whose `action` it describes; `evidence` says how the claims were known (the
    weakest of them, `tested` only when every claim was)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: str
    effect: Effect
    needs_held: list[str] = Field(default_factory=list)
    steps_first: list[str] = Field(default_factory=list)
    death_cause: DeathCause | None = None
    fatal_too: list[str] = Field(default_factory=list)
    """For a fatal move: the other ways of making it that the game confirmed kill too
    (`climb down` beside `down`), so one death teaches them all."""
    evidence: Evidence = Evidence.OBSERVED
    episode: int | None = None
    turn: int | None = None


class TurnTests(BaseModel):
    """What the game answered when asked about one turn (`cairn.lessons.tester`), before any
    lesson of it is written. `reproduced`: the action, sent again from the state before it on
    a second interpreter, did the same (else nothing below was asked). Items and steps are
    listed by what their absence did: `needed` / `steps_needed` undid the effect without
    them; `not_needed` / `steps_not_needed` changed nothing; an item that could not be put
    down, or a step not kept, is in neither. `death_by`: what a harmless command in place of
    the fatal one did (None: not a death, or not asked)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reproduced: bool
    needed: list[str] = Field(default_factory=list)
    not_needed: list[str] = Field(default_factory=list)
    steps_needed: list[str] = Field(default_factory=list)
    steps_not_needed: list[str] = Field(default_factory=list)
    death_by: DeathBy | None = None
    harm_by: DeathBy | None = None
    """For points lost: what a harmless command in place of the action did (`event`: the
    points went anyway; `action`: they did not)."""

    def item_tested(self, item: str) -> bool:
        """Whether `item` was tested (needed or not)."""
        return item in self.needed or item in self.not_needed

    def step_tested(self, step: str) -> bool:
        """Whether `step` was tested (needed or not)."""
        return step in self.steps_needed or step in self.steps_not_needed


def render(text: str, lesson: Lesson | None) -> str:
    """`text` with the lesson's preconditions written after it: "Needs held: lamp." and
    "Steps first: (1) open window." (with "(untested)" when they were not tested). The prose
    is for people and models; no reader parses it back."""
    if lesson is None:
        return text
    parts = [text.rstrip()]
    mark = "" if lesson.evidence is Evidence.TESTED else f" ({lesson.evidence.value}, untested)"
    if lesson.needs_held:
        parts.append(f"Needs held: {', '.join(lesson.needs_held)}{mark}.")
    if lesson.steps_first:
        numbered = ", ".join(f"({i}) {s}" for i, s in enumerate(lesson.steps_first, 1))
        parts.append(f"Steps first: {numbered}{mark}.")
    if lesson.fatal_too:
        parts.append(f"Fatal here too: {', '.join(repr(c) for c in lesson.fatal_too)}.")
    return " ".join(p for p in parts if p)
