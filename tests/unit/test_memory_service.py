"""MemoryService with fakes: scopes, cursors, NPC selection, failures, supersession, notes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.events import events
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import fiction_memory_service
from cairn.models.game import GameState, LocationState, NPCInstance, TurnOutcome
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
    SynthesisDecision,
)
from cairn.services.map import MapGraph
from cairn.services.memory_rules import MessagesByLocation
from cairn.services.policy import MemoryPolicy, prune, scope_key
from cairn.testing import FakeSummarizer


class Env:
    def __init__(self, **policy: int) -> None:
        self.store = InMemoryStore()
        self.summarizer = FakeSummarizer()
        self.publisher = EventPublisher()
        self.map = MapGraph()
        self.service = fiction_memory_service(
            self.store, self.summarizer, self.publisher, self.map, MemoryPolicy(**policy)
        )
        self.gs = GameState()
        for loc_id, name in [(1, "Tavern"), (2, "Street"), (3, "Cellar")]:
            self.gs.locations[loc_id] = LocationState(id=loc_id, name=name)
        self.gs.npcs["bram"] = NPCInstance(instance_id="bram", name="Bram", current_location_id=1)
        self.gs.npcs["lia"] = NPCInstance(instance_id="lia", name="Lia", current_location_id=1)
        self.gs.npcs["ovo"] = NPCInstance(instance_id="ovo", name="Ovo", current_location_id=2)

    def at(self, loc_id: int) -> None:
        self.gs.scenario.current_location_id = loc_id

    def say(
        self, text: str, present: list[str] | None = None, mentioned: list[str] | None = None
    ) -> int:
        return self.gs.add_message(text, npcs_present=present, npcs_mentioned=mentioned).index


@pytest.fixture
def env() -> Env:
    return Env()


def test_location_exit_creates_entry_and_advances_cursor(env: Env) -> None:
    env.at(2)
    env.say("A rainy street.")
    env.at(1)
    first = env.say("You enter the tavern.")
    last = env.say("The fire crackles.")
    env.service.on_location_exit(env.gs)
    [entry] = env.service.location_memories(1)
    assert entry.scope is MemoryScope.LOCATION and entry.location_id == 1
    assert entry.text == f"location 1 messages {[first, last]}"
    assert entry.since_message_index == last
    assert env.gs.scenario.last_location_message_index == {1: last}


def test_messages_are_filtered_by_location_id_not_name(env: Env) -> None:
    env.gs.locations[3].name = "Tavern"  # same name, different room
    env.at(3)
    env.say("Another room called Tavern.")
    env.at(1)
    mine = env.say("The real tavern.")
    env.service.on_location_exit(env.gs)
    assert env.summarizer.calls == [("location", "1", [mine])]


def test_no_message_is_summarized_twice(env: Env) -> None:
    env.at(1)
    a = env.say("One.")
    env.service.on_location_exit(env.gs)
    env.service.on_location_exit(env.gs)  # nothing new: no second summary
    b = env.say("Two.")
    env.service.on_location_exit(env.gs)
    location_calls = [idx for scope, _, idx in env.summarizer.calls if scope == "location"]
    assert location_calls == [[a], [b]]


def test_memory_service_npc_entries_only_for_present_and_mentioned(env: Env) -> None:
    """Seed 004: an NPC memory is for an NPC present and mentioned in one message. Lia stands
    by unnamed, then is talked about after she left; Ovo is only talked about: neither gets
    one. Before, present OR mentioned was enough."""
    env.at(1)
    env.say("Bram pours ale.", present=["bram", "lia"])
    env.gs.npcs["lia"].current_location_id = 2  # Lia leaves before the player
    env.say("Someone says Lia has gone home.", mentioned=["lia"])
    env.say("They ask about Ovo.", mentioned=["ovo"])
    env.say("The fire crackles.")
    env.service.on_location_exit(env.gs)
    assert {e.npc_ids[0] for e in env.store.entries(scope=MemoryScope.NPC)} == {"bram"}
    assert env.service.npc_memories("lia") == env.service.npc_memories("ovo") == []
    assert set(env.gs.scenario.last_npc_message_index) == {"bram"}


def test_an_npc_with_no_presence_list_is_present_where_it_stands(env: Env) -> None:
    """A message that lists no one present: an NPC is there when its current location is the
    message's (the seed's `npc.current_location_id == from_location_id`)."""
    env.at(1)
    env.say("Bram and Ovo argue about the rent.")  # Bram stands in the tavern, Ovo outside
    env.service.on_location_exit(env.gs)
    assert {e.npc_ids[0] for e in env.store.entries(scope=MemoryScope.NPC)} == {"bram"}


def test_npc_window_has_one_message_of_context_either_side(env: Env) -> None:
    env.at(1)
    before = env.say("A stranger sits down.")
    mention = env.say("Ovo asks about the road.", present=["ovo"], mentioned=["ovo"])
    after = env.say("Nobody answers.")
    env.say("Rain.")
    env.say("More rain.")
    env.service.on_location_exit(env.gs)
    npc_calls = [c for c in env.summarizer.calls if c[0] == "npc"]
    assert npc_calls == [("npc", "ovo", [before, mention, after])]


def test_world_event_creates_world_memory_over_bounded_window() -> None:
    env = Env(world_message_window=3)
    env.at(1)
    idx = [env.say(f"Line {n}.") for n in range(6)]
    env.service.on_world_event(env.gs, "quest_completed", ["main"], {"quest_id": "q1"})
    [entry] = env.service.world_memories()
    assert entry.quest_id == "q1"
    assert entry.tags == ["world:quest_completed", "main"]
    assert env.summarizer.calls == [("world", "quest_completed", idx[-3:])]
    assert env.gs.scenario.last_world_message_index == idx[-1]
    # nothing new since the cursor: still remembered, from the latest message
    env.service.on_world_event(env.gs, "act_progressed", related={"act_id": "act-2"})
    assert [e.title for e in env.service.world_memories()] == [
        "Quest completed: q1",
        "Act progressed: act-2",
    ]
    assert env.summarizer.calls[-1] == ("world", "act_progressed", idx[-1:])


@pytest.mark.parametrize("scope", ["location", "npc", "world"])
def test_failing_summarizer_loses_nothing_and_keeps_cursors(env: Env, scope: str) -> None:
    env.at(1)
    env.say("Bram nods.", present=["bram"])
    env.service.on_world_event(env.gs, "act_progressed")
    env.service.on_location_exit(env.gs)
    before = env.store.entries()
    cursors = env.gs.scenario.model_copy(deep=True)
    env.say("Bram frowns.", present=["bram"])
    env.summarizer.fail_scopes = {scope}
    failed: list[str] = []
    with events.summary_failed.connected_to(lambda sender, **kw: failed.append(kw["scope"])):
        env.service.on_world_event(env.gs, "quest_completed")
        env.service.on_location_exit(env.gs)
    assert failed == [scope]
    assert env.service.summary_failures == 1
    after = env.store.entries()
    assert [e.id for e in after if e.id in {b.id for b in before}] == [e.id for e in before]
    if scope == "location":
        assert env.gs.scenario.last_location_message_index == cursors.last_location_message_index
    elif scope == "npc":
        assert env.gs.scenario.last_npc_message_index == cursors.last_npc_message_index
    else:
        assert env.gs.scenario.last_world_message_index == cursors.last_world_message_index
    env.summarizer.fail_scopes = set()  # the retry later picks up what was skipped
    kind = {"location": MemoryScope.LOCATION, "npc": MemoryScope.NPC, "world": MemoryScope.WORLD}
    count = len(env.store.entries(scope=kind[scope]))
    if scope == "world":
        env.service.on_world_event(env.gs, "quest_completed")
    else:
        env.service.on_location_exit(env.gs)
    assert len(env.store.entries(scope=kind[scope])) == count + 1


def test_cursor_does_not_move_when_the_store_write_fails(env: Env) -> None:
    env.at(1)
    env.say("Hello.")

    class Boom(Exception):
        pass

    with pytest.raises(Boom), env.store.transaction():
        env.service.on_location_exit(env.gs)
        raise Boom
    assert env.gs.scenario.last_location_message_index == {}
    assert env.store.entries() == []


def outcome(
    turn: int, action: str, response: str, before: int = 79, after: int = 79, **kw: object
) -> TurnOutcome:
    return TurnOutcome(
        turn=turn,
        action=action,
        response=response,
        location_before=before,
        location_before_name="Behind House",
        location_after=after,
        **kw,  # type: ignore[arg-type]
    )


def test_no_trigger_means_no_synthesis_call(env: Env) -> None:
    assert env.service.record_action_outcome(env.gs, outcome(1, "wait", "Time passes.")) is None
    assert env.summarizer.requests == []


def test_memory_is_stored_at_the_source_location_with_history(env: Env) -> None:
    env.summarizer.decisions = [
        SynthesisDecision(should_remember=False),
        SynthesisDecision(
            should_remember=True,
            category=MemoryCategory.SUCCESS,
            memory_title="Enter kitchen via window",
            memory_text="Open window, enter.",
            multi_step=True,
        ),
    ]
    env.service.record_action_outcome(env.gs, outcome(47, "examine window", "x" * 120))
    env.service.record_action_outcome(env.gs, outcome(48, "open window", "Opened."))
    entry = env.service.record_action_outcome(
        env.gs, outcome(49, "enter window", "Kitchen", after=203)
    )
    assert entry is not None and entry.location_id == 79
    assert (entry.turn_start, entry.turn_end) == (47, 49)
    last = env.summarizer.requests[-1]
    assert [h.action for h in last.history] == ["examine window", "open window"]
    assert "location_changed" in last.triggers and "first_visit" in last.triggers


def test_first_visit_means_never_visited_before(env: Env) -> None:
    with env.store.transaction() as tx:
        tx.record_visit(203, "Kitchen", 1)
        tx.record_visit(203, "Kitchen", 1)
    env.summarizer.decisions = []
    # a new way into a room seen before is a fact of the map: no summarizer call
    moved = env.service.record_action_outcome(env.gs, outcome(1, "west", "Kitchen", after=203))
    assert env.summarizer.requests == []
    assert moved is not None and moved.title == "'west' leads to Kitchen"
    env.service.record_action_outcome(env.gs, outcome(2, "north", "Attic", after=205))
    assert "first_visit" in env.summarizer.requests[-1].triggers


def test_supersession_by_id_only_touches_the_named_memory(env: Env) -> None:
    troll_a = MemoryEntry(
        scope=MemoryScope.LOCATION,
        location_id=152,
        title="Troll accepts lunch gift",
        status=MemoryStatus.TENTATIVE,
    )
    troll_b = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=152, title="Troll accepts lunch gift later"
    )
    with env.store.transaction() as tx:
        tx.add(troll_a)
        tx.add(troll_b)
    env.summarizer.decisions = [
        SynthesisDecision(
            should_remember=True,
            category=MemoryCategory.DANGER,
            memory_title="Troll attacks after accepting gift",
            memory_text="It kills you.",
            supersedes_memory_titles=["Troll accepts lunch gift", "Troll"],
        )
    ]
    superseded: list[tuple[str, str]] = []
    with events.memory_superseded.connected_to(
        lambda sender, **kw: superseded.append((kw["old_id"], kw["new_id"]))
    ):
        new = env.service.record_action_outcome(
            env.gs, outcome(13, "north", "The troll cleaves you.", before=152, after=152, died=True)
        )
    assert new is not None
    assert env.store.get(troll_a.id).status is MemoryStatus.SUPERSEDED  # type: ignore[union-attr]
    assert env.store.get(troll_a.id).superseded_by == new.id  # type: ignore[union-attr]
    assert env.store.get(troll_b.id).status is MemoryStatus.ACTIVE  # type: ignore[union-attr]
    assert superseded == [(troll_a.id, new.id)]


def test_more_than_three_supersessions_still_store_the_new_memory(env: Env) -> None:
    olds = [
        MemoryEntry(scope=MemoryScope.LOCATION, location_id=79, title=f"Old {n}") for n in range(4)
    ]
    with env.store.transaction() as tx:
        for e in olds:
            tx.add(e)
    env.summarizer.decisions = [
        SynthesisDecision(
            should_remember=True,
            memory_title="New",
            memory_text="t",
            supersedes_memory_titles=[e.title for e in olds] + ["Ghost"],
        )
    ]
    new = env.service.record_action_outcome(env.gs, outcome(2, "look", "y" * 150))
    assert new is not None and env.store.get(new.id) is not None
    statuses = [env.store.get(e.id).status for e in olds]  # type: ignore[union-attr]
    assert statuses.count(MemoryStatus.SUPERSEDED) == 3


def test_synthesis_failure_loses_nothing(env: Env) -> None:
    keep = MemoryEntry(scope=MemoryScope.LOCATION, location_id=79, title="Keep me")
    with env.store.transaction() as tx:
        tx.add(keep)
    env.summarizer.fail = True
    assert env.service.record_action_outcome(env.gs, outcome(3, "look", "z" * 150)) is None
    assert env.store.entries() == [keep]
    assert env.service.summary_failures == 1


def test_synthesis_sees_visible_memories_with_status(env: Env) -> None:
    gone = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=79, title="Gone", status=MemoryStatus.SUPERSEDED
    )
    maybe = MemoryEntry(
        scope=MemoryScope.LOCATION, location_id=79, title="Maybe", status=MemoryStatus.TENTATIVE
    )
    with env.store.transaction() as tx:
        tx.add(gone)
        tx.add(maybe)
    env.service.record_action_outcome(env.gs, outcome(3, "look", "z" * 150))
    shown = env.summarizer.requests[-1].existing
    assert [(e.title, e.status) for e in shown] == [("Maybe", MemoryStatus.TENTATIVE)]


def test_remember_dedupes_and_bumps_importance(env: Env) -> None:
    env.at(1)
    first = env.service.remember(env.gs, "The brass key opens the cellar door", 300, 1)
    assert first is not None
    assert env.service.remember(env.gs, "the brass key opens the cellar door.", 700, 1) is None
    assert env.service.remember(env.gs, "  ", 900) is None
    [note] = env.store.entries()
    assert note.importance == 700 and note.category is MemoryCategory.NOTE
    assert env.service.top_memories(1) == [note]


def test_prune_retires_over_cap_and_never_deletes_active() -> None:
    env = Env(cap_per_location=2, superseded_kept_per_key=1)
    entries = [
        MemoryEntry(
            scope=MemoryScope.LOCATION, location_id=1, title=f"M{n}", importance=100 * (n + 1)
        )
        for n in range(4)
    ]
    with env.store.transaction() as tx:
        for e in entries:
            tx.add(e)
    lines = env.service.prune()
    assert len(env.service.location_memories(1)) == 2
    remaining = {e.title for e in env.store.entries()}
    assert {"M2", "M3"} <= remaining  # highest importance stay visible
    assert len(env.store.entries()) == 4  # retired ones stay on disk
    lines += env.service.prune()
    assert len(env.store.entries()) == 3  # 2 visible + 1 superseded kept
    assert any(line.startswith("retired") for line in lines)
    assert any(line.startswith("removed superseded") for line in lines)


def test_an_episode_end_prunes_with_the_memories_its_unit_just_staged() -> None:
    """EndEpisode stages the ending's world memory, then prunes, in one unit of work: the
    prune counts that memory (a Zork I run ended with 51 visible world memories for a cap of
    50 while a unit's reads did not see what it staged)."""
    env = Env(cap_world=2)
    env.at(1)
    env.say("The game begins.")
    env.service.on_world_event(env.gs, "quest_completed", ["main"], {"quest_id": "q1"})
    env.service.on_world_event(env.gs, "quest_completed", ["main"], {"quest_id": "q2"})
    env.say("You have won.")
    with env.store.transaction():  # as the bus runs EndEpisode
        env.service.on_world_event(env.gs, "game_won", related={"episode": 1})
        lines = env.service.prune()
    assert len(env.service.world_memories()) == 2
    assert [line.split(": ", 1)[1] for line in lines] == ["Quest completed: q1"]


memories_of_every_key = st.lists(
    st.tuples(
        st.sampled_from(["location", "npc", "world"]),
        st.integers(1, 3),  # the room, or the NPC
        st.integers(1, 900),  # importance
        st.booleans(),  # superseded
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(memories_of_every_key)
def test_prune_reads_only_the_keys_over_a_cap_and_does_what_pruning_everything_does(
    rows: list[tuple[str, int, int, bool]],
) -> None:
    """The store's counts pick the keys with work; the result is the policy run over every
    memory, and no memory of a key within its caps is read."""
    policy = {"cap_per_location": 3, "cap_per_npc": 2, "cap_world": 4, "superseded_kept_per_key": 2}
    entries = []
    for n, (scope, which, importance, superseded) in enumerate(rows):
        fields: dict[str, object] = {"title": f"M{n}", "importance": importance}
        if superseded:
            fields["status"] = MemoryStatus.SUPERSEDED
        if scope == "location":
            fields.update(scope=MemoryScope.LOCATION, location_id=which)
        elif scope == "npc":
            fields.update(scope=MemoryScope.NPC, npc_ids=[f"npc{which}", "npc9"])
        else:
            fields.update(scope=MemoryScope.WORLD)
        entries.append(MemoryEntry(**fields))  # type: ignore[arg-type]
    ours, reference = Env(**policy), InMemoryStore()
    for store in (ours.store, reference):
        with store.transaction() as tx:
            for e in entries:
                tx.add(e)
    before = reference.scope_counts()
    read: list[str] = []
    real = ours.store.entries

    def entries_read(**filters: object) -> list[MemoryEntry]:
        found = real(**filters)  # type: ignore[arg-type]
        read.extend(e.id for e in found)
        return found

    ours.store.entries = entries_read  # type: ignore[method-assign]
    lines = ours.service.prune()
    ours.store.entries = real  # type: ignore[method-assign]
    with reference.transaction() as tx:
        expected = prune(reference.entries(), MemoryPolicy(**policy), tx)  # type: ignore[arg-type]
    assert sorted(lines) == sorted(expected)
    assert ours.store.entries() == reference.entries()
    caps = MemoryPolicy(**policy)  # type: ignore[arg-type]
    for key, (visible, hidden) in before.items():
        if visible <= caps.cap_for(key[0]) and hidden <= caps.superseded_kept_per_key:
            assert not {e.id for e in entries if scope_key(e) == key} & set(read), key


def test_adjacent_memories_follow_the_map(env: Env) -> None:
    env.map.add_connection(1, 2)
    e = MemoryEntry(scope=MemoryScope.LOCATION, location_id=2, title="Street note")
    with env.store.transaction() as tx:
        tx.add(e)
    assert env.service.adjacent_memories(1) == {2: [e]}
    assert env.service.adjacent_memories(2) == {1: []}


def test_visits_count_visits(env: Env) -> None:
    for _ in range(3):
        env.at(2)
        env.service.on_location_enter(env.gs, 1)
    record = env.service.location_record(2)
    assert record is not None and record.visits == 3 and record.episodes == [1]


def test_a_move_already_remembered_from_here_does_not_call_synthesis_again(env: Env) -> None:
    with env.store.transaction() as tx:
        for _ in range(3):
            tx.record_visit(203, "Kitchen", 1)
    room_text = "Kitchen. You are in the kitchen of the white house. " * 3
    env.summarizer.decisions = [
        SynthesisDecision(should_remember=True, memory_title="west leads to Kitchen")
    ]
    stored = env.service.record_action_outcome(env.gs, outcome(1, "West", room_text, after=203))
    assert stored is not None and (stored.via, stored.leads_to) == ("west", 203)
    assert (
        env.service.record_action_outcome(env.gs, outcome(2, "west", room_text, after=203)) is None
    )
    assert len(env.summarizer.requests) == 0  # a way into a known room needs no model
    # a way into a room never visited is still news for the summarizer
    env.service.record_action_outcome(env.gs, outcome(3, "north", room_text, after=81))
    assert len(env.summarizer.requests) == 1


def test_the_same_note_about_two_places_is_two_notes(env: Env) -> None:
    first = env.service.remember(env.gs, "'north' does not work here.", 300, location_id=1)
    second = env.service.remember(env.gs, "'north' does not work here.", 300, location_id=2)
    again = env.service.remember(env.gs, "'north' does not work here.", 300, location_id=2)
    assert first is not None and second is not None and again is None
    assert sorted(m.location_id or 0 for m in env.service.top_memories(10)) == [1, 2]


# -- NPC and world exactness -------------------------------------------------------------------


def test_an_npc_is_named_by_whole_words_not_inside_other_words(env: Env) -> None:
    env.gs.npcs["ed"] = NPCInstance(
        instance_id="ed", name="Ed", aliases=["the smith"], current_location_id=1
    )
    env.at(1)
    env.say("You opened the door; it creaked.")
    env.service.on_location_exit(env.gs)
    assert env.service.npc_memories("ed") == []
    env.say("The smith nods at you.")
    env.service.on_location_exit(env.gs)
    assert len(env.service.npc_memories("ed")) == 1


def test_a_failed_npc_summary_at_one_room_is_not_skipped_by_a_later_success(env: Env) -> None:
    env.at(1)
    at_tavern = env.say("Bram hands you a map.", present=["bram"])
    env.summarizer.fail_scopes = {"npc"}
    env.service.on_location_exit(env.gs)
    assert env.service.npc_memories("bram") == []
    env.summarizer.fail_scopes = set()
    env.at(2)
    on_street = env.say("Bram waves from a doorway.", present=["bram"])
    env.service.on_location_exit(env.gs)
    [memory] = env.service.npc_memories("bram")
    npc_calls = [idx for scope, _, idx in env.summarizer.calls if scope == "npc"]
    assert at_tavern in npc_calls[-1] and on_street in npc_calls[-1]
    assert memory.title == "Bram at Tavern and Street"
    assert env.gs.scenario.last_npc_message_index["bram"] == on_street


def test_an_objective_and_its_quest_back_to_back_are_two_world_memories(env: Env) -> None:
    env.at(1)
    env.say("You hand Bram the rat tails.")
    env.service.on_world_event(
        env.gs, "objective_completed", related={"quest_id": "rats", "objective_id": "tails"}
    )
    env.service.on_world_event(env.gs, "quest_completed", related={"quest_id": "rats"})
    titles = [e.title for e in env.service.world_memories()]
    assert titles == ["Objective completed: tails (rats)", "Quest completed: rats"]


def test_a_programming_error_in_the_summarizer_is_not_swallowed(env: Env) -> None:
    def broken(*_: object) -> str:
        raise TypeError("bad argument")

    env.summarizer.summarize_location_session = broken  # type: ignore[method-assign]
    env.at(1)
    env.say("The fire crackles.")
    with pytest.raises(TypeError):
        env.service.on_location_exit(env.gs)
    assert env.service.summary_failures == 0


def test_the_synthesis_history_travels_with_each_game_not_with_the_service(env: Env) -> None:
    """Two games sharing one service (two tables of a narrative server) never mix turns."""
    long = "You look closely. " * 10
    other = GameState()
    env.service.record_action_outcome(env.gs, outcome(1, "examine window", long))
    env.service.record_action_outcome(env.gs, outcome(2, "open window", long))
    env.service.record_action_outcome(other, outcome(1, "examine rug", long))
    assert [h.action for h in env.summarizer.requests[-1].history] == []
    env.service.record_action_outcome(env.gs, outcome(3, "read sign", long))
    assert [h.action for h in env.summarizer.requests[-1].history] == [
        "examine window",
        "open window",
    ]
    assert [t.action for t in other.turns] == ["examine rug"]


def test_messages_by_location_read_on_and_start_over_when_the_history_changes() -> None:
    gs = GameState()
    gs.locations[1] = LocationState(id=1, name="Hall")
    gs.locations[2] = LocationState(id=2, name="Cellar")
    by_location = MessagesByLocation()
    gs.scenario.current_location_id = 1
    first = gs.add_message("a")
    assert by_location.at(gs.conversation_history, 1) == [first]
    gs.scenario.current_location_id = 2
    second = gs.add_message("b")
    gs.scenario.current_location_id = 1
    third = gs.add_message("c")
    assert by_location.at(gs.conversation_history, 1) == [first, third]  # read on
    assert by_location.at(gs.conversation_history, 2) == [second]
    gs.conversation_history[-1] = third.model_copy(update={"location_id": 2})  # changed
    assert by_location.at(gs.conversation_history, 1) == [first]
    assert by_location.at(gs.conversation_history, 2) == [second, gs.conversation_history[-1]]
    del gs.conversation_history[1:]  # shortened
    assert by_location.at(gs.conversation_history, 2) == []
    other = GameState()  # a new episode's history
    assert by_location.at(other.conversation_history, 1) == []
