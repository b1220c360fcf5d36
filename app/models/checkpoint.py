"""MemoryCheckpoint: what a saved game carries of memory; RestoreReport: what a restore did."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, StrictInt

UNDONE_TAG = "undone"
"""The tag of a memory a restore took out of the live view (SUPERSEDED, no successor): it was
recorded after the checkpoint the game went back to. The archive step moves it, as any
SUPERSEDED memory, to the archive; nothing deletes it."""


class CheckpointCursors(BaseModel):
    """The three per-scope message cursors of `ScenarioInstance`, as they were."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    last_world_message_index: int = -1
    last_location_message_index: dict[int, int] = Field(default_factory=dict)
    last_npc_message_index: dict[str, int] = Field(default_factory=dict)


class MemoryCheckpoint(BaseModel):
    """The memories and cursors of one moment, by reference: a saved `GameState` carries it
    (`GameState.memory_checkpoint`), and a restore (`RestoreGame`) makes the store's live view
    that moment's again.

    "Recorded after the checkpoint" is told by ids, not by time: `visible` holds the id of
    every memory in the live view (ACTIVE or TENTATIVE) when it was taken. After a restore the
    live view is exactly those memories: any other visible one leaves it, any of them that
    left it (superseded, invalidated, retired, archived) comes back. A time mark would not be
    exact: Memories.md keeps times to the second, so a memory written in the checkpoint's
    second is on both sides of it, and a memory's `created_at` is the writer's clock. A store
    sequence is not kept by every store (Memories.md has none). Ids are kept exactly by all
    four, at the price of a list as long as the live view (about 16 bytes a memory in JSON).
    Memories that were already SUPERSEDED need no mark: the restore leaves them hidden.

    The cursors are copied because memories recorded after the checkpoint are undone by the
    restore: the messages they summarized must be summarized again, so each cursor goes back
    to where it stood, whatever the loaded `GameState` holds (an engine may save after more
    commands than the checkpoint saw).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    taken_at: datetime
    """The memory service's clock when it was taken (shown, never compared)."""
    episode: StrictInt
    turn: StrictInt
    messages: StrictInt = Field(ge=0)
    """How many messages the conversation history held: messages at or after this index are
    later than the checkpoint (for the memory service's own record of what it read)."""
    visible: list[str] = Field(default_factory=list)
    """The ids of the memories in the live view (ACTIVE or TENTATIVE), in store order."""
    tentative: list[str] = Field(default_factory=list)
    """Those of `visible` that were TENTATIVE (one brought back returns as it was)."""
    cursors: CheckpointCursors = Field(default_factory=CheckpointCursors)
    episode_started: datetime | None = None
    """When the memory service started the checkpoint's episode (ephemeral memories written
    before it are over); None: unknown, the service keeps its own."""


class RestoreReport(BaseModel):
    """What a restore changed in the store (ids), staged in the command's unit of work."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    undone: list[str] = Field(default_factory=list)
    """Visible memories the checkpoint did not have: now SUPERSEDED, tagged `undone`."""
    revived: list[str] = Field(default_factory=list)
    """Memories of the checkpoint's live view that had left it: visible again."""
    from_archive: list[str] = Field(default_factory=list)
    """Those of `revived` that were in the archive (added back to the live store)."""
    lost: list[str] = Field(default_factory=list)
    """Memories of the checkpoint that neither the store nor its archive holds any more (a
    store without an archive whose pruning removed them, or one deleted by hand)."""
