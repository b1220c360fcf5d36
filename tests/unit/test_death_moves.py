"""A death that moves the player is no exit (issue 37, item 11): Zork I's grue kills in the
dark cellar and the game goes on in the forest; the map learned "Cellar -north-> Forest",
which then fed the map's picture, routes and the planner."""

from __future__ import annotations

from pathlib import Path

import pytest
from dependency_injector import providers

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.container import build_container
from cairn.interfaces.game import GameObservation
from cairn.models.game import GameState
from cairn.play.translator import StepTranslator
from cairn.settings import load_settings

CELLAR = GameObservation(text="Cellar\nIt is pitch black.", location_id=1, location_name="Cellar")


@pytest.mark.parametrize("died", [True, False])
def test_only_a_move_that_did_not_kill_teaches_the_map_a_way(tmp_path: Path, died: bool) -> None:
    container = build_container(load_settings(workdir=tmp_path))
    container.store.override(providers.Object(InMemoryStore()))
    translator = StepTranslator(container.bus())
    state = GameState(episode=1)
    translator.start(state, CELLAR)
    text = "Oh, no! You have been eaten by a grue.\nForest" if died else "Forest"
    after = GameObservation(text=text, location_id=2, location_name="Forest", died=died)
    translator.step(state, 1, "north", CELLAR, after)
    exits = container.memory_service().core.map.exits_from(1)
    assert (exits == {}) is died, exits
    assert state.scenario.current_location_id == 2  # the player is in the forest either way
