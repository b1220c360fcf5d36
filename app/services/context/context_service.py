"""ContextService: assembles a prompt kind's sections, in priority order, under a token budget."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from cairn.errors import CairnError, ConfigError, UnknownPromptError
from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.kinds import PromptKind
from cairn.services.context.adjacent_memory import AdjacentMemoryBuilder
from cairn.services.context.builders import ContextBuilder, ContextRequest, Section
from cairn.services.context.location_memory import LocationMemoryBuilder
from cairn.services.context.map_builders import (
    CurrentLocationBuilder,
    MermaidMapBuilder,
    NearbyMapBuilder,
)
from cairn.services.context.narrative_memory import (
    NarrativeLocationMemoryBuilder,
    NpcMemoryBuilder,
    WorldMemoryBuilder,
)
from cairn.services.context.room_builders import LastTurnBuilder, NearMapBuilder, RoomNowBuilder
from cairn.services.context.tokens import estimate_from_counts
from cairn.services.context.top_notes import TopNotesBuilder
from cairn.services.context.turn_builders import ExtraSectionBuilder
from cairn.services.map import MapGraph

log = logging.getLogger(__name__)

LESSONS_HERE = "Lessons here"
LESSONS_NEXT_DOOR = "Lessons next door"
OTHER_LESSONS = "Other important lessons"
ROUTE = "Route from earlier games (the knowledge base)"
"""The adventurer's titles of its memory sections and of the knowledge base's route."""

MEMORY_SECTIONS = frozenset(
    [
        "location_memory",
        "adjacent_memory",
        "recent_location_memory",
        "npc_memory",
        "world_memory",
        "top_notes",
        "route",
    ]
)
"""The sections that show memories (left out of the baseline's prompts)."""

PROMPT_KINDS: tuple[str, ...] = tuple(PromptKind)
"""The prompt kinds ``default_builders`` wires."""


class AssembledPrompt(BaseModel):
    """A prompt's context text plus what it cost per section and what was left out, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_kind: str
    budget_tokens: int
    text: str
    sections: list[tuple[str, int]]
    """(name, tokens) of each section kept, in the order it appears in ``text``."""
    total_tokens: int
    """``estimate_tokens(text)``: the section texts plus their ``## title`` lines."""
    dropped: list[tuple[str, int, str]]
    """(name, tokens, reason) of each section built but left out (or whose builder failed)."""
    over_budget: bool = False
    """True when even the most important section alone exceeds the budget (it is kept)."""
    memory_ids: dict[str, tuple[str, ...]] = {}
    """Per kept section, the ids of the memories it shows (what the model is told)."""

    def explain(self) -> str:
        """One line per kept and dropped section with its token cost, then the total."""
        lines = [f"{self.prompt_kind} prompt context, budget {self.budget_tokens} tokens:"]
        lines += [f"  kept    {name:<24} {tokens:>5}" for name, tokens in self.sections]
        lines += [f"  dropped {name:<24} {tokens:>5}  {why}" for name, tokens, why in self.dropped]
        flag = "  OVER BUDGET" if self.over_budget else ""
        lines.append(f"  total   {'':<24} {self.total_tokens:>5}{flag}")
        return "\n".join(lines)


def render_sections(sections: Sequence[Section]) -> str:
    """Sections as ``## {title}\\n{text}`` blocks joined by blank lines."""
    return "\n\n".join(s.render() for s in sections)


class ContextService:
    """Builds the sections registered for a prompt kind and fits them into a token budget.

    Builders run in registration order; one that `skips_shown` is told the memories the
    sections built before it show, and leaves them out (a memory is printed once). Sections
    are admitted most important first (lowest ``priority``, then registration order).
    One that would take the total over the budget is dropped and reported; a less important one
    that still fits after it is kept. The most important section is never dropped: when it alone
    is over the budget it is kept and ``over_budget`` is set.
    """

    def __init__(
        self,
        builders_by_prompt: Mapping[str, Sequence[ContextBuilder]],
        budget_tokens: int = 2000,
        budgets: Mapping[str, int] | None = None,
    ) -> None:
        _check_budget(budget_tokens)
        for budget in (budgets or {}).values():
            _check_budget(budget)
        self._budgets = dict(budgets or {})
        """Budgets of single prompt kinds (the objective prompt's is 12K by default)."""
        for kind, builders in builders_by_prompt.items():
            names = [b.name for b in builders]
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise ConfigError(f"prompt {kind!r}: duplicate section names {duplicates}")
        self._builders = {kind: list(b) for kind, b in builders_by_prompt.items()}
        self.budget_tokens = budget_tokens

    def assemble(
        self, prompt_kind: str, request: ContextRequest, budget_tokens: int | None = None
    ) -> AssembledPrompt:
        """Build, order and budget the sections of ``prompt_kind`` for ``request``.

        Raises UnknownPromptError when no builders are registered for ``prompt_kind``.
        """
        budget = (
            self._budgets.get(prompt_kind, self.budget_tokens)
            if budget_tokens is None
            else budget_tokens
        )
        _check_budget(budget)
        builders = self._builders.get(prompt_kind)
        if builders is None:
            raise UnknownPromptError(
                f"unknown prompt kind {prompt_kind!r}; known: {', '.join(self._builders)}"
            )
        dropped: list[tuple[str, int, str]] = []
        built: list[Section] = []
        shown: set[str] = set()  # the memories the sections built so far show
        for builder in builders:
            asked = request
            if shown and getattr(builder, "skips_shown", False):
                asked = request.model_copy(update={"shown_memory_ids": frozenset(shown)})
            try:
                section = builder.build(asked)
            except CairnError as exc:
                log.warning("context section %s failed: %s", builder.name, exc)
                dropped.append((builder.name, 0, f"builder failed: {type(exc).__name__}: {exc}"))
                continue
            if section is not None:
                built.append(section)
                shown.update(section.memory_ids)
        ordered = sorted(built, key=lambda s: s.priority)  # stable: ties keep registration order
        kept: list[Section] = []
        chars = words = 0  # of the kept sections rendered: blank lines join them, so both add
        for section in ordered:
            more_chars, more_words = section.rendered_counts()
            more_chars += 2 if kept else 0  # the blank line before it
            total = estimate_from_counts(chars + more_chars, words + more_words)
            if not kept or total <= budget:
                kept.append(section)
                chars, words = chars + more_chars, words + more_words
            else:
                dropped.append((section.name, section.tokens, f"over budget ({total} > {budget})"))
        text = render_sections(kept)
        total_tokens = estimate_from_counts(chars, words)
        over = total_tokens > budget
        if over:
            log.warning(
                "%s prompt: section %s alone is %d tokens, over the %d budget",
                prompt_kind,
                kept[0].name,
                total_tokens,
                budget,
            )
        return AssembledPrompt(
            prompt_kind=prompt_kind,
            budget_tokens=budget,
            text=text,
            sections=[(s.name, s.tokens) for s in kept],
            total_tokens=total_tokens,
            dropped=dropped,
            over_budget=over,
            memory_ids={s.name: s.memory_ids for s in kept if s.memory_ids},
        )


def _check_budget(budget_tokens: int) -> None:
    if budget_tokens < 1:
        raise ConfigError(f"budget_tokens: must be at least 1, got {budget_tokens}")


def default_builders(
    memory: IMemoryReader,
    *,
    max_successes_shown: int = 5,
    max_failures_shown: int = 12,
    max_other_shown: int = 3,
    location_memory_max_tokens: int = 500,
    narrative_entries_per_scope: int = 3,
    adjacent_rooms: int = 5,
    adjacent_per_room: int = 3,
    top_notes: int = 5,
    recent_actions: int = 6,
    extra_section_max_tokens: int | None = 600,
    map_graph: MapGraph | None = None,
    map_moves: int = 3,
    knowledge_max_tokens: int = 5000,
    route_max_tokens: int = 300,
    with_memory: bool = True,
) -> dict[str, list[ContextBuilder]]:
    """The standard builders of the "adventurer", "narrative" and "objective" prompts.

    The adventurer's last-turn section shows `recent_actions` turns (the last in full with its
    reasoning, one line for each before it).

    Keyword names match CairnSettings fields where one exists, so a container can pass
    ``settings.max_successes_shown`` and friends straight through.
    """

    def location(title: str | None = None) -> LocationMemoryBuilder:
        # the adventurer's (titled) names no room: its room section does
        return LocationMemoryBuilder(
            memory,
            max_successes=max_successes_shown,
            max_failures=max_failures_shown,
            max_other=max_other_shown,
            max_tokens=location_memory_max_tokens,
            priority=10,
            title=title,
            named=title is None,
        )

    def adjacent(priority: int, title: str | None = None) -> AdjacentMemoryBuilder:
        return AdjacentMemoryBuilder(
            memory,
            max_rooms=adjacent_rooms,
            per_room=adjacent_per_room,
            priority=priority,
            title=title,
        )

    def extra(name: str, priority: int) -> ExtraSectionBuilder:
        return ExtraSectionBuilder(name, priority=priority, max_tokens=extra_section_max_tokens)

    n = narrative_entries_per_scope
    # the adventurer's: each thing once, read in this order (`agents/prompt_order.py`): the
    # room now, the last turn, the lessons here and next door (then the other most important
    # ones, those already shown left out), the map near the player, the route earlier games
    # found; budget priorities say what a tight budget keeps first
    adventurer: list[ContextBuilder] = [
        RoomNowBuilder(map_graph, priority=1),
        LastTurnBuilder(earlier=max(0, recent_actions - 1), priority=5),
        location(LESSONS_HERE),
        adjacent(40, LESSONS_NEXT_DOOR),
        TopNotesBuilder(memory, limit=top_notes, priority=50, title=OTHER_LESSONS),
        ExtraSectionBuilder("route", title=ROUTE, priority=55, max_tokens=route_max_tokens),
    ]
    if map_graph is not None:
        adventurer.insert(-1, NearMapBuilder(map_graph, moves=min(map_moves, 2), priority=45))
    narrative: list[ContextBuilder] = [
        NarrativeLocationMemoryBuilder(memory, last_n=n, priority=10),
        NpcMemoryBuilder(memory, last_n=n, priority=20),
        WorldMemoryBuilder(memory, last_n=n, priority=30),
    ]
    # the objective prompt: the whole knowledge base (up to its own budget), current and
    # adjacent memories only, and the map compressed around the player rather than cut
    objective: list[ContextBuilder] = [
        location(),
        adjacent(20),
        extra("objectives", 30),
        ExtraSectionBuilder("knowledge", priority=50, max_tokens=knowledge_max_tokens),
    ]
    if map_graph is not None:
        objective[:0] = [CurrentLocationBuilder(map_graph, memory, priority=5)]
        objective.append(NearbyMapBuilder(map_graph, moves=map_moves, priority=40))
        objective.append(MermaidMapBuilder(map_graph, moves=map_moves, priority=45))
    else:
        objective.append(extra("map", 40))
    if not with_memory:  # the baseline: the same prompts without any memory section
        kinds = {
            PromptKind.ADVENTURER: adventurer,
            PromptKind.NARRATIVE: narrative,
            PromptKind.OBJECTIVE: objective,
        }
        return {
            kind: [b for b in builders if b.name not in MEMORY_SECTIONS]
            for kind, builders in kinds.items()
        }
    return {
        PromptKind.ADVENTURER: adventurer,
        PromptKind.NARRATIVE: narrative,
        PromptKind.OBJECTIVE: objective,
    }
