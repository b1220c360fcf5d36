"""A game master's memory: quests, objectives and acts by name; exchanges and promises kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.agents.prompt_files import render
from cairn.agents.rule_based_summarizer import (
    KEY_SUMMARY_CHARS,
    RuleBasedSummarizer,
    is_key_sentence,
    keep_key_sentences,
)
from cairn.container import Container, build_container
from cairn.events import commands as c
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse, Usage
from cairn.models.game import GameState, LocationState, NPCInstance, QuestState
from cairn.models.kinds import WorldEvent
from cairn.models.memory import MemoryEntry, MemoryScope
from cairn.replay.runner import build_world
from cairn.replay.scenario_models import NarrativeScenario
from cairn.testing import InMemoryStore

CAMP, ROAD = 1, 2
TRADE = "You trade him a silver ring."
PROMISE = "Grik promises to open the cage at dawn."


def goblin_camp() -> GameState:
    """An engine's world: a camp with Grik, and a named quest with a named objective."""
    gs = GameState()
    gs.locations[CAMP] = LocationState(id=CAMP, name="Goblin Camp")
    gs.locations[ROAD] = LocationState(id=ROAD, name="Forest Road")
    gs.npcs["grik"] = NPCInstance(instance_id="grik", name="Grik", current_location_id=CAMP)
    gs.quests["cage"] = QuestState(
        id="cage", name="The Goblin Cage", objectives={"free": "Free the prisoner"}
    )
    gs.acts["act-2"] = "The Siege"
    return gs


def offline(tmp_path: Path) -> Container:
    return build_container(workdir=tmp_path, store=InMemoryStore(), llm="offline")


def world(container: Container, kind: WorldEvent) -> MemoryEntry:
    [entry] = [
        e for e in container.store().entries(scope=MemoryScope.WORLD) if f"world:{kind}" in e.tags
    ]
    return entry


# -- quests, objectives and acts by name --------------------------------------------------


def test_a_completed_objective_and_its_quest_are_remembered_by_name(tmp_path: Path) -> None:
    container = offline(tmp_path)
    bus, gs = container.bus(), goblin_camp()
    bus.handle(c.ChangeLocation(gs, CAMP, "Goblin Camp"))
    gs.add_message("Grik guards a cage.", npcs_present=["grik"])
    gs.add_message("You pick the lock and the prisoner steps out.")
    bus.handle(c.CompleteObjective(gs, "cage", "free"))
    bus.handle(c.CompleteQuest(gs, "cage"))

    objective = world(container, WorldEvent.OBJECTIVE_COMPLETED)
    assert objective.title == "Completed objective 'Free the prisoner' (quest 'The Goblin Cage')"
    assert objective.text.startswith(
        "Completed objective 'Free the prisoner' (quest 'The Goblin Cage')."
    )
    assert "prisoner steps out" in objective.text
    quest = world(container, WorldEvent.QUEST_COMPLETED)
    assert quest.title == "Completed quest 'The Goblin Cage'"
    assert "'The Goblin Cage'" in quest.text
    for entry in (objective, quest):
        assert "objective_id" not in entry.title and "=" not in entry.title


def test_a_named_act_is_remembered_by_name(tmp_path: Path) -> None:
    container = offline(tmp_path)
    bus, gs = container.bus(), goblin_camp()
    bus.handle(c.ChangeLocation(gs, CAMP, "Goblin Camp"))
    gs.add_message("War drums sound from the hills.")
    bus.handle(c.ProgressAct(gs, "act-2"))
    act = world(container, WorldEvent.ACT_PROGRESSED)
    assert act.title == "Reached act 'The Siege'"
    assert act.text == "Reached act 'The Siege'. War drums sound from the hills."


def test_without_names_no_internal_id_reaches_the_text(tmp_path: Path) -> None:
    """A game that names nothing (a score gain is objective `ep1-t5` of quest `score`) keeps
    the readable fallback title, and its text carries no id."""
    container = offline(tmp_path)
    bus, gs = container.bus(), goblin_camp()
    bus.handle(c.ChangeLocation(gs, CAMP, "Goblin Camp"))
    gs.add_message("You found the hidden cache.")
    bus.handle(c.CompleteObjective(gs, "score", "ep1-t5"))
    entry = world(container, WorldEvent.OBJECTIVE_COMPLETED)
    assert entry.title == "Objective completed: ep1-t5 (score)"
    assert entry.text == "Objective completed. You found the hidden cache."


def test_an_unnamed_objective_of_a_named_quest_names_the_quest(tmp_path: Path) -> None:
    container = offline(tmp_path)
    bus, gs = container.bus(), goblin_camp()
    bus.handle(c.ChangeLocation(gs, CAMP, "Goblin Camp"))
    gs.add_message("The guard falls asleep.")
    bus.handle(c.CompleteObjective(gs, "cage", "sneak"))
    entry = world(container, WorldEvent.OBJECTIVE_COMPLETED)
    assert entry.title == "Completed an objective (quest 'The Goblin Cage')"
    assert "sneak" not in entry.text


class WorldSpy(ILLMClient):
    """Answers every summary with a sentence that names nothing, keeps each request."""

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return LLMResponse(
            text="The prisoner is free.",
            tool_calls=[],
            stop_reason="end_turn",
            usage=Usage(input_tokens=1, output_tokens=1),
            latency_ms=0.0,
            model="spy",
        )


def test_the_llm_is_given_names_and_its_memory_names_them_anyway(tmp_path: Path) -> None:
    spy = WorldSpy()
    container = build_container(workdir=tmp_path, store=InMemoryStore(), llm=spy)
    bus, gs = container.bus(), goblin_camp()
    bus.handle(c.ChangeLocation(gs, CAMP, "Goblin Camp"))
    gs.add_message("You pick the lock and the prisoner steps out.")
    bus.handle(c.CompleteObjective(gs, "cage", "free"))

    [request] = [r for r in spy.requests if "story progression" in r.system]
    assert "Related: Completed objective 'Free the prisoner' (quest 'The Goblin Cage')." in (
        request.system
    )
    assert "objective_id" not in request.system and "quest_id" not in request.system
    entry = world(container, WorldEvent.OBJECTIVE_COMPLETED)
    assert entry.text == (
        "Completed objective 'Free the prisoner' (quest 'The Goblin Cage'). The prisoner is free."
    )


def test_a_scenario_names_its_objectives_and_acts_in_the_game_state() -> None:
    spec = NarrativeScenario.model_validate(
        {
            "kind": "narrative",
            "locations": [{"id": 1, "name": "Camp"}],
            "quests": [
                {
                    "id": "cage",
                    "name": "The Goblin Cage",
                    "objectives": [{"id": "free", "name": "Free the prisoner"}, "sneak"],
                }
            ],
            "acts": ["act-1", {"id": "act-2", "name": "The Siege"}],
            "steps": [{"move": 1}],
        }
    )
    gs = build_world(spec)
    assert gs.quests["cage"].name == "The Goblin Cage"
    assert gs.quests["cage"].objectives == {"free": "Free the prisoner", "sneak": ""}
    assert gs.acts == {"act-1": "", "act-2": "The Siege"}


# -- exchanges and promises stay in the summaries ---------------------------------------------


def test_a_scene_keeps_its_trade_and_its_promise_in_the_npc_and_location_summaries(
    tmp_path: Path,
) -> None:
    container = offline(tmp_path)
    bus, gs = container.bus(), goblin_camp()
    bus.handle(c.ChangeLocation(gs, CAMP, "Goblin Camp"))
    gs.add_message("Smoke drifts over the goblin camp.")
    gs.add_message("Grik squats by the fire and sharpens a bone.", npcs_present=["grik"])
    gs.add_message("Grik scratches his ear and grunts.", npcs_present=["grik"])
    gs.add_message("Grik eyes your pack with open greed.", npcs_present=["grik"])
    gs.add_message(TRADE, npcs_present=["grik"])
    gs.add_message("The fire crackles.")
    gs.add_message(PROMISE, npcs_present=["grik"])
    gs.add_message("Grik yawns and turns back to the fire.", npcs_present=["grik"])
    gs.add_message("Night falls over the camp.")
    bus.handle(c.ChangeLocation(gs, ROAD, "Forest Road"))

    [npc] = container.store().entries(scope=MemoryScope.NPC, npc_id="grik")
    [visit] = container.store().entries(scope=MemoryScope.LOCATION, location_id=CAMP)
    for summary in (npc.text, visit.text):
        assert TRADE in summary
        assert PROMISE in summary
        assert summary.index(TRADE) < summary.index(PROMISE)  # told in order
        assert len(summary) <= KEY_SUMMARY_CHARS  # a prompt line shows all of it


def test_an_untagged_line_next_to_the_npc_is_part_of_its_scene() -> None:
    """A line naming and listing no NPC ("You trade him a silver ring.") between Grik's."""
    gs = goblin_camp()
    gs.scenario.current_location_id = CAMP
    for text in ("Grik grunts.", "Grik sniffs.", "Grik spits.", TRADE):
        gs.add_message(text, npcs_present=[] if text == TRADE else ["grik"])
    summary = RuleBasedSummarizer().summarize_npc_interactions(
        gs, gs.npcs["grik"], gs.conversation_history
    )
    assert TRADE in summary


def test_a_trade_with_another_npc_is_not_put_in_this_npc_s_summary() -> None:
    gs = goblin_camp()
    gs.npcs["mira"] = NPCInstance(instance_id="mira", name="Mira")
    gs.scenario.current_location_id = CAMP
    gs.add_message("Grik grunts.", npcs_present=["grik"])
    gs.add_message("Mira sells you a map.", npcs_present=["mira"])
    summary = RuleBasedSummarizer().summarize_npc_interactions(
        gs, gs.npcs["grik"], gs.conversation_history
    )
    assert summary == "Grik grunts."


def test_a_world_update_keeps_the_event_and_a_trade_of_its_scene() -> None:
    gs = goblin_camp()
    gs.scenario.current_location_id = CAMP
    gs.add_message("Grik grunts.")
    gs.add_message(TRADE)
    gs.add_message("Smoke rises.")
    gs.add_message("The cage door swings open.")
    summary = RuleBasedSummarizer().summarize_world_update(
        gs, WorldEvent.OBJECTIVE_COMPLETED, gs.conversation_history, {}
    )
    assert summary == f"Objective completed. {TRADE} The cage door swings open."


# -- the rule itself --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        TRADE,
        PROMISE,
        "She gave you a rusty key.",
        "Bram hands you the key to the room upstairs.",
        "You bought a lantern for three coins.",
        "The merchant sold you a map.",
        "You received a letter from the queen.",
        "He swears to guard the gate.",
        "The knight vowed revenge.",
        "Mira agreed to meet you at noon.",
        "'I will return before the moon sets,' she says.",
        "We'll pay you in gold.",
        "I\u2019ll bring the key tomorrow.",
    ],
)
def test_exchanges_and_promises_are_key_sentences(sentence: str) -> None:
    assert is_key_sentence(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Grik guards a cage.",
        "The fire crackles.",
        "A sword glints in his hand.",
        "Mali will not come.",
        "Smoke drifts over the camp.",
    ],
)
def test_filler_is_not_a_key_sentence(sentence: str) -> None:
    assert not is_key_sentence(sentence)


def test_key_sentences_come_before_filler_within_the_limit() -> None:
    candidates = ["Smoke rises.", TRADE, "Fire crackles.", PROMISE, "Night falls."]
    kept = keep_key_sentences(candidates, ["Smoke rises.", "Night falls."], limit=3)
    assert kept == f"Smoke rises. {TRADE} {PROMISE}"
    assert keep_key_sentences(candidates, ["Smoke rises."], limit=1) == TRADE


def test_without_key_sentences_the_summary_is_unchanged() -> None:
    candidates = ["Smoke rises.", "Fire crackles.", "Night falls."]
    assert keep_key_sentences(candidates, ["Smoke rises.", "Night falls."]) == (
        "Smoke rises. Night falls."
    )


def test_a_command_is_not_a_key_sentence_of_a_summary() -> None:
    candidates = ["> give lunch to troll", "The troll eats it."]
    assert keep_key_sentences(candidates, ["The troll eats it."]) == "The troll eats it."


def test_the_summary_prompts_ask_for_exchanges_promises_and_names() -> None:
    for name, values in (
        ("npc_summary", {"npc_name": "Grik"}),
        ("location_summary", {"location_name": "Goblin Camp"}),
        ("world_summary", {"event_kind": "quest_completed", "related": "none"}),
    ):
        text = render(name, **values)
        assert "exchange" in text and "promise" in text
        assert "seed 0" not in text
