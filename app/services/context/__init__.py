"""Prompt context: named, token-costed sections from memory builders, fitted to a budget."""

from cairn.services.context.adjacent_memory import AdjacentMemoryBuilder
from cairn.services.context.builders import (
    ContextBuilder,
    ContextRequest,
    Section,
    SectionBuilder,
)
from cairn.services.context.context_service import (
    PROMPT_KINDS,
    AssembledPrompt,
    ContextService,
    default_builders,
    render_sections,
)
from cairn.services.context.location_memory import FIRST_VISIT, LocationMemoryBuilder
from cairn.services.context.narrative_memory import (
    NarrativeLocationMemoryBuilder,
    NpcMemoryBuilder,
    WorldMemoryBuilder,
)
from cairn.services.context.tokens import estimate_tokens
from cairn.services.context.top_notes import TopNotesBuilder
from cairn.services.context.turn_builders import (
    ExtraSectionBuilder,
    RecentActionsBuilder,
    RecentReasoningBuilder,
)

__all__ = [
    "FIRST_VISIT",
    "PROMPT_KINDS",
    "AdjacentMemoryBuilder",
    "AssembledPrompt",
    "ContextBuilder",
    "ContextRequest",
    "ContextService",
    "ExtraSectionBuilder",
    "LocationMemoryBuilder",
    "NarrativeLocationMemoryBuilder",
    "NpcMemoryBuilder",
    "RecentActionsBuilder",
    "RecentReasoningBuilder",
    "Section",
    "SectionBuilder",
    "TopNotesBuilder",
    "WorldMemoryBuilder",
    "default_builders",
    "estimate_tokens",
    "render_sections",
]
