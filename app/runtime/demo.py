"""The built-in narrative demo: a short tavern session sent through the bus as an engine would."""

from __future__ import annotations

from cairn.events import commands as c
from cairn.events.bus import MessageBus
from cairn.models.game import GameState, LocationState, NPCInstance, QuestState, TurnOutcome

TAVERN, STREET, CELLAR = 1, 2, 3


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


def run_demo_session(bus: MessageBus, gs: GameState) -> GameState:
    """Play the scripted session; every memory comes from the handlers and the summarizer."""
    bus.handle(c.ChangeLocation(gs, TAVERN, "The Crooked Lantern"))
    gs.add_message(
        "You push open the door of the Crooked Lantern; warm air and pipe smoke greet you."
    )
    gs.add_message(
        "Bram the innkeeper polishes a mug. 'Rats in my cellar again,' he grumbles.",
        role="npc",
        npcs_present=["bram", "lia"],
    )
    gs.add_message(
        "Lia the courier hands you a sealed letter for Ovo, then hurries out into the rain.",
        role="npc",
        npcs_present=["lia"],
    )
    gs.npcs["lia"].current_location_id = STREET
    gs.add_message(
        "Bram promises a free room if you clear the cellar.", role="npc", npcs_present=["bram"]
    )
    bus.handle(c.RememberNote(gs, "Bram offers a free room for clearing the cellar rats", 650))
    bus.handle(c.ChangeLocation(gs, CELLAR, "Tavern Cellar"))
    gs.add_message("The cellar is dark and smells of old beer. Red eyes glint between the barrels.")
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
    gs.add_message("You drive the rats out with your torch; the last one flees through a crack.")
    bus.handle(c.UpdateLocationState(gs, CELLAR, complete_encounter="cellar-rats"))
    bus.handle(c.UpdateLocationState(gs, CELLAR, danger_level="CLEARED"))
    bus.handle(c.CompleteObjective(gs, "rats", "clear-cellar"))
    bus.handle(c.ChangeLocation(gs, TAVERN, "The Crooked Lantern"))
    gs.add_message(
        "Bram grins and hands you the key to the room upstairs.", role="npc", npcs_present=["bram"]
    )
    bus.handle(c.CompleteQuest(gs, "rats"))
    bus.handle(c.ChangeLocation(gs, STREET, "Rainy Street"))
    gs.add_message(
        "Ovo waits under an awning. You give him Lia's letter; he reads it and pales.",
        role="npc",
        npcs_present=["ovo"],
        npcs_mentioned=["lia"],
    )
    bus.handle(c.ProgressAct(gs, "act-2"))
    bus.handle(c.ChangeLocation(gs, TAVERN, "The Crooked Lantern"))
    bus.handle(c.EndEpisode(gs))
    return gs
