"""The built-in narrative demo: a short tavern session sent through the bus as an engine would.

`cairn demo` (`play_demo`) shows what cairn makes of one scripted session, so it is a replay: it
starts from the demo's own fresh state each time and writes the same memories every time (a
deterministic clock: the same ids and times, as `cairn replay` does). Running it again into the
same folder leaves the memories as they are when they are the demo's already; anything else
the folder's store holds (an older demo's duplicates, a person's edits) is set aside into
`backups/DATE-TIME/` first, never deleted (a PostgreSQL space, which cannot be set aside, must
be empty). Replaying the session into a store that remembers it would summarize every message
again: the cursors that say which messages were summarized live in the engine's GameState,
which starts anew with the script, and the memories would be duplicates, not news.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from cairn.errors import ConfigError
from cairn.events import commands as c
from cairn.events.bus import MessageBus
from cairn.models.game import GameState, LocationState, NPCInstance, QuestState, TurnOutcome
from cairn.models.memory import LocationRecord, MemoryEntry
from cairn.play.translator import stamped_message
from cairn.services.clock import SystemClock
from cairn.services.context import ContextRequest
from cairn.services.context.context_service import AssembledPrompt
from cairn.settings import CairnSettings

TAVERN, STREET, CELLAR = 1, 2, 3
DEMO_SEED = 0
"""The deterministic clock's seed when the settings name none."""
DEMO_SPACE = "narrative-demo"
"""The postgres store's memory space when the settings name none."""


def build_state() -> GameState:
    """The demo world: three locations, three NPCs, a quest and the next act, named."""
    gs = GameState()
    for loc_id, name in [
        (TAVERN, "The Crooked Lantern"),
        (STREET, "Rainy Street"),
        (CELLAR, "Tavern Cellar"),
    ]:
        gs.locations[loc_id] = LocationState(id=loc_id, name=name)
    gs.npcs["bram"] = NPCInstance(instance_id="bram", name="Bram", current_location_id=TAVERN)
    gs.npcs["lia"] = NPCInstance(instance_id="lia", name="Lia", current_location_id=TAVERN)
    gs.npcs["ovo"] = NPCInstance(instance_id="ovo", name="Ovo", current_location_id=STREET)
    gs.quests["rats"] = QuestState(
        id="rats", name="Rats in the cellar", objectives={"clear-cellar": "Clear the cellar"}
    )
    gs.acts["act-2"] = "The letter's secret"
    return gs


def run_demo_session(bus: MessageBus, gs: GameState, clock: SystemClock | None = None) -> GameState:
    """Play the scripted session; every memory comes from the handlers and the summarizer.
    `clock`: stamps the messages (a deterministic one makes the session repeat exactly)."""

    def say(
        text: str,
        role: str = "narrator",
        present: list[str] | None = None,
        mentioned: list[str] | None = None,
    ) -> None:
        stamped_message(gs, text, clock, role, present, mentioned)

    bus.handle(c.ChangeLocation(gs, TAVERN, "The Crooked Lantern"))
    say("You push open the door of the Crooked Lantern; warm air and pipe smoke greet you.")
    say(
        "Bram the innkeeper polishes a mug. 'Rats in my cellar again,' he grumbles.",
        "npc",
        ["bram", "lia"],
    )
    say(
        "Lia the courier hands you a sealed letter for Ovo, then hurries out into the rain.",
        "npc",
        ["lia"],
    )
    gs.npcs["lia"].current_location_id = STREET
    say("Bram promises a free room if you clear the cellar.", "npc", ["bram"])
    bus.handle(c.RememberNote(gs, "Bram offers a free room for clearing the cellar rats", 650))
    bus.handle(c.ChangeLocation(gs, CELLAR, "Tavern Cellar"))
    say("The cellar is dark and smells of old beer. Red eyes glint between the barrels.")
    bus.handle(
        c.RecordTurn(
            gs,
            TurnOutcome(
                turn=3,
                action="light lantern",
                response="Your lantern flares to life, revealing a rat nest "
                "behind the barrels and a loose flagstone in the corner of the cellar floor.",
                location_before=CELLAR,
                location_before_name="Tavern Cellar",
                location_after=CELLAR,
                location_after_name="Tavern Cellar",
                score_before=0,
                score_after=0,
            ),
        )
    )
    say("You drive the rats out with your torch; the last one flees through a crack.")
    bus.handle(c.UpdateLocationState(gs, CELLAR, complete_encounter="cellar-rats"))
    bus.handle(c.UpdateLocationState(gs, CELLAR, danger_level="CLEARED"))
    bus.handle(c.CompleteObjective(gs, "rats", "clear-cellar"))
    bus.handle(c.ChangeLocation(gs, TAVERN, "The Crooked Lantern"))
    say("Bram grins and hands you the key to the room upstairs.", "npc", ["bram"])
    bus.handle(c.CompleteQuest(gs, "rats"))
    bus.handle(c.ChangeLocation(gs, STREET, "Rainy Street"))
    say(
        "Ovo waits under an awning. You give him Lia's letter; he reads it and pales.",
        "npc",
        ["ovo"],
        mentioned=["lia"],
    )
    bus.handle(c.ProgressAct(gs, "act-2"))
    bus.handle(c.ChangeLocation(gs, TAVERN, "The Crooked Lantern"))
    bus.handle(c.EndEpisode(gs))
    return gs


@dataclass(frozen=True)
class DemoRun:
    """What `play_demo` shows: the memories in the store, the narrative prompt at the end of
    the session, and where the store's earlier content went (None: nowhere)."""

    state: GameState
    store_path: Path
    memories: list[MemoryEntry]
    prompt: AssembledPrompt
    set_aside: Path | None


@dataclass(frozen=True)
class _Session:
    state: GameState
    memories: list[MemoryEntry]
    locations: dict[int, LocationRecord]
    prompt: AssembledPrompt


def _session(settings: CairnSettings, *, dry: bool) -> tuple[_Session, Path]:
    """Play the session into the settings' store (`dry`: into a store in memory); what it
    left, and the store's path."""
    from cairn.adapters.storage.in_memory_store import InMemoryStore
    from cairn.container import build_container

    container = build_container(settings, store=InMemoryStore() if dry else None)
    store = container.store()
    try:
        gs = run_demo_session(container.bus(), build_state(), container.clock())
        request = ContextRequest.from_game_state(gs)
        prompt = container.context_service().assemble("narrative", request)
        return _Session(gs, store.entries(), store.locations(), prompt), store.path
    finally:
        store.close()


def _held(settings: CairnSettings) -> tuple[list[MemoryEntry], dict[int, LocationRecord], Path]:
    """What the settings' store holds now: its memories (every status) and location records."""
    from cairn.container import build_container

    store = build_container(settings).store()
    try:
        return store.entries(), store.locations(), store.path
    finally:
        store.close()


def _visible(memories: list[MemoryEntry]) -> list[MemoryEntry]:
    return [m for m in memories if m.visible]


def _set_aside(settings: CairnSettings) -> Path | None:
    """Move the workdir's run files into `backups/DATE-TIME/` (`--fresh`'s way); the folder's
    marker stays too (the folder is still the demo's)."""
    from cairn.play.fresh import set_aside_run_files
    from cairn.workdir import MARKER

    aside = set_aside_run_files(settings)
    if aside is not None and (aside / MARKER).is_file():
        shutil.copy2(aside / MARKER, settings.workdir / MARKER)
    return aside


def play_demo(settings: CairnSettings) -> DemoRun:
    """Play the demo from its own fresh state into the settings' store (see the module's
    docstring): a store that holds the demo's memories already is left as it is; one that
    holds anything else is set aside first (a postgres space must then be empty: ConfigError).
    Memory ids and times come from a deterministic clock (`deterministic_seed`, else
    `DEMO_SEED`), so every run writes and shows the same."""
    if settings.deterministic_seed is None:
        settings = settings.model_copy(update={"deterministic_seed": DEMO_SEED})
    if settings.memory_space is None:  # postgres: the demo's own space, not "default"
        settings = settings.model_copy(update={"memory_space": DEMO_SPACE})
    expected, _ = _session(settings, dry=True)
    memories, locations, path = _held(settings)
    # what the demo shows (a durable store archives what a replay superseded; a dry run's
    # store keeps it): equal, the store is left as it is, nothing is written
    if (_visible(memories), locations) == (_visible(expected.memories), expected.locations):
        return DemoRun(expected.state, path, memories, expected.prompt, None)
    aside = None
    if memories or locations:
        if settings.store == "postgres":
            raise ConfigError(
                f"memory_space: the postgres space {settings.memory_space!r} holds memories"
                " that are not the demo's, and the demo starts from none: name an empty space"
                " (CAIRN_MEMORY_SPACE)"
            )
        aside = _set_aside(settings)
    done, path = _session(settings, dry=False)
    return DemoRun(done.state, path, done.memories, done.prompt, aside)
