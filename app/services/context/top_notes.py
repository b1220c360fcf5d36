"""The "Most Important Memories" section, with every word the game does not know on one line."""

from __future__ import annotations

import re
from functools import lru_cache

from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.memory import MemoryEntry
from cairn.services.context.builders import ContextRequest, Section, SectionBuilder, one_line
from cairn.services.context.ranking import is_visit_summary
from cairn.services.list_memo import ListMemo

_UNKNOWN_NOTE = re.compile(r"does not know the word '([\w-]+)'")
"""An agent note that the game does not know a word (folded into one line)."""


@lru_cache(maxsize=4096)
def _unknown_word(text: str) -> str | None:
    """The word an agent note says the game does not know (kept per text)."""
    found = _UNKNOWN_NOTE.search(text)
    return found.group(1) if found else None


class TopNotesBuilder(SectionBuilder):
    """The N most important memories of any scope: ``- [importance] title: text``, the text
    clipped between words at ``max_chars``; those an earlier section shows (the room's, its
    neighbours') are left out, not repeated (`skips_shown`)."""

    default_name = "top_notes"
    default_title = "Most Important Memories"
    default_priority = 50
    skips_shown = True

    def __init__(
        self,
        memory: IMemoryReader,
        *,
        limit: int = 5,
        max_chars: int = 240,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._memory = memory
        self._words: ListMemo[list[tuple[MemoryEntry, str]]] = ListMemo(kept=4)
        """The unknown-word notes among the world memories, by list (`ListMemo`)."""
        self.limit = limit
        self.max_chars = max_chars

    def build(self, request: ContextRequest) -> Section | None:
        if self.limit <= 0:
            return None
        world = self._memory.world_memories()
        found, kept = self._words.get(world)
        if found and kept is not None:
            words = kept
        else:
            words = [(e, word) for e in world if (word := _unknown_word(e.text))]
            self._words.put(world, words)
        folded = {e.id for e, _ in words} | request.shown_memory_ids
        top = [
            e
            for e in self._memory.top_memories(limit=self.limit * 3 + len(folded))
            if e.visible and not is_visit_summary(e) and e.id not in folded
        ][: self.limit]
        lines = []
        for e in top:
            text = one_line(e.text, self.max_chars)
            title = one_line(e.title)
            lines.append(f"- [{e.importance}] {title}: {text}".removesuffix(": "))
        if words:
            # one line for every word the game said it does not know, however many there are
            unknown = ", ".join(f"'{w}'" for w in dict.fromkeys(w for _, w in words))
            lines.append(f"- Words the game does not know: {unknown}")
        shown = [*(e.id for e in top), *(e.id for e, _ in words)]
        return self.section("\n".join(lines), shown) if lines else None
