"""The offline player never stalls: one test per cause found with bench/learning_bench.py."""

from __future__ import annotations

import json
from pathlib import Path

from cairn.agents.explorer import DIRECTIONS, ExplorerAgent
from cairn.interfaces.agent import AgentView
from cairn.interfaces.game import GameObservation
from cairn.models.game import GameState
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope
from cairn.play.objectives import (
    MemoryObjectiveDiscoverer,
    Objective,
    ObjectiveInput,
    ObjectiveTracker,
)
from cairn.play.runner import run_play
from cairn.services.context.builders import ContextRequest
from cairn.services.map import MapGraph
from cairn.settings import load_settings
from cairn.testing.fake_game import FakeGame, FakeRoom, FakeWorld

IDLE = {"look", "l", "wait", "z"}


def view(
    text: str = "A small room.",
    *,
    memories: list[MemoryEntry] | None = None,
    tried: dict[str, bool] | None = None,
    turn: int = 1,
    context: str = "",
    **kw: object,
) -> AgentView:
    obs = GameObservation(text=text, location_id=7, location_name="Room", location_context=context)
    return AgentView(
        episode=1,
        turn=turn,
        observation=obs,
        memories=memories or [],
        tried_here=dict(tried or {}),
        **kw,  # type: ignore[arg-type]
    )


def failure(*commands: str) -> MemoryEntry:
    quoted = ", ".join(f"'{c}'" for c in commands)
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=7,
        category=MemoryCategory.FAILURE,
        title="Tried: " + ", ".join(commands),
        text=f'Tried here, did not work: {quoted}. The game said: "You can\'t go that way."',
    )


def test_a_route_step_that_leaves_the_player_in_place_is_marked_blocked() -> None:
    """Cause: the remembered way on (a route step) was blocked for a while; the reply was no
    refusal ("The troll blocks your way"), so it never counted as failed and was retried."""
    agent = ExplorerAgent(seed=1)
    first = agent.decide(view(route_to_target=["north"]))
    assert first.action == "north"
    later = [
        agent.decide(
            view("The troll blocks your way.", route_to_target=["north"], tried={"north": False})
        ).action
        for _ in range(3)
    ]
    assert "north" not in later and not IDLE & set(later), "marked blocked; exploring resumes"


def test_the_tracker_skips_an_objective_whose_route_turned_out_blocked() -> None:
    graph = MapGraph()
    graph.add_connection(1, 2, action="north")
    graph.add_connection(1, 3, action="east")

    class Two(MemoryObjectiveDiscoverer):
        def discover(self, data: ObjectiveInput) -> list[Objective]:
            return [
                Objective(text="go 2", kind="explore", target_location_id=2),
                Objective(text="go 3", kind="explore", target_location_id=3),
            ]

    tracker = ObjectiveTracker(Two(None, graph))
    at_one = ObjectiveInput(request=ContextRequest(game_state=GameState(), location_id=1), turn=1)
    tracker.rediscover(at_one)
    assert tracker.target() == 2
    tracker.observe(2, 1, 1, "north", 0)  # north stayed in the room: blocked this episode
    assert tracker.target() == 3
    tracker.new_episode()
    tracker.rediscover(at_one)
    assert tracker.target() == 2, "a block lasts one episode"


def test_a_room_where_memory_says_every_move_fails_is_not_a_reason_to_look() -> None:
    """Cause: every direction here was remembered as failing (it was only blocked for a while
    in an earlier episode), nothing was left to try and the player looked until the end."""
    agent = ExplorerAgent(seed=2)
    memories = [failure(*DIRECTIONS)]
    tried: dict[str, bool] = {}
    actions = []
    for turn in range(1, 31):
        action = agent.decide(view(memories=memories, tried=tried, turn=turn)).action
        actions.append(action)
        tried[action] = action != "north"  # the way north is open again
        if action == "north":
            break
    assert actions[-1] == "north", "memory may be stale: its failures are tried once more"
    assert not IDLE & set(actions)


def test_the_player_does_what_the_game_asks_first_and_then_moves_again() -> None:
    """Cause: in bed, every move answered "You'll have to get out of the bed first."; once out
    of bed those failures were stale but kept the player from leaving."""
    agent = ExplorerAgent(seed=3)
    in_bed = {d: True for d in DIRECTIONS}
    asked = agent.decide(
        view("You'll have to get out of the bed first.", tried=in_bed, context="in the bed")
    )
    assert asked.action == "get out of bed"
    out = agent.decide(
        view("You get out of bed.", tried={**in_bed, "get out of bed": False}, turn=2)
    )
    assert out.action in DIRECTIONS, "what holds the player changed: moves are worth a try"


def test_a_move_that_left_the_player_in_place_is_no_way_out() -> None:
    """Cause: "You miss the doorway by eighteen inches." reads as no refusal, so the move
    counted as a way out and the player walked into the wall for the rest of the episode."""
    agent = ExplorerAgent(seed=4)
    tried = {d: True for d in DIRECTIONS if d != "south"}
    first = agent.decide(view(tried=tried))
    assert first.action == "south"
    tried["south"] = False
    later = []
    for turn in range(2, 8):
        action = agent.decide(view("You bump into the wall.", tried=tried, turn=turn)).action
        later.append(action)
        tried[action] = True
    assert "south" not in later and not IDLE & set(later)


def test_commands_are_compared_as_the_session_records_them() -> None:
    """Cause: `take *JEWELLED FRUIT*` (an item's name from a memory title) was sent, recorded
    as `take jewelled fruit`, and never recognised as tried: it was sent every turn."""
    got = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=7,
        category=MemoryCategory.SUCCESS,
        title="Got *JEWELLED FRUIT*",
        text="'take fruit' got *JEWELLED FRUIT*.",
    )
    agent = ExplorerAgent(seed=1)
    room = "A small room. A *JEWELLED FRUIT* lies here."
    first = agent.decide(view(room, memories=[got]))
    assert first.action == "take fruit", "by its noun, as the session records it"
    again = agent.decide(view(room, memories=[got], tried={"take fruit": True}, turn=2))
    assert again.action != "take fruit"


def trap_world() -> FakeWorld:
    """A hall with a study to the north and a bog below it that has no way out."""
    return FakeWorld(
        rooms={
            1: FakeRoom(
                "Hall", "A bare hall. A study lies north. Steps lead down.", {"north": 2, "down": 3}
            ),
            2: FakeRoom("Study", "A dusty study.", {"south": 1}),
            3: FakeRoom("Bog", "A quick-sand bog. Obvious exits: none!"),
        },
        start=1,
    )


def test_a_trapped_player_spends_at_most_a_tenth_of_an_episode_looking(tmp_path: Path) -> None:
    """The bog of Adventureland: with memory, three episodes, no look/wait loop."""
    settings = load_settings(workdir=tmp_path)
    result = run_play(
        settings,
        game=FakeGame(world=trap_world()),
        agent=ExplorerAgent(seed=0),
        episodes=3,
        max_turns=60,
    )
    rows = [json.loads(line) for line in (result.run_dir / "transcript.jsonl").open()]
    for episode in (1, 2, 3):
        actions = [r["action"] for r in rows if r["episode"] == episode]
        idle = sum(a in IDLE for a in actions)
        assert idle <= len(actions) // 10, f"episode {episode}: {idle} look/wait turns"


def test_a_move_that_failed_before_a_door_was_opened_is_tried_again() -> None:
    """Cause (the demo world): `south` answered "You have to open the iron door first.", the
    door was then opened, but the failure (this episode's, or memory's) kept the player out."""
    asked = "You have to open the iron door first."
    hall = "Entrance Hall. In the south wall a heavy iron door stands shut."
    for memories, tried in (([], {"south": True}), ([failure("south")], {})):
        agent = ExplorerAgent(seed=5)
        before = {**{d: True for d in DIRECTIONS if d != "south"}, **tried}
        first = agent.decide(view(asked, memories=memories, tried=before, room_text=hall))
        assert first.action == "open iron door"
        done = {**before, "open iron door": False}
        reply, later = "You open the iron door.", []
        for turn in range(2, 6):
            action = agent.decide(
                view(reply, memories=memories, tried=done, turn=turn, room_text=hall)
            ).action
            later.append(action)
            done[action], reply = True, "That's fixed in place."
        assert "south" in later, later


def test_a_score_objective_neither_needs_the_exact_words_nor_pulls_the_player_back() -> None:
    """Cause (the demo world): the objective wanted 'open iron door', the player scored by
    'open door'; the objective stayed and its route pulled the player back to the hall."""

    class Scores(MemoryObjectiveDiscoverer):
        def discover(self, data: ObjectiveInput) -> list[Objective]:
            return [
                Objective(text="s", kind="score", target_location_id=1, action="open iron door"),
                Objective(text="t", kind="score", target_location_id=2, action="take crown"),
            ]

    tracker = ObjectiveTracker(Scores(None, MapGraph()))
    tracker.rediscover(
        ObjectiveInput(request=ContextRequest(game_state=GameState(), location_id=1), turn=1)
    )
    [done] = tracker.observe(2, 1, 1, "open door", 1)
    assert done.action == "open iron door" and tracker.target() == 2
    assert tracker.observe(3, 2, 3, "south", 0) == [] and tracker.active == []


def test_a_move_that_was_only_held_up_is_tried_again_once_the_way_is_opened() -> None:
    """Cause (Zork I): `west` answered "The kitchen window is closed." (no refusal, so not a
    failure, but it left the player in place); after `open window` it was never tried again."""
    agent = ExplorerAgent(seed=6)
    others = {d: True for d in DIRECTIONS if d != "west"}
    obs = GameObservation(text="Behind House.", location_id=79, objects=["kitchen window"])

    def step(text: str, tried: dict[str, bool], turn: int) -> str:
        seen = obs.model_copy(update={"text": text})
        return agent.decide(
            AgentView(episode=1, turn=turn, observation=seen, tried_here=dict(tried))
        ).action

    tried = {**others, "open window": True, "take window": True}
    assert step("Behind House.", tried, 1) == "west"
    tried["west"] = False
    tried.pop("open window")
    assert step("The kitchen window is closed.", tried, 2) == "open window"
    tried["open window"] = False
    later = [step("You open the window.", tried, 3)]
    assert later == ["west"]


def test_a_move_into_a_look_alike_room_of_a_maze_is_a_move() -> None:
    """Cause (Inhumane's desert): every step in the desert keeps the same room id; counting
    those steps as "left in place" trapped the player in the stuck ladder."""
    agent = ExplorerAgent(seed=7)
    desert = "In the Desert\nAll you can see in any direction is sand."
    tried = {d: True for d in DIRECTIONS if d != "north"}
    obs = GameObservation(text=desert, location_id=30, location_name="In the Desert")
    first = agent.decide(AgentView(episode=1, turn=1, observation=obs, tried_here=tried))
    assert first.action == "north"
    tried["north"] = False
    again = agent.decide(AgentView(episode=1, turn=2, observation=obs, tried_here=tried))
    # a move (back the way it came: retracing among look-alike rooms, see
    # test_explorer_progress.py), not the stuck ladder's `stand up`
    assert again.action == "south", again
