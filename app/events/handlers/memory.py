"""Memory handler: memories written as given (`cairn.Memory`, `cairn memories import`)."""

from __future__ import annotations

from cairn.events.commands import AddMemory, ForgetMemory, ImportMemories, UpdateMemory
from cairn.interfaces.memory_service import IMemoryEditor
from cairn.models.memory import MemoryEntry


class MemoryHandler:
    """AddMemory, UpdateMemory, ForgetMemory, ImportMemories -> IMemoryEditor, inside the
    command's unit of work (the bus's), so a caller already in a command joins it."""

    def __init__(self, editor: IMemoryEditor) -> None:
        self._editor = editor

    def add_memory(self, command: AddMemory) -> MemoryEntry:
        """Store the memory; returns it as staged (`memory_recorded` follows the commit)."""
        return self._editor.add_memory(command.entry)

    def update_memory(self, command: UpdateMemory) -> MemoryEntry:
        """Change the given fields; returns the memory's new version."""
        return self._editor.update_memory(
            command.memory_id,
            text=command.text,
            title=command.title,
            importance=command.importance,
            category=command.category,
            tags=command.tags,
            persistence=command.persistence,
        )

    def forget_memory(self, command: ForgetMemory) -> None:
        """Invalidate the memory (`memory_superseded` follows the commit)."""
        self._editor.forget_memory(command.memory_id)

    def import_memories(self, command: ImportMemories) -> list[str]:
        """Load the export into the empty store; returns the warnings (filled at commit)."""
        return self._editor.import_memories(command.records, command.entries)
