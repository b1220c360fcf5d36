"""Context building blocks: the request, sections, the builder protocol and formatting helpers."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from cairn.models.game import GameState, TurnOutcome
from cairn.models.memory import LocationId, MemoryEntry, MemoryStatus
from cairn.services.context.tokens import estimate_tokens, word_count

_WHITESPACE = re.compile(r"\s+")


class ContextRequest(BaseModel):
    """What a prompt is being built for: the game state, where the player is, who is there."""

    model_config = ConfigDict(extra="forbid")

    game_state: GameState
    location_id: LocationId | None = None
    location_name: str = ""
    npc_ids_present: list[str] = Field(default_factory=list)
    recent_turns: list[TurnOutcome] = Field(default_factory=list)
    extra_sections: dict[str, str] = Field(default_factory=dict)
    game_text: str = ""
    """What the game said last (after the last turn, or its opening before the first)."""
    room_text: str = ""
    """The game's own words for the room now (its `look`), "" when not known."""
    things: list[str] = Field(default_factory=list)
    """The things the game lists in the room now, in its words."""
    shown_memory_ids: frozenset[str] = frozenset()
    """The memories the prompt's earlier sections show (given by the ContextService to a
    builder that `skips_shown`, so no memory is printed twice)."""

    @classmethod
    def from_game_state(
        cls,
        game_state: GameState,
        *,
        recent_turns: Sequence[TurnOutcome] = (),
        extra_sections: dict[str, str] | None = None,
    ) -> ContextRequest:
        """Build a request for the player's current location and the NPCs standing in it."""
        loc_id = game_state.scenario.current_location_id
        loc = game_state.current_location
        present = (
            sorted(i for i, npc in game_state.npcs.items() if npc.current_location_id == loc_id)
            if loc_id is not None
            else []
        )
        return cls(
            game_state=game_state,
            location_id=loc_id,
            location_name=loc.name if loc else "",
            npc_ids_present=present,
            recent_turns=list(recent_turns),
            extra_sections=dict(extra_sections or {}),
        )


class Section(BaseModel):
    """One named piece of a prompt with its token estimate; lower priority number = keep first."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    title: str
    text: str
    tokens: int = Field(ge=0)
    priority: int
    memory_ids: tuple[str, ...] = ()
    """The memories this section shows: the structured form of what the model reads."""

    @classmethod
    def of(
        cls, name: str, title: str, text: str, priority: int, memory_ids: Sequence[str] = ()
    ) -> Section:
        """Make a section whose ``tokens`` is ``estimate_tokens(text)``."""
        return cls(
            name=name,
            title=title,
            text=text,
            tokens=estimate_tokens(text),
            priority=priority,
            memory_ids=tuple(memory_ids),
        )

    def render(self) -> str:
        """The section as it appears in a prompt: a ``## title`` line, then the text."""
        return f"## {self.title}\n{self.text}"

    def rendered_counts(self) -> tuple[int, int]:
        """(characters, words) of `render()`, added from its parts without rendering: "## "
        and a newline around the title, "##" one more word."""
        chars = 4 + len(self.title) + len(self.text)
        return chars, 1 + word_count(self.title) + word_count(self.text)


@runtime_checkable
class ContextBuilder(Protocol):
    """Anything that turns a request into one prompt section, or None when it has nothing."""

    @property
    def name(self) -> str:
        """Stable section name, unique within a prompt kind."""
        ...

    @property
    def priority(self) -> int:
        """Lower numbers are more important and are dropped last under a token budget."""
        ...

    def build(self, request: ContextRequest) -> Section | None:
        """Return the section for this request, or None when there is nothing to say."""
        ...


class SectionBuilder(ABC):
    """Base of the standard builders: a name, a title and a priority, overridable per instance."""

    default_name: str = ""
    default_title: str = ""
    default_priority: int = 100
    skips_shown: bool = False
    """Whether the builder leaves out the memories the sections built before it show (it is
    then given their ids in `ContextRequest.shown_memory_ids`)."""

    def __init__(self, *, priority: int | None = None, title: str | None = None) -> None:
        self.name = self.default_name
        self.title = self.default_title if title is None else title
        self.priority = self.default_priority if priority is None else priority

    def section(self, text: str, memory_ids: Sequence[str] = ()) -> Section:
        """Wrap ``text`` in this builder's section, with its token estimate and the ids of the
        memories it shows."""
        return Section.of(self.name, self.title, text, self.priority, memory_ids)

    @abstractmethod
    def build(self, request: ContextRequest) -> Section | None:
        """Return the section for this request, or None when there is nothing to say."""


@lru_cache(maxsize=8192)
def one_line(text: str, max_chars: int | None = None) -> str:
    """Collapse all whitespace (newlines included) to single spaces; clip to ``max_chars``
    between words (`clip_words`).

    Stored text never adds structure to a prompt: a memory reading ``\\n## Fake`` stays inline.
    Kept per text: every prompt shows mostly the memories the last one showed.
    """
    flat = _WHITESPACE.sub(" ", text).strip()
    return flat if max_chars is None else clip_words(flat, max_chars)


def clip_words(text: str, max_chars: int) -> str:
    """`text` when it fits in ``max_chars``, else its start cut between two words (never
    inside one, unless its first word alone is too long) and ``...``."""
    if len(text) <= max_chars:
        return text
    room = max(0, max_chars - 3)
    cut = text[:room]
    inside = cut[-1:].strip() and not text[room].isspace()  # the cut splits a word
    if inside and " " in cut.strip():
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-") + "..."


def entry_meta(entry: MemoryEntry) -> str:
    """Metadata such as ``(Ep1, T45, +5)`` or ``(Ep1, T23-24)``; "" when none is known."""
    parts = entry.meta
    return f"({', '.join(parts)})" if parts else ""


def entry_heading(entry: MemoryEntry) -> str:
    """``[CATEGORY] Title (meta)``; tentative memories read ``[CATEGORY - TENTATIVE]``."""
    tag = entry.category.value
    if entry.status is MemoryStatus.TENTATIVE:
        tag += " - TENTATIVE"
    meta = entry_meta(entry)
    heading = f"[{tag}] {one_line(entry.title)}"
    return f"{heading} {meta}" if meta else heading


def entry_block(entry: MemoryEntry) -> str:
    """The heading line, then the memory text on one line (the retrieved-context layout)."""
    text = one_line(entry.text)
    return f"{entry_heading(entry)}\n{text}" if text else entry_heading(entry)


def dated_bullet(entry: MemoryEntry, max_chars: int | None = None) -> str:
    """A narrative bullet: ``- {created_at:%Y-%m-%d} {text}`` (the title when there is no text).

    A tentative memory gets ``(tentative)`` before its text.
    """
    summary = one_line(entry.text or entry.title, max_chars)
    mark = "(tentative) " if entry.status is MemoryStatus.TENTATIVE else ""
    return f"- {entry.created_at:%Y-%m-%d} {mark}{summary}"
