"""What an engine's own test suite gets: instances to build_container, and pytest fixtures."""

from __future__ import annotations

from pathlib import Path

from cairn import commands
from cairn.container import build_container
from cairn.models.game import GameState, LocationState
from cairn.testing import FakeGame, FakeMessagesServer, FakeSummarizer, InMemoryStore


def test_build_container_takes_instances_without_dependency_injector(tmp_path: Path) -> None:
    store, summarizer = InMemoryStore(), FakeSummarizer()
    container = build_container(workdir=tmp_path, store=store, summarizer=summarizer)
    assert container.store() is store
    assert container.summarizer() is summarizer
    assert container.memory_service().core.store is store  # the service writes where we said


def test_a_string_store_or_llm_is_still_the_setting(tmp_path: Path) -> None:
    container = build_container(workdir=tmp_path, store="sqlite", llm="offline")
    assert container.store().path.name == "memories.sqlite3"


def test_an_llm_client_instance_drives_the_llm_agents(
    tmp_path: Path, fake_messages_server: FakeMessagesServer
) -> None:
    from cairn.adapters.llm.anthropic_client import AnthropicClient
    from cairn.agents.adventurer import AdventurerAgent

    client = AnthropicClient(api_key="sk-test", models={}, base_url=fake_messages_server.base_url)
    container = build_container(workdir=tmp_path, llm=client, store=InMemoryStore())
    assert container.llm_client() is client
    assert isinstance(container.agent(), AdventurerAgent)


def test_the_plugin_fixtures_give_an_offline_container_and_fakes(
    cairn_container: object, fake_game: FakeGame
) -> None:
    container = cairn_container
    assert isinstance(container.store(), InMemoryStore)  # type: ignore[attr-defined]
    gs = GameState()
    gs.locations[1] = LocationState(id=1, name="Hall")
    container.bus().handle(
        commands.ChangeLocation(game_state=gs, to_location_id=1, to_location_name="Hall")
    )  # type: ignore[attr-defined]
    assert gs.scenario.current_location_id == 1
    assert fake_game.reset().location_id is not None
