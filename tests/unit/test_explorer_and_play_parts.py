"""ExplorerAgent heuristics, reasoning capture, objective tracking and the knowledge base."""

from __future__ import annotations

from pathlib import Path

from app.adapters.storage.memory_store import InMemoryStore
from app.agents.explorer import (
    ExplorerAgent,
    procedure_steps,
    quoted_commands,
    remembered_bad,
    remembered_procedures,
    visible_objects,
)
from app.events.publisher import EventPublisher
from app.interfaces.agent import AgentView
from app.interfaces.game import GameObservation
from app.models.memory import MemoryCategory, MemoryEntry, MemoryScope
from app.play.knowledge import KnowledgeBase
from app.play.metrics import EpisodeStats
from app.play.objectives import Objective, ObjectiveTracker
from app.play.reasoning import extract_reasoning
from app.services.map_graph import MapGraph
from app.services.memory_service import MemoryService
from app.services.policy import MemoryPolicy
from app.testing import FakeSummarizer


def mem(category: MemoryCategory, title: str, text: str, **kw: object) -> MemoryEntry:
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=79,
        category=category,
        title=title,
        text=text,
        **kw,  # type: ignore[arg-type]
    )


WINDOW = mem(
    MemoryCategory.SUCCESS,
    "'enter window' leads to Kitchen",
    "'enter window' from here reaches Kitchen (L203). Steps first: (1) open window.",
    importance=600,
)
FAIL = mem(MemoryCategory.FAILURE, "'take window' fails", "'take window' does not work here.")
DEATH = mem(MemoryCategory.DANGER, "Deadly: jump", "'jump' here led to death: you fall.")


def view(text: str, memories: list[MemoryEntry] | None = None, **kw: object) -> AgentView:
    kw.setdefault(
        "observation", GameObservation(text=text, location_id=79, location_name="Behind House")
    )
    return AgentView(
        episode=1,
        turn=1,
        memories=memories or [],
        **kw,  # type: ignore[arg-type]
    )


def test_commands_are_read_from_memory_text_by_quoting_convention() -> None:
    assert quoted_commands(WINDOW.text) == ["enter window"]
    assert procedure_steps(WINDOW.text) == ["open window"]
    assert remembered_procedures([WINDOW], []) == ["open window", "enter window"]
    assert remembered_bad([WINDOW, FAIL, DEATH]) == {"take window", "jump"}


def test_visible_objects_skip_scenery() -> None:
    text = (
        "You are behind the white house. A path leads into the forest to the east. "
        "There is a small mailbox here. On the table is an elongated brown sack."
    )
    assert visible_objects(text) == ["mailbox", "table", "sack"]


def test_explorer_follows_a_remembered_procedure_before_anything_else() -> None:
    agent = ExplorerAgent(seed=1)
    first = agent.decide(view("There is a small window here.", [WINDOW]))
    assert first.action == "open window"
    second = agent.decide(
        view("There is a small window here.", [WINDOW], tried_here={"open window": False})
    )
    assert second.action == "enter window"


def test_explorer_never_repeats_remembered_failures_or_dangers() -> None:
    agent = ExplorerAgent(seed=3)
    seen = set()
    tried: dict[str, bool] = {}
    for _ in range(14):
        decision = agent.decide(view("A window. You could jump.", [FAIL, DEATH], tried_here=tried))
        seen.add(decision.action)
        tried[decision.action] = True  # nothing works, so nothing makes old failures stale
    assert "take window" not in seen and "jump" not in seen


def test_a_remembered_failure_goes_stale_when_its_thing_changed_or_the_tool_is_held() -> None:
    open_door = mem(MemoryCategory.FAILURE, "'open door' fails", "'open door' does not work.")
    unlock = mem(
        MemoryCategory.FAILURE, "'unlock door with key' fails", "'unlock door with key' fails."
    )
    agent = ExplorerAgent(seed=1)
    text = "A heavy iron door stands shut."
    without_key = agent.decide(view(text, [open_door, unlock]))
    assert without_key.action not in {"open door", "unlock door with key"}
    obs = GameObservation(text=text, location_id=79, inventory=["iron key"])
    with_key = agent.decide(view(text, [open_door, unlock], observation=obs))
    assert with_key.action == "unlock door with key"
    after_unlock = agent.decide(
        view(text, [open_door, unlock], observation=obs, tried_here={with_key.action: False})
    )
    assert after_unlock.action == "open door"


def test_explorer_notes_a_new_failure_once() -> None:
    agent = ExplorerAgent(seed=1)
    d1 = agent.decide(view("Nothing here.", tried_here={"north": True}))
    assert d1.remember == "'north' does not work here."
    d2 = agent.decide(view("Nothing here.", tried_here={"north": True, d1.action: False}))
    assert d2.remember is None


def test_explorer_is_deterministic_for_a_seed() -> None:
    def run(seed: int) -> list[str]:
        agent, tried, out = ExplorerAgent(seed=seed), {}, []
        for _ in range(6):
            action = agent.decide(view("An empty room.", tried_here=dict(tried))).action
            tried[action] = True
            out.append(action)
        return out

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_reasoning_tags_are_extracted() -> None:
    reasoning, rest = extract_reasoning(
        "<thinking>The window is ajar.</thinking> open window <reflection>worked</reflection>"
    )
    assert reasoning == "The window is ajar.\nworked" and rest == "open window"
    assert extract_reasoning("<think>unclosed thought") == ("unclosed thought", "")
    assert extract_reasoning("just text") == ("", "just text")


def test_objective_tracker_completes_score_and_reach_objectives() -> None:
    class Fixed:
        def discover(self, data: object) -> list[Objective]:
            return [
                Objective(text="score", kind="score", target_location_id=5, action="open chest"),
                Objective(text="go", kind="explore", target_location_id=7),
            ]

    tracker = ObjectiveTracker(Fixed())  # type: ignore[arg-type]
    tracker.rediscover(None)  # type: ignore[arg-type]
    assert tracker.target() == 5
    assert tracker.observe(3, 5, 5, "open chest", 0) == []
    [done] = tracker.observe(4, 5, 5, "open chest", 10)
    assert done.completed_turn == 4 and tracker.target() == 7
    [reached] = tracker.observe(9, 5, 7, "north", 0)
    assert reached.text == "go" and tracker.active == [] and len(tracker.completed) == 2


def test_knowledge_base_lists_dangers_and_keeps_episode_lines(tmp_path: Path) -> None:
    store = InMemoryStore()
    service = MemoryService(store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy())
    with store.transaction() as tx:
        tx.add(DEATH.model_copy(update={"importance": 900}))
        tx.add(WINDOW)
    kb = KnowledgeBase(tmp_path / "knowledgebase.md")
    assert kb.read() == "No strategic knowledge available."
    kb.update(service, EpisodeStats(episode=1, turns=40, score=5, died=True), "zork1")
    kb.update(service, EpisodeStats(episode=2, turns=50, score=None), "zork1")
    text = kb.read()
    assert "## Dangers\n- Location 79: Deadly: jump." in text
    assert "- Episode 1: 40 turns, score 5, died." in text
    assert "- Episode 2: 50 turns, score unknown, turn limit." in text
