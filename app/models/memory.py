"""MemoryEntry and its enums, location records, synthesis decisions and parse problems."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import InitErrorDetails, PydanticCustomError

from cairn.models.lesson import Lesson

_ID_MIN, _ID_MAX = -(2**63), 2**63 - 1
"""What a store can keep of a location id (SQLite integers are 64-bit)."""
LocationId = Annotated[StrictInt, Field(ge=_ID_MIN, le=_ID_MAX)]
"""Jericho's integer location number. Strings, floats and bools are rejected, and so is a
number no store can keep (SQLite integers are 64-bit)."""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_TEXT_FIELDS = ("title", "text", "location_name", "quest_id", "encounter_id", "via")
"""The fields a lone surrogate is refused in (text no file can hold)."""


def _field_error(
    field: str, value: object, kind: str, message: str, context: dict[str, Any]
) -> ValidationError:
    """A validation error located at `field` (raised from a model validator, it keeps that
    location, also inside a list or another model)."""
    error = PydanticCustomError(kind, message, context)
    details = InitErrorDetails(type=error, loc=(field,), input=value)
    return ValidationError.from_exception_data("MemoryEntry", [details])


def new_memory_id() -> str:
    """Return a fresh, stable memory id."""
    return "m-" + uuid.uuid4().hex[:12]


def utc_now() -> datetime:
    """Return the current time, timezone-aware, in UTC, to the second: what every store keeps
    (Memories.md shows seconds), so a memory is stamped, and ranks among others stamped in the
    same second, the same whichever store holds it (and the markdown store need not copy it
    to drop the fraction at each write)."""
    return datetime.now(UTC).replace(microsecond=0)


class MemoryScope(StrEnum):
    """What a memory is about: a location, an NPC or the world."""

    LOCATION = "location"
    NPC = "npc"
    WORLD = "world"


class MemoryCategory(StrEnum):
    """The five memory categories."""

    SUCCESS = "SUCCESS"
    FAILURE = "FAILURE"
    DISCOVERY = "DISCOVERY"
    DANGER = "DANGER"
    NOTE = "NOTE"


class MemoryStatus(StrEnum):
    """Memory statuses: confirmed, awaiting confirmation, contradicted."""

    ACTIVE = "ACTIVE"
    TENTATIVE = "TENTATIVE"
    SUPERSEDED = "SUPERSEDED"


VISIBLE_STATUSES = frozenset({MemoryStatus.ACTIVE, MemoryStatus.TENTATIVE})
"""The statuses of memories that belong in prompts (SUPERSEDED ones stay on disk only)."""


CapKey = tuple[MemoryScope, str]
"""What a cap applies to: ("location", the room's id as text), ("npc", the first NPC id) or
("world", "")."""


def cap_key(scope: MemoryScope, location_id: int | None, npc_ids: Sequence[str]) -> CapKey:
    """The cap key of a memory with this scope, location id and NPC ids."""
    if scope is MemoryScope.LOCATION:
        return scope, str(location_id)
    if scope is MemoryScope.NPC:
        return scope, npc_ids[0] if npc_ids else ""
    return scope, ""


class Persistence(StrEnum):
    """How long a memory matters: core (or permanent) is never retired for being one memory too
    many in its place; ephemeral lasts the episode it was written in."""

    CORE = "core"
    PERMANENT = "permanent"
    EPHEMERAL = "ephemeral"


def persistence_level(value: str) -> str | None:
    """A level given by a person or a caller, as stored: one of `Persistence`'s, lower case,
    or None for "" (no level). ValueError naming the levels for anything else."""
    level = value.strip().lower()
    if not level:
        return None
    if level not in Persistence.__members__.values():
        known = ", ".join(p.value for p in Persistence)
        raise ValueError(f"{value!r} is not one of {known} ('' for none)")
    return level


class MemorySource(StrEnum):
    """What made a memory (typed, instead of telling by tags)."""

    ACTION = "action"
    """Synthesis of an action's outcome (the default)."""
    FAILURE = "failure"
    """The failure ledger: every command that failed on one object in one room."""
    MOVE = "move"
    """A new way into a room already seen (a map fact)."""
    ENDING = "ending"
    """How an episode ended (a win, a death)."""
    VISIT = "visit"
    """A summary of a visit to a location."""
    NPC = "npc"
    """A summary of an NPC's interactions."""
    WORLD = "world"
    """A story event (objective, quest, act...)."""
    NOTE = "note"
    """An agent's own note (`remember`)."""


_SOURCE_TAGS = {
    "note": MemorySource.NOTE,
    "session": MemorySource.VISIT,
    "npc-session": MemorySource.NPC,
    "ending": MemorySource.ENDING,
    "ending:won": MemorySource.ENDING,
}


_MOVE_TAG = re.compile(r"^move:(.+)->(-?\d+)$")


def source_of_tags(tags: list[str]) -> MemorySource | None:
    """The source older files told by tags (None: the tags say nothing)."""
    for tag in tags:
        if tag in _SOURCE_TAGS:
            return _SOURCE_TAGS[tag]
    if any(t.startswith("object:") for t in tags):
        return MemorySource.FAILURE
    if any(t.startswith("world:") for t in tags):
        return MemorySource.WORLD
    return None


class Ledger(BaseModel):
    """A failure ledger's fields: the commands that failed here on one thing, in the order
    they failed, and the game's last answer to one of them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    commands: list[str]
    answer: str = ""


class Way(BaseModel):
    """A move known to lead into a room: `command` taken at `source` (named `source_name`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str
    source: LocationId
    source_name: str = ""


class MemoryEntry(BaseModel):
    """One memory, in any scope. Location memories are keyed by integer location id."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str = Field(default_factory=new_memory_id, min_length=1)
    scope: MemoryScope
    category: MemoryCategory = MemoryCategory.NOTE
    status: MemoryStatus = MemoryStatus.ACTIVE
    persistence: str | None = None
    title: str
    """Not empty (checked in `_checked`: a length constraint would make pydantic-core read
    the string as UTF-8 first, and a lone surrogate would be refused without its place)."""
    text: str = ""
    importance: Annotated[int, Field(ge=1, le=1000)] = 500
    tags: list[str] = Field(default_factory=list)
    episode: Annotated[int, Field(ge=0)] | None = None
    turn_start: Annotated[int, Field(ge=0)] | None = None
    turn_end: Annotated[int, Field(ge=0)] | None = None
    score_delta: StrictInt | None = None
    location_id: LocationId | None = None
    location_name: str | None = None
    npc_ids: list[str] = Field(default_factory=list)
    quest_id: str | None = None
    encounter_id: str | None = None
    since_message_index: int | None = None
    since_timestamp: datetime | None = None
    created_at: datetime = Field(default_factory=utc_now)
    superseded_by: str | None = None
    source: MemorySource = MemorySource.ACTION
    via: str | None = None
    """For a move: the command that made it (`north`, `enter window`)."""
    leads_to: LocationId | None = None
    """For a move: the location it reached."""
    lesson: Lesson | None = None
    """What the memory claims about the game, typed, and how it is known (`models.lesson`):
    readers take these fields, never the prose."""
    ways_in: list[Way] = Field(default_factory=list)
    """For a room's lesson (a dark room): the moves known to lead in, which a player without
    a light keeps out of; its prose's "Ways in:" is rendered from them."""
    ledger: Ledger | None = None
    """For a failure ledger (source `failure`): its commands and the game's last answer, the
    fields its prose is rendered from."""

    @model_validator(mode="after")
    def _checked(self) -> MemoryEntry:
        """The checks and the one migration a memory needs beyond its fields' types, in one
        validator (each Python validator costs a call per memory read: thousands at a load).
        Raises a ValidationError located at the field it names."""
        if self.tags:
            self._read_older_tags()
        fields = self.__dict__
        if not fields["title"]:
            raise _field_error(
                "title", "", "string_too_short", "String should have at least 1 character", {}
            )
        for name in _TEXT_FIELDS:
            value = fields[name]
            if (
                value is not None
                and not value.isascii()  # (a flag of the string: most text needs no search)
                and (found := _LONE_SURROGATE.search(value)) is not None
            ):
                raise _field_error(
                    name,
                    value,
                    "lone_surrogate",
                    "holds a lone surrogate U+{code} at position {at}",
                    {"code": f"{ord(found.group()):04X}", "at": found.start()},
                )
        if self.scope is MemoryScope.LOCATION and self.location_id is None:
            raise ValueError("location_id: a location memory needs an integer location_id")
        if self.scope is MemoryScope.NPC and not self.npc_ids:
            raise ValueError("npc_ids: an NPC memory needs at least one npc id")
        if (
            self.turn_start is not None
            and self.turn_end is not None
            and self.turn_end < self.turn_start
        ):
            raise ValueError("turn_end: must not be before turn_start")
        return self

    def _read_older_tags(self) -> None:
        """Memories written before `source` existed told notes and summaries by tags, and
        older moves kept "move:<command>-><id>" in a tag: what they tell is taken when the
        memory does not give it (set in place: this runs while the memory is validated)."""
        given = self.__pydantic_fields_set__
        if "source" not in given and (source := source_of_tags(self.tags)) is not None:
            self.__dict__["source"] = source
            given.add("source")
        if "via" in given:
            return
        for tag in self.tags:
            found = _MOVE_TAG.match(tag)
            if found is None:
                continue
            leads_to = int(found.group(2))
            if not _ID_MIN <= leads_to <= _ID_MAX:
                raise _field_error(
                    "leads_to",
                    leads_to,
                    "location_id",
                    "the move tag '{tag}' names a location no store can keep",
                    {"tag": tag},
                )
            self.__dict__.update(via=found.group(1), leads_to=leads_to)
            given.update(("via", "leads_to"))
            return

    @property
    def visible(self) -> bool:
        """Whether the memory belongs in prompts (superseded ones stay on disk only)."""
        return self.status is not MemoryStatus.SUPERSEDED

    @property
    def meta(self) -> list[str]:
        """The header's metadata parts: ``["Ep1", "T23-24", "+5"]`` (only those known)."""
        parts: list[str] = []
        if self.episode is not None:
            parts.append(f"Ep{self.episode}")
        if self.turn_start is not None:
            end = self.turn_end
            span = f"-{end}" if end is not None and end != self.turn_start else ""
            parts.append(f"T{self.turn_start}{span}")
        if self.score_delta is not None:
            parts.append(f"{self.score_delta:+d}")
        return parts

    @property
    def place(self) -> str:
        """Where the memory is kept: "location 79", "npc bram" or "world"."""
        if self.scope is MemoryScope.LOCATION:
            return f"location {self.location_id}"
        if self.scope is MemoryScope.NPC:
            return f"npc {', '.join(self.npc_ids)}"
        return "world"


class LocationRecord(BaseModel):
    """What a store knows about a location besides its memories: name, visits, episodes."""

    model_config = ConfigDict(extra="forbid")

    id: LocationId
    name: str = ""
    visits: Annotated[int, Field(ge=0)] = 0
    episodes: list[int] = Field(default_factory=list)


class ParseProblem(BaseModel):
    """A block of a memory file that did not parse; it is kept verbatim on the next write."""

    model_config = ConfigDict(frozen=True)

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class SynthesisDecision(BaseModel):
    """The synthesis JSON: whether and what to remember about a turn."""

    # (the docstring is the schema's description the model is sent: a change changes every
    # recorded request.) Built when first used: commands that only read memories never do.
    model_config = ConfigDict(extra="ignore", defer_build=True)

    should_remember: bool
    category: MemoryCategory = MemoryCategory.NOTE
    memory_title: str = ""
    memory_text: str = ""
    status: MemoryStatus = MemoryStatus.ACTIVE
    persistence: Persistence | None = None
    supersedes_memory_ids: list[str] = Field(default_factory=list)
    invalidate_memory_ids: list[str] = Field(default_factory=list)
    importance: Annotated[int, Field(ge=1, le=1000)] = 500
    multi_step: bool = False
    needs_held: list[str] = Field(default_factory=list)
    steps_first: list[str] = Field(default_factory=list)
    reasoning: str = ""
    supersedes_memory_titles: SkipJsonSchema[list[str]] = Field(default_factory=list)
    """Older answers named memories by title: still read, no longer offered (ids are)."""
    invalidate_memory_titles: SkipJsonSchema[list[str]] = Field(default_factory=list)

    @field_validator("persistence", mode="before")
    @classmethod
    def _level(cls, value: object) -> object:
        """A level in any case; none given as "", "none" or "null" is none."""
        if isinstance(value, str):
            value = value.strip().lower()
            return None if value in ("", "none", "null") else value
        return value
