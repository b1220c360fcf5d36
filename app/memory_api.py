"""Memory: a small add/search/get/list/update/forget API over a container's bus and store."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from cairn.errors import CheckpointError, InvalidMemoryError
from cairn.events.bus import MessageBus
from cairn.events.commands import AddMemory, ForgetMemory, RestoreGame, SaveGame, UpdateMemory
from cairn.interfaces.clock import IClock
from cairn.interfaces.memory_service import IMemoryService
from cairn.interfaces.store import IMemoryStore, IStoreReader
from cairn.models.checkpoint import MemoryCheckpoint, RestoreReport
from cairn.models.game import GameState
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    Persistence,
    persistence_level,
)
from cairn.services.memory_core import VISIBLE
from cairn.services.search_index import SearchHit, SearchIndex
from cairn.services.similarity import short_title
from cairn.settings import load_settings

if TYPE_CHECKING:
    from cairn.container import Container

__all__ = ["Memory", "SearchHit"]


_ARGUMENT_OF_FIELD = {"npc_ids": "npc_id"}
"""A MemoryEntry field -> the API argument that sets it, where their names differ."""


def _scope(scope: MemoryScope | str | None, method: str = "Memory.list") -> MemoryScope | None:
    if scope is None:
        return None
    try:
        return MemoryScope(scope.lower() if isinstance(scope, str) else scope)
    except ValueError:
        known = ", ".join(s.value for s in MemoryScope)
        raise InvalidMemoryError(f"{method}: scope: {scope!r} is not one of {known}") from None


def _category(category: MemoryCategory | str, method: str) -> MemoryCategory:
    try:
        return MemoryCategory(category.upper() if isinstance(category, str) else category)
    except ValueError:
        known = ", ".join(c.value for c in MemoryCategory)
        raise InvalidMemoryError(
            f"{method}: category: {category!r} is not one of {known}"
        ) from None


def _source(source: MemorySource | str, method: str) -> MemorySource:
    try:
        return MemorySource(source)
    except ValueError:
        known = ", ".join(s.value for s in MemorySource)
        raise InvalidMemoryError(f"{method}: source: {source!r} is not one of {known}") from None


def _level(persistence: str, method: str) -> str | None:
    """The persistence level as stored (None for ""); InvalidMemoryError for an unknown one."""
    try:
        return persistence_level(persistence)
    except (ValueError, AttributeError):
        raise InvalidMemoryError(
            f"{method}: persistence: {persistence!r} is not one of"
            f" {', '.join(p.value for p in Persistence)} ('' for none)"
        ) from None


def _invalid(method: str, exc: ValidationError) -> InvalidMemoryError:
    """InvalidMemoryError naming the method and the argument pydantic refused."""
    first = exc.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else "?"
    argument = _ARGUMENT_OF_FIELD.get(field, field)
    return InvalidMemoryError(f"{method}: {argument}: {first['msg']}")


def _validated(method: str, fields: dict[str, Any]) -> MemoryEntry:
    """A MemoryEntry of `fields`; InvalidMemoryError naming the argument pydantic refused."""
    try:
        return MemoryEntry.model_validate(fields)
    except ValidationError as exc:
        raise _invalid(method, exc) from None


def _tags(tags: Iterable[str]) -> list[str]:
    return [tags] if isinstance(tags, str) else list(tags)


class Memory:
    """Memories as a plain API, through the same door as play: every change is a command on
    the container's bus (`AddMemory`, `UpdateMemory`, `ForgetMemory`; `SaveGame` and
    `RestoreGame` for `checkpoint` and `restore`), handled by the memory service in one unit
    of work; called inside a bus command (or `bus.unit()`, or an open store unit) it joins
    that unit of work. `add` announces `memory_recorded` and `forget`
    announces `memory_superseded` after commit, sent by the memory service as every memory
    event is. Reads (get, list, search) read the store; searches are ranked by BM25 (see
    `cairn.services.search_index`). Invalid arguments (an empty text, an importance outside
    1..1000, an unknown category or scope) raise InvalidMemoryError (a CairnError and a
    ValueError) naming the method and the argument; an unknown id raises MemoryNotFoundError.
    """

    def __init__(self, container: Container, *, owns_store: bool = False) -> None:
        self._container = container
        self._store: IMemoryStore = container.store()
        self._reader: IStoreReader = self._store
        """Where `get`, `list` and `search` read (writes go through the bus)."""
        self._clock: IClock = container.clock()
        self._index = SearchIndex(self._store)
        self._owns_store = owns_store

    @classmethod
    def open(cls, workdir: str | Path, *, store: str = "markdown", **overrides: Any) -> Memory:
        """Open the memories of `workdir` (its Memories.md, or memories.sqlite3 with
        `store="sqlite"`) with an offline container; `close()` releases the store."""
        from cairn.container import build_container

        settings = load_settings(
            **{"llm": "offline", **overrides, "workdir": Path(workdir), "store": store}
        )
        return cls(build_container(settings), owns_store=True)

    @property
    def store(self) -> IMemoryStore:
        """The store the memories live in."""
        return self._store

    @property
    def service(self) -> IMemoryService:
        """The container's memory service (built on first use), over the same store."""
        service: IMemoryService = self._container.memory_service()
        return service

    @property
    def _bus(self) -> MessageBus:
        """The container's bus, built at the first change (reading needs none of it)."""
        bus: MessageBus = self._container.bus()
        return bus

    # -- writing ---------------------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        title: str | None = None,
        category: MemoryCategory | str = MemoryCategory.NOTE,
        scope: MemoryScope | str | None = None,
        location_id: int | None = None,
        location_name: str | None = None,
        npc_id: str | None = None,
        importance: int = 500,
        tags: Iterable[str] = (),
        source: MemorySource | str = MemorySource.NOTE,
        persistence: Persistence | str | None = None,
    ) -> MemoryEntry:
        """Store a new memory and return it as stored.

        The scope, unless given, follows the keys: `location_id` makes a location memory,
        `npc_id` an NPC memory, neither a world memory. The title defaults to the first words
        of the text; a location's name defaults to the one the store already knows (the
        service fills it in, inside the unit of work). `persistence` is its level: `core` or
        `permanent` (never retired by the caps on memories per place), `ephemeral` (out of
        prompts and searches from the next episode on), or none.
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidMemoryError(f"Memory.add: text: must be a non-empty string, got {text!r}")
        text = text.strip()
        title = (title or "").strip() or short_title(text)
        resolved = _scope(scope, "Memory.add") or (
            MemoryScope.LOCATION
            if location_id is not None
            else MemoryScope.NPC
            if npc_id
            else MemoryScope.WORLD
        )
        if location_id is not None and not location_name:
            location_name = None  # named by the service as the store knows the place
        entry = _validated(
            "Memory.add",
            {
                "id": self._clock.new_id(title),
                "created_at": self._clock.now(),
                "scope": resolved,
                "category": _category(category, "Memory.add"),
                "title": title,
                "text": text,
                "importance": importance,
                "tags": _tags(tags),
                "location_id": location_id,
                "location_name": location_name,
                "npc_ids": [npc_id] if npc_id else [],
                "source": _source(source, "Memory.add"),
                "persistence": None if persistence is None else _level(persistence, "Memory.add"),
            },
        )
        staged: MemoryEntry = self._bus.handle(AddMemory(entry))
        return self._as_stored(staged)

    def update(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        title: str | None = None,
        importance: int | None = None,
        category: MemoryCategory | str | None = None,
        tags: Iterable[str] | None = None,
        persistence: Persistence | str | None = None,
    ) -> MemoryEntry:
        """Change the given fields of a memory (the others stay); return the stored version.
        `persistence=""` takes its level away."""
        if persistence is not None:
            persistence = _level(persistence, "Memory.update") or ""
        command = UpdateMemory(
            memory_id,
            text=None if text is None else text.strip(),
            title=None if title is None else title.strip(),
            importance=importance,
            category=None if category is None else _category(category, "Memory.update"),
            tags=None if tags is None else tuple(_tags(tags)),
            persistence=persistence,
        )
        try:
            updated: MemoryEntry = self._bus.handle(command)
        except ValidationError as exc:  # the merged memory would be invalid: nothing staged
            raise _invalid("Memory.update", exc) from None
        return self._as_stored(updated)

    def forget(self, memory_id: str) -> None:
        """Invalidate a memory: it becomes SUPERSEDED with no successor, never deleted.

        It stays readable with `get` and in `list(include_superseded=True)`; forgetting a
        memory that is already SUPERSEDED changes nothing (its successor link is kept).
        """
        self._bus.handle(ForgetMemory(memory_id))

    # -- saving and loading a game ----------------------------------------------------------

    def checkpoint(self, game_state: GameState) -> MemoryCheckpoint:
        """Take a checkpoint of the memories and cursors into `game_state.memory_checkpoint`
        and return it (`SaveGame` on the bus): save the game state after this, and the save
        carries it. Call it between commands: inside an enclosing unit of work it is taken
        when that unit commits, and this raises CheckpointError."""
        self._bus.handle(SaveGame(game_state))
        taken = game_state.memory_checkpoint
        if taken is None:
            raise CheckpointError(
                "Memory.checkpoint inside a unit of work: the checkpoint is taken when it"
                " commits (read game_state.memory_checkpoint then)"
            )
        return taken

    def restore(
        self, game_state: GameState, checkpoint: MemoryCheckpoint | None = None
    ) -> RestoreReport:
        """A saved game was loaded: memory goes back to `checkpoint` (default: the one the
        loaded `game_state` carries) through `RestoreGame` on the bus. Memories recorded after
        it leave the live view (SUPERSEDED, tagged `undone`, kept), the ones it had come
        back, the cursors are its own; returns what changed. CheckpointError without one."""
        report: RestoreReport = self._bus.handle(RestoreGame(game_state, checkpoint))
        return report

    # -- reading ---------------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryEntry | None:
        """The memory with this id (whatever its status), or None."""
        return self._reader.get(memory_id)

    def list(
        self,
        *,
        scope: MemoryScope | str | None = None,
        location_id: int | None = None,
        npc_id: str | None = None,
        include_superseded: bool = False,
    ) -> builtins.list[MemoryEntry]:
        """Memories matching every given filter, in store order (visible ones unless asked)."""
        return self._reader.entries(
            scope=_scope(scope, "Memory.list"),
            location_id=location_id,
            npc_id=npc_id,
            statuses=None if include_superseded else VISIBLE,
        )

    def search(
        self,
        query: str,
        *,
        k: int = 5,
        scope: MemoryScope | str | None = None,
        location_id: int | None = None,
        npc_id: str | None = None,
        include_superseded: bool = False,
    ) -> builtins.list[SearchHit]:
        """The `k` memories most relevant to `query`, best first, ranked by BM25.

        The query is plain words (search syntax in it is taken literally); an empty query
        finds nothing. Changes made by other store objects or processes are seen.
        """
        return self._index.search(
            query,
            k=k,
            scope=_scope(scope, "Memory.search"),
            location_id=location_id,
            npc_id=npc_id,
            include_superseded=include_superseded,
        )

    # -- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Drop the search index; close the store too when `open` made it."""
        self._index.close()
        if self._owns_store:
            self._reader.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _as_stored(self, entry: MemoryEntry) -> MemoryEntry:
        """The entry as the store keeps it once committed (Memories.md keeps times to the
        second); the entry itself while an outer unit of work has not committed yet."""
        stored = self._reader.get(entry.id)
        return stored if stored is not None and stored.id == entry.id else entry
