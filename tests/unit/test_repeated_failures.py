"""Why the offline player repeated known failures with memory (issue 29's last acceptance point),
one test per cause found in the shared games' transcripts (bench/lessons_bench.py), each as the
turn that showed it:

- the failure is not in the prompt: one ledger per object, 12 shown, the rest "+N more";
- the player thinks the state changed when only the words did not refuse ("You must tell me how
  to do that to a pile of leaves." after `open pile`) and retries memory's failed moves;
- a change here makes every failed move of memory's worth a try, named as a way or not;
- a no-op of the place ("It is already open.") is stored nowhere, so it is sent every episode;
- the player takes what it holds, or what a "Got" memory names but is not in sight, by a name
  the parser refuses ("take rusty axe (magic word- bunyon -on it)");
- the parser refuses a verb ("That's not a verb I recognise.") the player keeps sending;
- a refusal filed as "Later, take phone: refused" on a memory of what happened is not read;
- trapped, with nothing new left, the player retries its failures every turn (and comes back
  to the trap every episode); a retry of a failure should wait until the state changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cairn.agents.explorer import DIRECTIONS, ExplorerAgent, remembered_failures
from cairn.agents.explorer.trap_notes import trap_rooms
from cairn.agents.explorer.words import remembered_procedures
from cairn.container import build_container
from cairn.interfaces.agent import AgentDecision, AgentView
from cairn.interfaces.game import GameObservation
from cairn.models.game import GameState, LocationState, TurnOutcome
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope
from cairn.play.objectives import RouteGuard
from cairn.services.context import ContextRequest, LocationMemoryBuilder
from cairn.services.map import MapGraph
from cairn.services.outcomes import failed_commands, failure_text, failure_title
from cairn.settings import load_settings

ROOM = 7
IDLE = {"look", "l", "wait", "z", "inventory", "i"}


def ledger(*commands: str, room: int = ROOM, episode: int = 1) -> MemoryEntry:
    return MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=room,
        category=MemoryCategory.FAILURE,
        title=failure_title(list(commands)),
        text=failure_text(list(commands), "You can't go that way."),
        importance=400,
        episode=episode,
    )


def view(
    text: str,
    *,
    memories: list[MemoryEntry] | None = None,
    tried: dict[str, bool] | None = None,
    turn: int = 1,
    room: int = ROOM,
    name: str = "Room",
    episode: int = 1,
    **fields: Any,
) -> AgentView:
    obs_fields = {
        k: fields.pop(k)
        for k in ("inventory", "objects", "world_changed", "location_context")
        if k in fields
    }
    obs = GameObservation(text=text, location_id=room, location_name=name, **obs_fields)
    return AgentView(
        episode=episode,
        turn=turn,
        observation=obs,
        memories=memories or [],
        tried_here=dict(tried or {}),
        **fields,
    )


# -- the failure is not in the prompt ---------------------------------------------------------


class _Reader:
    """The memory a location builder reads: one room's memories."""

    def __init__(self, entries: list[MemoryEntry]) -> None:
        self.entries = entries

    def location_record(self, location_id: int) -> None:
        return None

    def location_memories(self, location_id: int) -> list[MemoryEntry]:
        return self.entries


def test_every_failed_command_of_a_busy_room_is_in_the_prompt_the_player_reads() -> None:
    """Rickety Fence (Loose Ends) had 27 ledgers, one per thing; the prompt showed 12 and
    "+15 more", and the player sent `open tree` again every episode."""
    nouns = [f"thing{i}" for i in range(27)]
    entries = [ledger(f"open {n}", f"take {n}") for n in nouns]
    section = LocationMemoryBuilder(_Reader(entries)).build(  # type: ignore[arg-type]
        ContextRequest(game_state=GameState(), location_id=ROOM, location_name="Fence")
    )
    assert section is not None
    assert section.tokens <= 500
    assert all(f"open/take {n};" in section.text or f"open/take {n}." in section.text
               for n in nouns)
    assert "more memories not shown" not in section.text
    assert set(section.memory_ids) == {e.id for e in entries}, "the player reads them all"
    shown = [e for e in entries if e.id in section.memory_ids]
    assert {f"open {n}" for n in nouns} <= remembered_failures(shown)


# -- the player thinks the state changed ------------------------------------------------------


def test_a_reply_that_refuses_nothing_but_changes_nothing_does_not_make_memory_stale() -> None:
    """Zork I's clearing: `open pile` -> "You must tell me how to do that to a pile of leaves."
    (no refusal by the words, no change by the state): every move memory says fails here was
    tried again."""
    failed = [d for d in DIRECTIONS if d != "south"]
    memories = [ledger(*failed)]
    agent = ExplorerAgent(seed=1)
    objects = ["pile"]
    first = agent.decide(view("Clearing", memories=memories, objects=objects))
    assert first.action == "open pile"
    answer = "You must tell me how to do that to a pile of leaves."
    tried = {"open pile": False}
    sent = []
    for turn in range(2, 6):
        decision = agent.decide(
            view(answer, memories=memories, objects=objects, tried=tried, turn=turn,
                 world_changed=False)
        )
        sent.append(decision.action)
        tried[decision.action] = True
        answer = "That's hardly portable."
    assert not set(sent) & set(failed), sent


def test_after_a_change_only_a_remembered_move_the_room_names_is_tried_again() -> None:
    """Zork I, behind the house: `open window` changed the world; every move memory listed as
    failed there (`southeast`, `up`...) was tried again, though the room names only one way the
    window might have held up."""
    room = "Behind House. A small window to the west is slightly ajar."
    memories = [ledger("west", "southeast", "up", "northeast", "down")]
    agent = ExplorerAgent(seed=2)
    first = agent.decide(view(room, memories=memories, objects=["window"], room_text=room))
    assert first.action == "open window"
    tried = {"open window": False}
    reply = "With great effort, you open the window far enough to allow entry."
    sent = []
    for turn in range(2, 20):
        decision = agent.decide(
            view(reply, memories=memories, objects=["window"], tried=tried, turn=turn,
                 room_text=room, world_changed=turn == 2)
        )
        sent.append(decision.action)
        tried[decision.action] = decision.action not in ("west", "north", "south")
        reply = "You can't go that way."
    assert "west" in sent, "the way the room names is tried again after the change"
    assert not {"southeast", "up", "northeast", "down"} & set(sent), sent


# -- a no-op of the place is stored nowhere ----------------------------------------------------


def _memory(tmp_path: Path) -> tuple[Any, GameState]:
    service = build_container(load_settings(workdir=tmp_path)).memory_service()
    state = GameState()
    state.locations[ROOM] = LocationState(id=ROOM, name="Kitchen")
    state.scenario.current_location_id = ROOM
    return service, state


def _turn(turn: int, action: str, response: str, **fields: Any) -> TurnOutcome:
    values: dict[str, Any] = {
        "turn": turn, "action": action, "response": response,
        "location_before": ROOM, "location_before_name": "Kitchen",
        "location_after": ROOM, "location_after_name": "Kitchen",
        "score_before": 0, "score_after": 0, "world_changed": False,
    }
    return TurnOutcome(**{**values, **fields})


def test_a_no_op_of_the_place_is_filed_with_the_failures_but_not_a_take_of_a_thing_held(
    tmp_path: Path,
) -> None:
    """Zork I's kitchen: `open table` -> "It is already open." every episode, remembered
    nowhere; "You already have that!" is about the player, not the place."""
    service, state = _memory(tmp_path)
    service.record_action_outcome(state, _turn(1, "open table", "It is already open."))
    service.record_action_outcome(state, _turn(2, "stand up", "You are already standing."))
    service.record_action_outcome(
        state, _turn(3, "take pile", "You already have that!", inventory_before=["pile"],
                     inventory_after=["pile"])
    )
    service.record_action_outcome(
        state, _turn(4, "take leaves", "You already have that!", inventory_before=["bag"],
                     inventory_after=["bag"])
    )
    listed = [
        c
        for e in service.location_memories(ROOM)
        if e.category is MemoryCategory.FAILURE
        for c in failed_commands(e.text)
    ]
    assert sorted(listed) == ["open table", "stand up"]


# -- what the player sends ---------------------------------------------------------------------


def test_a_got_memory_takes_the_thing_by_its_noun_only_when_it_is_in_sight_and_not_held() -> None:
    """Adventureland: `take rusty axe magic word- bunyon -on it` ("I only understood you as far
    as..."); Zork I: `take leaflet` from "Got leaflet" while the leaflet was still in its
    closed mailbox ("You can't see any leaflet here!"), every episode."""
    got = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=ROOM, category=MemoryCategory.SUCCESS,
        title="Got rusty axe (magic word- BUNYON -on it), leaflet",
        text="'take axe' got rusty axe (magic word- BUNYON -on it).",
    )
    seen = "Lakeside. You can also see: rusty axe (magic word- BUNYON -on it). A mailbox."
    assert remembered_procedures([got], [], seen) == ["take axe"]
    opened = f"{seen}\nOpening the small mailbox reveals a leaflet."
    assert remembered_procedures([got], [], opened) == ["take axe", "take leaflet"]
    assert remembered_procedures([got], ["leaflet"], opened) == ["take axe"]
    agent = ExplorerAgent(seed=1)
    held = agent.decide(view("A kitchen.", objects=["sack"], inventory=["brown sack"]))
    assert held.action != "take sack", "it is held: taking it again does nothing"


def test_a_verb_the_game_does_not_recognise_is_noted_and_never_sent_again() -> None:
    """Gold: `northeast` -> "That's not a verb I recognise." in room after room."""
    agent = ExplorerAgent(seed=4)
    agent.decide(view("A hall.", tried={d: True for d in DIRECTIONS if d != "northeast"}))
    tried = {d: True for d in DIRECTIONS}
    said = agent.decide(view("That's not a verb I recognise.", tried=tried, turn=2))
    assert said.remember == "The game does not know the word 'northeast'."
    elsewhere = [
        agent.decide(view("A yard.", room=8, turn=t, tried={"south": True})).action
        for t in range(3, 13)
    ]
    assert "northeast" not in elsewhere


def test_a_later_refusal_on_a_memory_of_what_happened_is_a_known_failure() -> None:
    """HHGG: "Result of 'take phone'" said "Later, take phone: refused (...)"; the player tried
    it from the bed again every episode. What was not held or not in sight is no failure."""
    happened = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=ROOM, category=MemoryCategory.DISCOVERY,
        title="Result of 'take phone'",
        text=(
            "You lunge for it. Later, take phone: refused (Ep3, T21: \"You can't reach it.\")."
            " Later, take note: no note in sight (Ep3, T22)."
        ),
    )
    assert remembered_failures([happened]) == {"take phone"}


# -- trapped -----------------------------------------------------------------------------------


def test_trapped_the_player_tries_new_things_then_notes_the_trap_and_keeps_out_of_it() -> None:
    """Adventureland's bog ("Obvious exits: none!"): every move failed, then the player sent
    one of its failures every turn for 170 turns, and came back through the same way the next
    episode."""
    agent = ExplorerAgent(seed=5)
    lakeside, bog = 24, 30
    agent.decide(view("Lakeside.", room=lakeside, name="Lakeside", route_to_target=["down"]))
    text = "Bog. Obvious exits: none! You can also see: *SMALL STATUE OF A BLUE OX*"
    tried: dict[str, bool] = {}
    decisions: list[AgentDecision] = []
    reply = text
    for turn in range(2, 60):
        decision = agent.decide(
            view(reply, room=bog, name="Bog", tried=tried, turn=turn, room_text=text,
                 objects=["*small statue of a blue ox*"], inventory=["rusty axe"],
                 world_changed=False)
        )
        decisions.append(decision)
        if tried.get(decision.action):
            break
        tried[decision.action] = True
        reply = "You can't go that way."
    sent = [d.action for d in decisions]
    first_retry = next((i for i, a in enumerate(sent) if a in sent[:i]), len(sent))
    assert first_retry >= 40, f"new things first: {len(set(sent))} tried before a retry"
    assert not IDLE & set(sent)
    notes = [d.remember for d in decisions if d.remember]
    assert len(notes) == 1 and notes[0].startswith("No way out of Bog (L30) was found")
    assert "Ways in: 'down' from Lakeside (L24)." in notes[0]
    noted = next(d for d in decisions if d.remember)
    assert noted.remember_tags == [f"trap:{bog}"]
    assert [(w.command, w.source) for w in noted.remember_ways_in] == [("down", lakeside)]
    # the note's fields are what the player reads back: its text may say anything (a person's
    # rewording), and an older note with only the text is read from it
    note = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=bog, category=MemoryCategory.NOTE,
        title="No way out", text="A bog: stuck here.", importance=900,
        tags=noted.remember_tags, ways_in=noted.remember_ways_in,
    )
    assert trap_rooms([note]) == {bog: [("down", lakeside)]}
    older = note.model_copy(update={"text": notes[0], "tags": [], "ways_in": []})
    assert trap_rooms([older]) == {bog: [("down", lakeside)]}
    again = ExplorerAgent(seed=5)
    again.new_episode(2)
    steps = [
        again.decide(
            view("Lakeside.", room=lakeside, name="Lakeside", nearby=[note], turn=t,
                 route_to_target=["down"], unexplored_exits=["down"],
                 tried={d: True for d in DIRECTIONS if d not in ("down", "north")})
        ).action
        for t in range(1, 4)
    ]
    assert "down" not in steps, steps
    graph = MapGraph()
    graph.add_connection(lakeside, bog, action="down")
    guard = RouteGuard(graph)
    guard.trap_rooms = set(trap_rooms([note]))
    assert guard.unsafe_room(bog) and not guard.safe_target(lakeside, bog)


def test_a_failure_of_this_episode_is_tried_again_first_once_something_has_changed() -> None:
    """Planetfall's brig: with nothing new left, the player cycled through its failures in the
    order it had tried them. A failure is worth another try once the state has changed since it
    failed (here: an item is held that was not); that comes first, after the new item's own
    untried verbs."""
    agent = ExplorerAgent(seed=6)
    tried: dict[str, bool] = {}
    before: list[str] = []
    decisions: list[AgentDecision] = []
    for turn in range(1, 80):
        inventory = ["brass key"] if turn > 20 else []
        decision = agent.decide(
            view("Brig.", tried=tried, turn=turn, inventory=inventory, world_changed=False)
        )
        if turn <= 20:
            before.append(decision.action)
        elif decision.action in before:
            decisions.append(decision)
            break
        tried[decision.action] = True
    [retry] = decisions
    assert "something has changed since it failed" in retry.reasoning, retry.reasoning
    assert not IDLE & set(before)


# -- found on the games nobody tuned for (TextWorld) and on the deaths they showed ---------------


def test_the_player_answers_which_thing_it_meant_before_it_moves() -> None:
    """TextWorld kitchen: `take apple` -> "Which do you mean, the yellow apple or the green
    apple?"; the next command, `west`, was read as the answer ("I only understood you as far as
    wanting to take west.") and the way out was filed as failed. And two things with one noun are
    named by their names."""
    agent = ExplorerAgent(seed=1)
    objects = ["yellow apple", "green apple", "door"]
    first = agent.decide(view("A kitchen.", objects=objects))
    assert first.action == "open yellow apple", "not the ambiguous `open apple`"
    asked = "Which do you mean, the yellow apple or the green apple?"
    answer = agent.decide(view(asked, objects=objects, tried={first.action: True}, turn=2))
    assert answer.action == "yellow apple"


def test_where_the_game_says_it_is_dark_a_carried_light_is_lit_first() -> None:
    """Zork I without memory: up into the attic with an unlit lantern, a move in the dark, a
    grue (6 to 12 of 19 episodes)."""
    dark = "You have moved into a dark place. It is pitch black. You are likely to be eaten."
    decision = ExplorerAgent(seed=1).decide(view(dark, inventory=["brass lantern"]))
    assert decision.action == "turn on lantern"


def test_a_way_that_once_needed_a_step_first_gets_that_step_first() -> None:
    """TextWorld treasure hunt: every episode `east` -> "You have to open the gate first.",
    though the way's memory said so."""
    way = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=ROOM, category=MemoryCategory.NOTE,
        title="'east' leads to Cookhouse",
        text=(
            "'east' from here reaches Cookhouse (L44). Later, east: refused (Ep3, T4: \"You have"
            " to open the gate first.\")."
        ),
        via="east", leads_to=44,
    )
    agent = ExplorerAgent(seed=1)
    first = agent.decide(view("A yard.", memories=[way], route_to_target=["east"]))
    assert first.action == "open gate"
    then = agent.decide(
        view("You open the gate.", memories=[way], route_to_target=["east"], turn=2,
             tried={"open gate": False})
    )
    assert then.action == "east"


def test_a_thing_the_game_said_was_not_here_is_taken_once_a_change_shows_it() -> None:
    """TextWorld bedroom: "Got old key" sent `take key` at once (the intro names the key) ->
    "You can't see any such thing." (it was in the closed drawer); after "You open the chest
    drawer, revealing an old key." it was never tried again, and the player never left."""
    got = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=ROOM, category=MemoryCategory.SUCCESS,
        title="Got old key", text="'take key' got old key.",
    )
    room = "Retrieve the old key from the chest drawer. You make out a closed chest drawer."
    agent = ExplorerAgent(seed=1)
    objects = ["chest drawer"]
    first = agent.decide(view(room, memories=[got], objects=objects, room_text=room))
    assert first.action == "take key"
    tried = {"take key": True}
    gone = "You can't see any such thing."
    second = agent.decide(
        view(gone, memories=[got], objects=objects, room_text=room, tried=tried, turn=2)
    )
    assert second.action == "open drawer"
    tried["open drawer"] = False
    shown = "You open the chest drawer, revealing an old key."
    again = agent.decide(
        view(shown, memories=[got], objects=objects, room_text=room, tried=tried, turn=3,
             world_changed=True)
    )
    assert again.action == "take key"


def test_where_memory_says_the_player_died_of_no_command_it_leaves_by_a_known_way() -> None:
    """Adventureland's limbo: "Died in Misty Room (an event)" blamed no move; the player tried
    another unknown exit every episode and died by it (down, then west, then down again)."""
    ending = MemoryEntry(
        scope=MemoryScope.WORLD, location_id=ROOM, category=MemoryCategory.DANGER,
        title="Died in Misty Room at turn 76 (an event)", text="Here's a guy with a pitchfork!",
        tags=["ending", "cause:plot"],
    )
    up = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=ROOM, category=MemoryCategory.NOTE,
        title="'up' leads to Branch", text="'up' from here reaches Branch (L34).",
        via="up", leads_to=34,
    )
    agent = ExplorerAgent(seed=3)
    decision = agent.decide(
        view("Misty Room. Obvious exits: South, East, West, Up, Down.", memories=[up],
             world_notes=[ending], unexplored_exits=["south", "west", "down"])
    )
    assert decision.action == "up"


def test_a_route_step_that_is_no_move_of_the_players_own_is_not_followed() -> None:
    """Adventureland: `take web` (a spider's bite carried the player to limbo) was on the map
    as a way, and the route to the nearest unexplored exit took it again."""
    decision = ExplorerAgent(seed=1).decide(
        view("Tree Top.", route_to_unexplored=["take web", "down"], tried={"down": True},
             route_to_target=["take web"])
    )
    assert decision.action != "take web"


def test_a_long_memory_is_shortened_before_a_failure_leaves_the_prompt() -> None:
    """TextWorld bedroom: a score's memory quoting the whole next room (~250 tokens) kept its
    place while the failure ledgers went; shortened, it keeps what an agent acts on."""
    room = "There is a closed wooden door leading east and a chest drawer close by. " * 14
    scored = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=ROOM, category=MemoryCategory.SUCCESS,
        title="Scored 1 by 'east'",
        text=f"'east' gained 1 points: {room} Needs held: old key. Steps first: (1) open door.",
        importance=800, score_delta=1,
    )
    entries = [scored, *(ledger(f"open thing{i}", f"take thing{i}") for i in range(30))]
    request = ContextRequest(game_state=GameState(), location_id=ROOM, location_name="Bedroom")
    section = LocationMemoryBuilder(_Reader(entries)).build(request)  # type: ignore[arg-type]
    assert section is not None and section.tokens <= 500
    assert set(section.memory_ids) == {e.id for e in entries}
    assert "Needs held: old key. Steps first: (1) open door." in section.text
    whole = LocationMemoryBuilder(_Reader([scored]), max_tokens=5000).build(request)  # type: ignore[arg-type]
    assert whole is not None and room.strip() in " ".join(whole.text.split())
