"""Checkpoints: what a saved game carries of memory, and going back to it (`RestoreGame`).

A checkpoint names the memories of the live view by id (`MemoryCheckpoint` says why ids, not
a time); a restore makes the store's live view exactly those again, in one unit of work, and
then puts back the cursors and the service's own record of what it has read, so that nothing
is summarized twice and nothing undone is summarized as if it had happened.

What a restore does not take back: a change made in place to a memory the checkpoint had (a
failure ledger that grew, an importance raised by a repeated note, a room renamed) stays, as
the store keeps one version of a memory (most changes supersede the old version by a new one,
and those are taken back); the map's connections and the visit counts stay, being what the
player saw of the world. A store shared by several games holds their memories together: a
restore undoes what any of them recorded after the checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable

from cairn.events import events
from cairn.models.checkpoint import UNDONE_TAG, CheckpointCursors, MemoryCheckpoint, RestoreReport
from cairn.models.game import GameState
from cairn.models.memory import MemoryEntry, MemoryStatus
from cairn.services.memory_core import VISIBLE, MemoryCore, log
from cairn.services.memory_rules import MessagesByLocation

_HIDING_TAGS = frozenset({UNDONE_TAG, "pruned"})
"""Tags that taking a memory out of the live view added (a restore's, pruning's retirement in
`policy.prune`): a memory brought back loses them."""


def checkpoint(core: MemoryCore, game_state: GameState) -> None:
    """Set `game_state.memory_checkpoint` once the unit of work in progress commits (at once
    outside one): a checkpoint taken while a unit has staged a memory but not yet moved its
    cursor (cursors move after commit) would bring that memory back with its messages unread,
    and they would be summarized twice. Taken after the commands before it in the unit."""
    game_state.memory_checkpoint = None  # (never a stale one while the unit is open)
    with core.store.transaction() as tx:
        tx.after_commit(lambda: setattr(game_state, "memory_checkpoint", take(core, game_state)))


def take(core: MemoryCore, game_state: GameState) -> MemoryCheckpoint:
    """The checkpoint of the store and `game_state` as they are now."""
    shown = core.store.entries(statuses=VISIBLE)
    scenario = game_state.scenario
    return MemoryCheckpoint(
        taken_at=core.clock.now(),
        episode=game_state.episode,
        turn=game_state.turn,
        messages=len(game_state.conversation_history),
        visible=[e.id for e in shown],
        tentative=[e.id for e in shown if e.status is MemoryStatus.TENTATIVE],
        cursors=CheckpointCursors(
            last_world_message_index=scenario.last_world_message_index,
            last_location_message_index=dict(scenario.last_location_message_index),
            last_npc_message_index=dict(scenario.last_npc_message_index),
        ),
        episode_started=core.episode_started,
    )


def restore(core: MemoryCore, game_state: GameState, mark: MemoryCheckpoint) -> RestoreReport:
    """Make the live view `mark`'s in one unit of work (see `IMemoryCheckpoints.restore`)."""
    store = core.store
    wanted = set(mark.visible)
    tentative = set(mark.tentative)
    undone: list[str] = []
    revived: list[str] = []
    from_archive: list[str] = []
    lost: list[str] = []
    with store.transaction() as tx:
        shown = store.entries(statuses=VISIBLE)
        for entry in shown:
            if entry.id not in wanted:
                tx.update(_undone(entry))
                undone.append(entry.id)
        now = {e.id for e in shown}
        archive: dict[str, MemoryEntry] | None = None
        for memory_id in mark.visible:
            if memory_id in now:
                continue
            status = MemoryStatus.TENTATIVE if memory_id in tentative else MemoryStatus.ACTIVE
            hidden = store.get(memory_id)
            if hidden is not None:
                tx.update(_as_it_was(hidden, status))
            else:
                if archive is None:  # (read once, and only when a memory is not in the store)
                    archive = {e.id: e for e in store.archived()}
                hidden = archive.get(memory_id)
                if hidden is None:
                    lost.append(memory_id)
                    continue
                tx.add(_as_it_was(hidden, status))
                from_archive.append(memory_id)
            revived.append(memory_id)
        report = RestoreReport(undone=undone, revived=revived, from_archive=from_archive, lost=lost)
        for memory_id in undone:
            tx.after_commit(_announce_undone(core, memory_id))
        tx.after_commit(lambda: _rewind(core, game_state, mark))
        tx.after_commit(
            lambda: core.publisher.publish(
                events.game_restored, core, checkpoint=mark, report=report
            )
        )
    if lost:
        log.warning("restore: %d memories of the checkpoint are gone: %s", len(lost), lost)
    return report


def _undone(entry: MemoryEntry) -> MemoryEntry:
    """`entry` out of the live view: SUPERSEDED with no successor, tagged `undone`."""
    tags = entry.tags if UNDONE_TAG in entry.tags else [*entry.tags, UNDONE_TAG]
    return entry.model_copy(
        update={"status": MemoryStatus.SUPERSEDED, "superseded_by": None, "tags": tags}
    )


def _as_it_was(entry: MemoryEntry, status: MemoryStatus) -> MemoryEntry:
    """`entry` back in the live view with the status it had, without the tags that hid it."""
    return entry.model_copy(
        update={
            "status": status,
            "superseded_by": None,
            "tags": [t for t in entry.tags if t not in _HIDING_TAGS],
        }
    )


def _announce_undone(core: MemoryCore, memory_id: str) -> Callable[[], None]:
    return lambda: core.publisher.publish(
        events.memory_superseded, core, old_id=memory_id, new_id=None
    )


def _rewind(core: MemoryCore, game_state: GameState, mark: MemoryCheckpoint) -> None:
    """After the restore committed: the cursors are the checkpoint's, and the service forgets
    what it read after it (messages with those indexes will be new ones)."""
    scenario = game_state.scenario
    cursors = mark.cursors
    scenario.last_world_message_index = cursors.last_world_message_index
    scenario.last_location_message_index = dict(cursors.last_location_message_index)
    scenario.last_npc_message_index = dict(cursors.last_npc_message_index)
    game_state.memory_checkpoint = mark

    def later(episode: int | None, index: int) -> bool:
        if episode is None or episode == mark.episode:
            return index >= mark.messages
        return episode > mark.episode

    core.covered = {key for key in core.covered if not later(*key)}
    core.summarized = {
        loc: {text: seen for text, seen in texts.items() if not later(*seen)}
        for loc, texts in core.summarized.items()
    }
    core.by_location = MessagesByLocation()
    if mark.episode_started is not None:
        core.episode_started = mark.episode_started
