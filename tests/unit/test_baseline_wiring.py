"""The --no-memory baseline is wiring (NoMemory behind the builders), so no baseline prompt
can hold a memory, whatever the request says."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.container import build_container
from cairn.events import commands as c
from cairn.models.game import GameState, LocationState, NPCInstance
from cairn.services.context import ContextRequest
from cairn.settings import load_settings

MEMORY_SECTIONS = {
    "location_memory",
    "adjacent_memory",
    "top_notes",
    "world_memory",
    "npc_memory",
    "recent_location_memory",
}


@pytest.mark.parametrize("kind", ["adventurer", "objective", "narrative"])
def test_no_baseline_prompt_holds_a_memory(tmp_path: Path, kind: str) -> None:
    container = build_container(load_settings(workdir=tmp_path))
    bus = container.bus()
    gs = GameState()
    gs.locations[1] = LocationState(id=1, name="Harbour")
    gs.locations[2] = LocationState(id=2, name="Lighthouse")
    gs.npcs["mira"] = NPCInstance(instance_id="mira", name="Mira", current_location_id=1)
    bus.handle(c.ChangeLocation(gs, 1, "Harbour"))
    gs.add_message("Mira the harbourmaster warns of a storm tonight.", npcs_present=["mira"])
    bus.handle(c.RememberNote(gs, "The lamp oil is kept under the stairs.", 900, 1))
    bus.handle(c.RememberNote(gs, "The game does not know the word 'zorkmid'.", 400, world=True))
    bus.handle(c.ChangeLocation(gs, 2, "Lighthouse", via_action="north"))
    bus.handle(c.CompleteQuest(gs, "storm-light"))
    bus.handle(c.ChangeLocation(gs, 1, "Harbour", via_action="south"))
    stored = container.store().entries()
    assert len(stored) >= 4

    request = ContextRequest.from_game_state(gs)
    full = container.context_service().assemble(kind, request)
    baseline = container.baseline_context_service().assemble(kind, request)

    assert set(dict(full.sections)) & MEMORY_SECTIONS, "the test must show memories leaking"
    assert not set(dict(baseline.sections)) & MEMORY_SECTIONS
    assert not baseline.memory_ids
    for entry in stored:
        assert entry.text not in baseline.text and entry.title not in baseline.text


def test_the_baseline_objectives_route_over_the_episode_s_own_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.agents.scripted import ScriptedAgent
    from cairn.play import objectives
    from cairn.play.runner import run_play
    from cairn.testing.fake_game import FakeGame

    rooms_known: list[int] = []
    original = objectives.MemoryObjectiveDiscoverer.discover

    def spy(self: objectives.MemoryObjectiveDiscoverer, data: object) -> object:
        rooms_known.append(len(self._map.location_ids()))
        return original(self, data)  # type: ignore[arg-type]

    monkeypatch.setattr(objectives.MemoryObjectiveDiscoverer, "discover", spy)
    game = FakeGame()
    settings = load_settings(workdir=tmp_path, objective_every=1)
    run_play(
        settings,
        game=game,
        agent=ScriptedAgent(["north", "south", "east", "west"]),
        episodes=2,
        max_turns=3,
        use_memory=False,
    )
    # turn 1 of each episode: only the start room is known to the baseline's objectives
    assert rooms_known[0] == 1 and rooms_known[3] == 1, rooms_known
