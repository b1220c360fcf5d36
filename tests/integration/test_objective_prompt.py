"""Seed 000's objective prompt on Zork I's whole walkthrough map (84+ rooms): the current room
by name and id, the exploration statistics, every knowledge-base line, a map that names
every room within 3 moves (the rest counted, not cut), and its Mermaid drawing ("Mermaid +
Summary": on a map this big, of the rooms within 3 moves), under the objective prompt's
budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.adapters.game.jericho_game import JerichoGame
from cairn.container import build_container
from cairn.models.game import GameState
from cairn.services.context import ContextRequest
from cairn.services.map import MapGraph
from cairn.settings import load_settings

ROMS = Path(__file__).resolve().parents[2].parent / "shared" / "roms"
ZORK = ROMS / "zork1.z5"


@pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file at {ZORK}")
def test_the_objective_prompt_on_zork_s_full_map(tmp_path: Path) -> None:
    container = build_container(load_settings(workdir=tmp_path))
    graph: MapGraph = container.map_graph()
    game = JerichoGame(ZORK)
    obs = game.reset()
    for action in game.walkthrough():
        after = game.step(action)
        for o in (obs, after):
            if o.location_id is not None:
                graph.set_name(o.location_id, o.location_name)
                graph.record_visit(o.location_id)
        src, dst = obs.location_id, after.location_id
        if src is not None and dst is not None and dst != src:
            graph.add_connection(src, dst, action=action)
        obs = after
    game.close()
    assert len(graph.location_ids()) >= 84
    here = 193  # the Living Room: a hub in the middle of the map
    knowledge = "\n".join(f"- Lesson {i}: something learned the hard way." for i in range(121))
    gs = GameState()
    request = ContextRequest(
        game_state=gs,
        location_id=here,
        location_name="Living Room",
        extra_sections={"knowledge": knowledge, "objectives": "- Find the lamp"},
    )
    prompt = container.context_service().assemble("objective", request)
    assert not prompt.dropped, prompt.explain()
    assert "Current location: Living Room (ID: 193)" in prompt.text
    assert "Exploration: Rooms known:" in prompt.text
    assert all(f"- Lesson {i}: something" in prompt.text for i in range(121))
    near = graph.rooms_within(here, 3)
    assert len(near) < len(graph.location_ids())
    map_text = prompt.text.split("## Map and Routes")[1]
    for room in near:
        assert f"From {graph.name_of(room)} ({room}):" in map_text
    far = len(graph.location_ids()) - len(near)
    assert f"(+{far} more known rooms further than 3 moves away)" in map_text
    drawing = prompt.text.split("## Map Visualization (Mermaid Format)")[1]
    fenced = drawing.split("```mermaid\n")[1].split("```")[0]
    nodes = {int(line.split("[")[0].strip()[1:]) for line in fenced.splitlines() if "[" in line}
    assert nodes == set(near)  # the rooms within 3 moves, and only those
    assert f"L{here} <-->" in fenced or f"<--> L{here}" in fenced or f"L{here} -->" in fenced
    assert "Node ids match location ids in memories" in drawing
    assert f"Current location: L{here}" in drawing
    assert f"(rooms within 3 moves of L{here}; {far} more rooms not drawn)" in drawing
    assert prompt.total_tokens <= prompt.budget_tokens == 12000


def test_a_small_map_is_drawn_whole_in_the_objective_prompt(tmp_path: Path) -> None:
    container = build_container(load_settings(workdir=tmp_path))
    graph: MapGraph = container.map_graph()
    for room, name in [(1, "Hall"), (2, "Kitchen"), (3, "Cellar")]:
        graph.set_name(room, name)
    graph.add_connection(1, 2, action="north")
    graph.add_connection(2, 1, action="south")
    graph.add_connection(2, 3, action="down")
    request = ContextRequest(game_state=GameState(), location_id=1, location_name="Hall")
    text = container.context_service().assemble("objective", request).text
    drawing = text.split("## Map Visualization (Mermaid Format)\n")[1]
    assert '    L3["Cellar (L3)"]' in drawing and "L2 -->|down| L3" in drawing
    assert "L1 <-->|north / south| L2" in drawing
    assert "not drawn" not in drawing
