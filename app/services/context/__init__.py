"""Prompt context: named, token-costed sections from memory builders, fitted to a budget."""

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
from cairn.services.context.memory_builders import (
    FIRST_VISIT,
    AdjacentMemoryBuilder,
    LocationMemoryBuilder,
    NarrativeLocationMemoryBuilder,
    NpcMemoryBuilder,
    TopNotesBuilder,
    WorldMemoryBuilder,
)
from cairn.services.context.tokens import estimate_tokens
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
