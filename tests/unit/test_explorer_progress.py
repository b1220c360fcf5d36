"""Progress with memory (issue 36, item 6): in a room memory knows from an earlier episode the
offline player heads for what it has not seen yet before it tries the room's things again; it
walks memory's ways to rooms it has not entered this episode; it opens what stood in a known
way; it drops what the game will not let it leave with. Without memory it explores as before."""

from __future__ import annotations

from cairn.agents.explorer import DIRECTIONS, ExplorerAgent
from cairn.interfaces.agent import AgentView
from cairn.interfaces.game import GameObservation
from cairn.models.lesson import Effect, EffectKind, Evidence, Lesson
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope

ROOM = "A dusty room. There is a wooden chest here."


def obs(
    text: str = ROOM,
    *,
    room: int = 7,
    inventory: list[str] | None = None,
    world_changed: bool | None = None,
) -> GameObservation:
    return GameObservation(
        text=text,
        location_id=room,
        location_name=f"Room {room}",
        objects=["wooden chest"] if room == 7 else [],
        inventory=inventory or [],
        world_changed=world_changed,
    )


def way(room: int, command: str, to: int, episode: int = 1) -> MemoryEntry:
    """Memory's move note: `command` from `room` leads to `to` (written in `episode`)."""
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=room,
        category=MemoryCategory.NOTE,
        title=f"'{command}' leads to Room {to}",
        text=f"'{command}' from here reaches Room {to} (L{to}).",
        via=command,
        leads_to=to,
        episode=episode,
    )


def visit(room: int, episode: int = 1) -> MemoryEntry:
    """A note of a visit to `room` in `episode`."""
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=room,
        category=MemoryCategory.NOTE,
        title=f"Visit to Room {room}",
        text="Dusty.",
        episode=episode,
    )


def view(
    observation: GameObservation,
    *,
    episode: int = 2,
    turn: int = 1,
    memories: list[MemoryEntry] | None = None,
    nearby: list[MemoryEntry] | None = None,
    tried: dict[str, bool] | None = None,
    unexplored: list[str] | None = None,
) -> AgentView:
    return AgentView(
        episode=episode,
        turn=turn,
        observation=observation,
        room_text=observation.text,
        memories=memories or [],
        nearby=nearby or [],
        tried_here=dict(tried or {}),
        unexplored_exits=unexplored or [],
    )


def test_in_a_room_memory_knows_an_untried_way_comes_before_its_things() -> None:
    """The room's things were tried when it was first met (their outcomes are memory's):
    an untried direction comes first."""
    agent = ExplorerAgent(seed=1)
    decision = agent.decide(view(obs(), memories=[visit(7)]))
    assert decision.action not in {"open chest", "take chest"}
    assert "untried here" in decision.reasoning


def test_without_memory_the_things_here_still_come_first() -> None:
    """The baseline explores as before: the things here, then the ways."""
    decision = ExplorerAgent(seed=1).decide(view(obs(), episode=1))
    assert decision.action in {"open chest", "take chest"}


def test_a_memory_written_this_episode_does_not_make_a_room_known() -> None:
    decision = ExplorerAgent(seed=1).decide(
        view(obs(), memories=[visit(7, episode=2)])
    )
    assert decision.action in {"open chest", "take chest"}


def test_the_player_walks_memorys_ways_to_a_room_it_has_not_entered() -> None:
    """Room 8 was entered this episode; memory says north of it lies room 9, not entered:
    from room 7 the way there is east, then north."""
    agent = ExplorerAgent(seed=1)
    agent.decide(view(obs("A bare hall.", room=8), memories=[way(8, "west", 7)]))
    decision = agent.decide(
        view(
            obs(),
            turn=2,
            memories=[way(7, "east", 8)],
            nearby=[way(8, "north", 9), way(8, "west", 7)],
        )
    )
    assert decision.action == "east"
    assert "memory knows" in decision.reasoning


def test_a_room_memory_notes_as_a_trap_is_not_headed_for() -> None:
    """Room 9, north of room 8, is a trap (no way out was found): from room 6 the player does
    not walk east and north into it."""
    trap = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=9,
        category=MemoryCategory.NOTE,
        title="No way out of Room 9",
        text="No way out of Room 9 (L9) was found: every move and every way out of a position"
        " tried there failed (Ep1, T5). Ways in: 'north' from Room 8 (L8).",
        episode=1,
    )
    agent = ExplorerAgent(seed=1)
    agent.decide(view(obs("A bare hall.", room=8), memories=[way(8, "west", 6)]))
    decision = agent.decide(
        view(
            obs("A bare room.", room=6),
            turn=2,
            memories=[way(6, "east", 8)],
            nearby=[way(8, "north", 9), trap],
        )
    )
    assert "memory knows" not in decision.reasoning


def test_what_stood_in_a_known_way_is_opened_then_the_way_is_taken() -> None:
    """Memory says south leads to room 9; this episode the game answered "You can't, since
    the door is in the way.": open the door, then south again (memory knew of opening it:
    a change memory knows of is otherwise no news that makes a refusal worth another try)."""
    agent = ExplorerAgent(seed=1)
    opened = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=7,
        category=MemoryCategory.SUCCESS,
        title="'open door' worked",
        text="'open door' changed something here: You open the door.",
        episode=1,
    )
    memories = [way(7, "south", 9), opened]
    room = "A hall. There is a door here."

    def here(text: str, tried: dict[str, bool], turn: int, changed: bool | None = None) -> str:
        observed = obs(text, world_changed=changed).model_copy(update={"objects": ["door"]})
        return agent.decide(view(observed, turn=turn, memories=memories, tried=tried)).action

    assert here(room, {}, 1) == "south"
    refused = "You can't, since the door is in the way."
    assert here(refused, {"south": True}, 2) == "open door"
    assert here("You open the door.", {"south": True, "open door": False}, 3, True) == "south"


def test_a_move_refused_for_a_thing_carried_drops_it() -> None:
    agent = ExplorerAgent(seed=1)
    held = ["can of hairspray"]
    memories = [way(7, "north", 9)]
    first = agent.decide(view(obs(inventory=held), memories=memories))
    assert first.action == "north"
    refusal = "If you leave the store with the hairspray, that would be shoplifting."
    decision = agent.decide(
        view(obs(refusal, inventory=held), turn=2, memories=memories, tried={"north": False})
    )
    assert decision.action == "drop hairspray"


def changed(room: int, command: str, episode: int = 1) -> MemoryEntry:
    """A lesson: `command` changed something in `room`."""
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=room,
        category=MemoryCategory.SUCCESS,
        title=f"'{command}' worked",
        text=f"'{command}' changed something here.",
        episode=episode,
        lesson=Lesson(
            action=command,
            effect=Effect(kind=EffectKind.CHANGED),
            evidence=Evidence.OBSERVED,
        ),
    )


def test_in_a_room_memory_knows_what_changed_something_is_done_again_first() -> None:
    """What worked leads: `turn on light` changed the room in an earlier episode, so it is
    sent before anything else here; a move or a take that "changed" something is not."""
    memories = [changed(7, "north"), changed(7, "take chest"), changed(7, "turn on light")]
    decision = ExplorerAgent(seed=1).decide(view(obs(), memories=memories))
    assert decision.action == "turn on light"
    assert "changed something" in decision.reasoning


def test_lost_among_look_alike_rooms_the_player_retraces_its_steps() -> None:
    """A maze whose rooms share one id ("In the Desert" again after 'east'): once everything
    here has been tried, the moves that led in are undone (west after east), not wandered."""
    agent = ExplorerAgent(seed=1)
    tried = {d: True for d in DIRECTIONS if d != "east"}
    desert = "Room 5\nSand in every direction."
    assert agent.decide(view(obs(desert, room=5), episode=1, tried=tried)).action == "east"
    decision = agent.decide(
        view(obs(desert, room=5), episode=1, turn=2, tried={**tried, "east": False})
    )
    assert decision.action == "west"
    assert "retracing" in decision.reasoning


def test_what_changed_the_room_comes_before_the_procedures_remembered_there() -> None:
    """A thing memory says was got here waits for the light memory says was switched on
    here: in the dark the take fails ("It's too dark to see!") and counts as a repeat."""
    got = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=7,
        category=MemoryCategory.SUCCESS,
        title="Got chest",
        text="Got chest.",
        episode=1,
    )
    memories = [got, changed(7, "turn on light")]
    decision = ExplorerAgent(seed=1).decide(view(obs(), memories=memories))
    assert decision.action == "turn on light"


def test_a_dark_room_is_headed_for_only_with_a_light_at_hand() -> None:
    """What the dark hid there is unexplored: with a light to light (or lit), a room a
    darkness lesson names is a room to head for; without one it is not (Zork I, seed 2: the
    route to the attic, whose last step the dark held back, sent the player to and fro
    between the kitchen and the living room for 150 turns)."""
    from cairn.agents.explorer.frontier import Atlas

    atlas = Atlas(ways={1: {"up": 2}}, dark={2})
    atlas.visit(1)
    assert atlas.unentered() == set()
    atlas.light_at_hand = True
    assert atlas.unentered() == {2}


def test_a_take_refused_for_the_load_then_is_no_failure_of_the_thing() -> None:
    """Zork I: 'take lantern' answered "You're holding too many things already!" in episode 1;
    remembered as a failure, the lantern was never taken again (nor the dark attic entered)."""
    from cairn.agents.explorer.words import remembered_failures
    from cairn.models.memory import Ledger

    def failure(answer: str) -> MemoryEntry:
        return MemoryEntry(
            scope=MemoryScope.LOCATION,
            location_id=7,
            category=MemoryCategory.FAILURE,
            title="Take lantern",
            text="Tried here, did not work: 'take lantern'.",
            ledger=Ledger(commands=["take lantern"], answer=answer),
        )

    assert remembered_failures([failure("You're holding too many things already!")]) == set()
    assert remembered_failures([failure("The lantern is fixed in place.")]) == {"take lantern"}


def test_with_everything_here_tried_the_player_heads_for_a_room_it_only_passed_through() -> None:
    """Room 8 was passed through this episode (entered, then left at once); in room 6, which
    memory knows and where everything has been tried, the player walks back to room 8 to
    search it rather than wander by the least-used way out."""
    agent = ExplorerAgent(seed=1)
    agent.decide(view(obs("A bare hall.", room=8), memories=[way(8, "west", 6)]))
    tried = {d: d != "east" for d in DIRECTIONS}
    decision = agent.decide(
        view(obs("A bare room.", room=6), turn=2, memories=[way(6, "east", 8)], tried=tried)
    )
    assert decision.action == "east"
    assert "not yet searched" in decision.reasoning


def test_a_searched_room_is_headed_for_again_only_once_it_changed() -> None:
    from cairn.agents.explorer.episode import Episode
    from cairn.agents.explorer.frontier import Atlas

    atlas, episode = Atlas(ways={1: {"up": 2}, 2: {"down": 1}}), Episode()
    atlas.visit(1)
    atlas.visit(2)
    assert atlas.unfinished(episode) == {1, 2}
    atlas.done_at[2] = 5
    assert atlas.walk(1, episode, atlas.unfinished(episode)) is None
    episode.changed[2] = 9
    assert atlas.walk(1, episode, atlas.unfinished(episode)) == ("up",)


def test_attacked_by_a_character_here_the_player_goes_back_the_way_it_came() -> None:
    """A thug in the street slashing at the player: it goes back the way it came,
    rather than try the street's things while the attack goes on; once the retreat was sent
    (it did not help), it does not insist."""
    from cairn.agents.explorer.words import opposite

    agent = ExplorerAgent(seed=1)
    went = agent.decide(view(obs("A lobby.", room=8), episode=1, tried={"east": True})).action
    assert opposite(went) is not None  # a compass move led into the street
    street = "The thug begins slashing the knife at you."
    first = GameObservation(
        text=street, location_id=9, location_name="Street", npcs_present=["thug"]
    )
    decision = agent.decide(view(first, episode=1, turn=2))
    assert decision.action == opposite(went)
    assert "thug attacks me here" in decision.reasoning
    again = agent.decide(view(first, episode=1, turn=3))
    assert again.action != opposite(went)


def test_a_character_here_that_attacks_no_one_is_no_reason_to_leave() -> None:
    agent = ExplorerAgent(seed=1)
    calm = GameObservation(
        text="The thug leans on the wall.", location_id=9, location_name="Street",
        npcs_present=["thug"],
    )
    agent._episode.came[9] = "south"
    assert "attacks me" not in agent.decide(view(calm, episode=1)).reasoning
