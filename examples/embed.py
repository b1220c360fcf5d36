"""Embedding cairn in a game engine of your own: build the container, send commands, read a prompt.

Run from the project root: `.venv/bin/python examples/embed.py` (memories go to a temp folder).
"""

import logging
import tempfile

from cairn.container import build_container
from cairn.events import commands as c
from cairn.models import GameState, LocationState, NPCInstance, QuestState
from cairn.services.context import ContextRequest

logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")  # cairn logs warnings
workdir = tempfile.mkdtemp(prefix="cairn-embed-")
container = build_container(workdir=workdir, deterministic_seed=1)  # seed: repeatable ids
bus = container.bus()

gs = GameState()  # the engine owns its state; cairn reads it and moves the cursors
gs.locations[1] = LocationState(id=1, name="Harbour")
gs.locations[2] = LocationState(id=2, name="Lighthouse")
gs.npcs["mira"] = NPCInstance(instance_id="mira", name="Mira", current_location_id=1)
gs.quests["storm-light"] = QuestState(id="storm-light", name="Light before the storm")

bus.handle(c.ChangeLocation(gs, 1, "Harbour"))
gs.add_message("Mira the harbourmaster warns of a storm tonight.", npcs_present=["mira"])
gs.add_message("She asks you to light the lighthouse lamp before dark.", npcs_present=["mira"])
bus.handle(c.ChangeLocation(gs, 2, "Lighthouse", via_action="north"))  # summarizes the harbour
gs.add_message("You climb the stairs and light the great lamp; ships turn toward port.")
bus.handle(c.CompleteQuest(gs, "storm-light"))  # a world memory naming the quest
bus.handle(c.ChangeLocation(gs, 1, "Harbour", via_action="south"))

prompt = container.context_service().assemble("narrative", ContextRequest.from_game_state(gs))
print(prompt.text)
print(f"\n({prompt.total_tokens} tokens; memories in {container.store().path})")
container.store().close()
