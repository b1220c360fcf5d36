"""ExplorerAgent heuristics, objective tracking and the knowledge base."""

from __future__ import annotations

from pathlib import Path

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.adapters.storage.knowledge_file import KnowledgeBase
from cairn.agents.explorer import (
    ExplorerAgent,
    game_object_nouns,
    remembered_bad,
    remembered_procedures,
    visible_objects,
    which_options,
)
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.interfaces.agent import AgentView
from cairn.interfaces.game import GameObservation
from cairn.models.episode import EpisodeStats
from cairn.models.game import GameState
from cairn.models.lesson import Effect, EffectKind, Evidence, Lesson
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope
from cairn.models.vocabulary import Vocabulary
from cairn.play.objectives import (
    MemoryObjectiveDiscoverer,
    Objective,
    ObjectiveInput,
    ObjectiveTracker,
    deadly_moves,
)
from cairn.services.context.builders import ContextRequest
from cairn.services.map import MapGraph
from cairn.services.memory_service import MemoryService
from cairn.services.outcomes import quoted_commands
from cairn.services.policy import MemoryPolicy
from cairn.testing import FakeSummarizer


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
    lesson=Lesson(
        action="enter window",
        effect=Effect(kind=EffectKind.MOVED, room_id=203, room="Kitchen"),
        steps_first=["open window"],
        evidence=Evidence.TESTED,
    ),
)
FAIL = mem(MemoryCategory.FAILURE, "'take window' fails", "'take window' does not work here.")
DEATH = mem(MemoryCategory.DANGER, "Deadly: jump", "'jump' here led to death: you fall.")


def objective_input(location_id: int | None, turn: int = 1) -> ObjectiveInput:
    request = ContextRequest(game_state=GameState(), location_id=location_id)
    return ObjectiveInput(request=request, turn=turn)


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


def test_commands_are_read_from_quotes_and_steps_from_the_lesson_fields() -> None:
    assert quoted_commands(WINDOW.text) == ["enter window"]
    assert remembered_procedures([WINDOW], []) == ["open window", "enter window"]
    # the prose is never parsed back: without the lesson, its "Steps first" are not steps
    prose_only = WINDOW.model_copy(update={"lesson": None})
    assert remembered_procedures([prose_only], []) == []
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


def test_explorer_leaves_failures_to_the_memory_service_but_notes_unknown_words_once() -> None:
    agent = ExplorerAgent(seed=1)
    d1 = agent.decide(view("Nothing here.", tried_here={"north": True}))
    assert d1.remember is None, "the memory service keeps one FAILURE memory per object"
    said = "I don't know the word 'xyzzy'."
    d2 = agent.decide(view(said, tried_here={"north": True, "xyzzy": True}))
    assert d2.remember == "The game does not know the word 'xyzzy'." and d2.remember_everywhere
    d3 = agent.decide(view(said, tried_here={"north": True, "xyzzy": True}))
    assert d3.remember is None


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


def test_objective_tracker_completes_score_and_reach_objectives() -> None:
    class Fixed:
        def discover(self, data: object) -> list[Objective]:
            return [
                Objective(text="score", kind="score", target_location_id=5, action="open chest"),
                Objective(text="go", kind="explore", target_location_id=7),
            ]

    tracker = ObjectiveTracker(Fixed())  # type: ignore[arg-type]
    tracker.rediscover(objective_input(None))
    assert tracker.target() == 5
    assert tracker.observe(3, 5, 5, "open chest", 0) == []
    [done] = tracker.observe(4, 5, 5, "open chest", 10)
    assert done.completed_turn == 4 and tracker.target() == 7
    [reached] = tracker.observe(9, 5, 7, "north", 0)
    assert reached.text == "go" and tracker.active == [] and len(tracker.completed) == 2


def test_knowledge_base_lists_dangers_and_keeps_episode_lines(tmp_path: Path) -> None:
    store = InMemoryStore()
    service = fiction_memory_service(
        store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )
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


# -- failures as the memory service keeps them, and the game's own object names ---------------


LEDGER = mem(
    MemoryCategory.FAILURE,
    "Take or break window",
    "Tried here, did not work: 'take window', 'break window'. The game said: \"I don't know"
    " the word 'smash'.\"",
)


def test_a_failure_memory_marks_every_command_it_quotes_but_not_the_games_words() -> None:
    last_answer = LEDGER.model_copy(
        update={"text": "Tried here, did not work: 'open door'. Last answer: \"No 'xyzzy'.\""}
    )
    two_quotes = mem(MemoryCategory.DANGER, "Deadly", "'jump' here led to death, not 'wait'.")
    assert remembered_bad([LEDGER]) == {"take window", "break window"}
    assert remembered_bad([last_answer]) == {"open door"}
    assert remembered_bad([two_quotes]) == {"jump"}, "a danger marks its first command only"
    agent = ExplorerAgent(seed=1)
    seen = {agent.decide(view("A small window.", [LEDGER])).action for _ in range(3)}
    assert not seen & {"take window", "break window"}


def test_the_games_object_names_replace_guessed_nouns() -> None:
    names = ["small mailbox", "spider web with writing on it", "in some cases mud is good, ok"]
    obs = GameObservation(
        text="West of House. You are in the library of a first-rate house.",
        location_id=79,
        objects=names,
    )
    assert game_object_nouns(obs) == ["mailbox", "web"]
    agent = ExplorerAgent(seed=1)
    tried: dict[str, bool] = {}
    actions = []
    for _ in range(4):
        action = agent.decide(view(obs.text, observation=obs, tried_here=dict(tried))).action
        tried[action] = True
        actions.append(action)
    assert actions == ["open mailbox", "take mailbox", "open web", "take web"]


def test_nouns_are_not_guessed_from_a_room_description() -> None:
    room = "You are in the library of a first-rate house. A draught comes from the north."
    action = ExplorerAgent(seed=1).decide(view(room)).action
    assert action == "north", "no 'open library', no 'take first'"


def test_a_noun_from_the_games_reply_is_tried_until_the_game_says_it_is_not_here() -> None:
    agent = ExplorerAgent(seed=1)
    room = GameObservation(text="A dusty study.", location_id=79, objects=["oak chest"])
    assert agent.decide(view(room.text, observation=room)).action == "open chest"
    revealed = room.model_copy(update={"text": "You open the chest, revealing a hint of dust."})
    tried = {"open chest": False}
    steps = []
    for reply in ("That's fixed in place.", "You can't see any such thing."):
        action = agent.decide(view("", observation=revealed, tried_here=dict(tried))).action
        steps.append(action)
        tried[action] = True
        revealed = room.model_copy(update={"text": reply})
    after = agent.decide(view("", observation=revealed, tried_here=dict(tried))).action
    assert steps == ["take chest", "open hint"] and after != "take hint"


def test_a_guessed_noun_the_games_parser_does_not_know_is_not_tried() -> None:
    """"The phone rings." guesses 'rings'; a game whose dictionary lacks it is not asked to
    open or take it (without a vocabulary the guess stands, as before)."""
    room = GameObservation(text="A spare bedroom.", location_id=79, objects=["oak chest"])
    opened = "You open the chest, revealing a key. The phone rings."
    reply = room.model_copy(update={"text": opened})
    tried = {"open chest": False, "take chest": True}

    def actions(vocabulary: Vocabulary | None) -> list[str]:
        agent = ExplorerAgent(seed=1)
        agent.decide(view(room.text, observation=room, vocabulary=vocabulary))
        done = dict(tried)
        out = []
        for _ in range(4):
            action = agent.decide(
                view("", observation=reply, tried_here=dict(done), vocabulary=vocabulary)
            ).action
            done[action] = True
            out.append(action)
        return out

    known = Vocabulary(frozenset({"open", "take", "chest", "key", "phone"}))
    assert "open rings" not in actions(known) and "open key" in actions(known)
    assert "open rings" in actions(None)


def test_a_vocabulary_knows_a_long_word_by_the_letters_the_parser_keeps() -> None:
    words = Vocabulary(frozenset({"kitchenet", "lamp"}), resolution=9)
    assert words.knows("kitchenette") and words.knows("Lamp") and words.knows("kitchenet")
    assert not words.knows("kitchen") and not words.knows("lamps")
    old = Vocabulary(frozenset({"lanter"}), resolution=6)
    assert old.knows("lantern") and not old.knows("lante")


def test_a_take_refused_for_the_load_drops_something_spare_then_takes_again() -> None:
    held = ["brass lantern", "sword", "brass key", "leaflet", "pile of leaves"]
    room = GameObservation(
        text="A tree top.", location_id=79, objects=["jewel-encrusted egg"], inventory=held
    )
    agent = ExplorerAgent(seed=1)
    tried = {"open egg": True}
    assert agent.decide(view(room.text, observation=room, tried_here=tried)).action == "take egg"
    heavy = room.model_copy(update={"text": "Your load is too heavy."})
    tried["take egg"] = True
    drop = agent.decide(view("", observation=heavy, tried_here=tried)).action
    assert drop == "drop leaves"  # not the light, the weapon or the key
    lighter = room.model_copy(update={"text": "Dropped.", "inventory": held[:-1]})
    tried[drop] = False
    again = agent.decide(view("", observation=lighter, tried_here=tried))
    assert again.action == "take egg" and "carry less" in again.reasoning


def test_with_nothing_spare_to_drop_the_explorer_moves_on() -> None:
    held = ["brass lantern", "sword"]
    room = GameObservation(
        text="Your load is too heavy.", location_id=79, objects=["egg"], inventory=held
    )
    agent = ExplorerAgent(seed=1)
    first = GameObservation(text="A tree top.", location_id=79, objects=["egg"], inventory=held)
    agent.decide(view(first.text, observation=first, tried_here={"open egg": True}))
    action = agent.decide(
        view("", observation=room, tried_here={"open egg": True, "take egg": True})
    ).action
    assert not action.startswith("drop ")


def test_every_thing_offered_by_a_which_question_is_read() -> None:
    assert which_options("What do you want to take: the small bowl or the large bowl?") == [
        "small bowl",
        "large bowl",
    ]
    assert which_options("Which do you mean, the brass key, the iron key, or the gold key?") == [
        "brass key",
        "iron key",
        "gold key",
    ]
    assert which_options("[Which do you mean, the bedroom door or the front door?]") == [
        "bedroom door",
        "front door",
    ]
    assert which_options("You open the box, or so it seems.") == []


def test_a_which_question_is_answered_even_when_memory_lists_the_answer_as_failed() -> None:
    """Any command sent now is read as the answer ("take east"), so the explorer answers: the
    first thing offered that is fresh, else one it did not just send."""
    asked = GameObservation(
        text="What do you want to take: the small bowl or the large bowl?", location_id=79
    )
    failed = mem(
        MemoryCategory.FAILURE,
        "Tried: small bowl",
        "Tried here, did not work: 'small bowl'.",
    )
    assert ExplorerAgent(seed=1).decide(view(asked.text, [failed], observation=asked)).action == (
        "large bowl"
    )
    both = mem(
        MemoryCategory.FAILURE,
        "Tried: small bowl, large bowl",
        "Tried here, did not work: 'small bowl', 'large bowl'.",
    )
    answer = ExplorerAgent(seed=1).decide(view(asked.text, [both], observation=asked)).action
    assert answer == "small bowl"  # not a move the parser would take for an answer


# -- objectives never lead into a remembered death ---------------------------------------------


def deadly_world() -> tuple[MapGraph, MemoryService, InMemoryStore]:
    """Hall 1: west -> Pit 4 (killed the player) -> down -> Cellar 5; north -> Study 2 -> east ->
    Gallery 6 -> south -> Cellar 5. The Pit (one step) and the Gallery (two steps) still have an
    unexplored exit (up)."""
    graph = MapGraph()
    for src, action, dst in [
        (1, "west", 4),
        (4, "down", 5),
        (1, "north", 2),
        (2, "east", 6),
        (6, "south", 5),
    ]:
        graph.add_connection(src, dst, action=action)
    graph.note_exits(4, ["up", "down"])
    graph.note_exits(6, ["up"])
    store = InMemoryStore()
    service = fiction_memory_service(
        store, FakeSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )
    return graph, service, store


def add(store: InMemoryStore, *entries: MemoryEntry) -> None:
    with store.transaction() as tx:
        for entry in entries:
            tx.add(entry)


def located(entry: MemoryEntry, location_id: int) -> MemoryEntry:
    return entry.model_copy(update={"location_id": location_id})


def test_no_objective_or_route_leads_into_a_remembered_death() -> None:
    graph, service, store = deadly_world()
    death = mem(MemoryCategory.DANGER, "Deadly: west", "'west' here led to death: you fall.")
    scored_in_pit = mem(
        MemoryCategory.SUCCESS, "Score by take coin", "'take coin' gained 5 points.", score_delta=5
    )
    scored_in_cellar = mem(
        MemoryCategory.SUCCESS, "Score by open box", "'open box' gained 5 points.", score_delta=5
    )
    add(store, located(death, 1), located(scored_in_pit, 4), located(scored_in_cellar, 5))
    discoverer = MemoryObjectiveDiscoverer(service, graph)
    tracker = ObjectiveTracker(discoverer)
    objectives = tracker.rediscover(objective_input(1))
    assert discoverer.guard.deadly == {(1, "west")} and discoverer.guard.deadly_rooms == {4}
    assert [o.target_location_id for o in objectives] == [5, 6], (
        "no scoring in the Pit (reached only through the deadly move); the nearest room with an"
        " unexplored exit is the Pit, the nearest safe one the Gallery"
    )
    assert graph.route(1, 5) == ["west", "down"], "the map's shortest way is the deadly one"
    assert tracker.target() == 6, "so the Cellar is not targeted from the Hall"
    tracker.observe(2, 1, 2, "north", 0)
    assert tracker.target() == 5, "from the Study the way to the Cellar is safe"


def test_deaths_of_the_world_make_no_room_deadly() -> None:
    graph, service, store = deadly_world()
    clock = MemoryEntry(
        scope=MemoryScope.WORLD,
        category=MemoryCategory.DANGER,
        title="Died in Hall at turn 40 (time ran out)",
        text="The bomb goes off. *** You have died ***",
        tags=["world:player_died", "ending", "cause:clock"],
        location_id=1,
    )
    local = clock.model_copy(
        update={"id": "m-local", "scope": MemoryScope.LOCATION, "title": "Died: the bomb"}
    )
    add(store, clock, local)
    assert deadly_moves([clock, local]) == set()
    tracker = ObjectiveTracker(MemoryObjectiveDiscoverer(service, graph))
    [explore] = tracker.rediscover(objective_input(1))
    assert explore.target_location_id == 4 and tracker.target() == 4
