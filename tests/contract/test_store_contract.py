"""The IMemoryStore contract, run on every store: round trips, units of work, supersession,
escaping (PITFALLS 4-8), corrupt blocks, backups, external edits and SQLite specifics."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cairn.adapters.storage.markdown_check import check_file, check_memory_file
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.sqlite_schema import SCHEMA_VERSION
from cairn.errors import MemoryNotFoundError, StoreError
from cairn.interfaces.store import IMemoryStore
from cairn.models.lesson import (
    DeathBy,
    DeathCause,
    Effect,
    EffectKind,
    Evidence,
    Lesson,
)
from cairn.models.memory import (
    Ledger,
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    MemoryStatus,
    Way,
)
from cairn.services.clock import SystemClock
from tests.contract.conftest import (
    DURABLE_KINDS,
    FILE_KINDS,
    StoreFactory,
    as_stored,
    counting_commits,
    open_store,
    sqlite_pragma,
)

PITFALL_4_TEXT = "\n## Location 999: Fake Room\n**[DANGER] Grue here** *(Ep1, T1)*"
PITFALL_5_TEXT = "Above the rule\n---\n**[NOTE] Not a memory** *(Ep1, T2)*\nBelow the rule\n---"
PITFALL_6_TITLE = "Sign reads **beware** *(old)*"


def location_memory(title: str, location_id: int = 1, **fields: Any) -> MemoryEntry:
    fields.setdefault("location_name", "Hall")
    return MemoryEntry(scope=MemoryScope.LOCATION, location_id=location_id, title=title, **fields)


def npc_memory(title: str, npc: str = "troll", **fields: Any) -> MemoryEntry:
    return MemoryEntry(scope=MemoryScope.NPC, npc_ids=[npc], title=title, **fields)


def world_memory(title: str, **fields: Any) -> MemoryEntry:
    return MemoryEntry(scope=MemoryScope.WORLD, title=title, **fields)


def add_all(store: IMemoryStore, *entries: MemoryEntry) -> None:
    with store.transaction() as tx:
        for entry in entries:
            tx.add(entry)


def reopened(factory: StoreFactory, store: IMemoryStore) -> IMemoryStore:
    """A new store object on the same file (the same object for the in-memory store)."""
    return factory.open() if factory.durable else store


def file_state(factory: StoreFactory) -> tuple[bytes, int, int] | None:
    """The store file's bytes, inode and mtime (a rewrite changes the inode and the mtime)."""
    if factory.kind not in FILE_KINDS:
        return None
    stat = factory.path.stat()
    return factory.path.read_bytes(), stat.st_ino, stat.st_mtime_ns


def full_entries() -> list[MemoryEntry]:
    """Entries in every scope that together set every MemoryEntry field to a non-default."""
    loc = MemoryEntry(
        id="m-full-location",
        scope=MemoryScope.LOCATION,
        category=MemoryCategory.DANGER,
        status=MemoryStatus.TENTATIVE,
        persistence="PERMANENT",
        title="Troll blocks the bridge",
        text="The troll swings an axe.\nHe wants lunch.",
        importance=917,
        tags=["troll", "bridge", "odd * tag"],
        episode=2,
        turn_start=12,
        turn_end=14,
        score_delta=-10,
        location_id=15,
        location_name="West of House",
        npc_ids=["troll", "thief"],
        quest_id="q-lunch",
        encounter_id="e-7",
        since_message_index=42,
        since_timestamp=datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC),
        created_at=datetime(2023, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
        source=MemorySource.FAILURE,
        via="enter window",
        leads_to=203,
        ways_in=[Way(command="up", source=203, source_name="Kitchen"), Way(command="d", source=7)],
        lesson=Lesson(
            action="put coin in slot",
            effect=Effect(kind=EffectKind.DIED),
            needs_held=["brass lantern", "coin"],
            steps_first=["open window"],
            death_cause=DeathCause(by=DeathBy.ACTION, action="put coin in slot", reason="trap"),
            evidence=Evidence.TESTED,
            episode=2,
            turn=14,
        ),
    )
    npc = MemoryEntry(
        id="m-full-npc",
        scope=MemoryScope.NPC,
        category=MemoryCategory.SUCCESS,
        persistence="lasts until the troll wakes",  # not a word: cannot go in the header
        title="Thief takes the egg",
        text="",
        npc_ids=["thief", "troll"],
        location_id=15,
        turn_end=30,
        score_delta=0,
        created_at=datetime(2023, 6, 7, 8, 9, 10, tzinfo=timezone(timedelta(hours=-5))),
    )
    world = MemoryEntry(
        id="m-full-world",
        scope=MemoryScope.WORLD,
        category=MemoryCategory.FAILURE,
        status=MemoryStatus.SUPERSEDED,
        superseded_by="m-full-location",
        title="Lamp lasts forever",
        text="It does not.",
        ledger=Ledger(commands=["wind lamp", "shake lamp"], answer="Nothing happens."),
        episode=0,
        turn_start=3,
        importance=1,
    )
    other_location = location_memory("Visited only by memory", location_id=20, location_name=None)
    return [loc, npc, world, other_location]


def test_full_entries_cover_every_field() -> None:
    set_fields = {
        name
        for entry in full_entries()
        for name, info in MemoryEntry.model_fields.items()
        if getattr(entry, name) != info.get_default(call_default_factory=True)
    }
    assert set_fields == set(MemoryEntry.model_fields)


def test_every_field_and_location_record_round_trips(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    entries = full_entries()
    with store.transaction() as tx:
        for entry in entries:
            tx.add(entry)
        tx.record_visit(15, "West of House", 1)
        tx.record_visit(15, "West of House", 1)
        tx.record_visit(15, "West of House", 2)
        tx.record_visit(-3, "Négative ** room \\ [1]", None)

    loaded = reopened(store_factory, store)
    for entry in entries:
        got, expected = loaded.get(entry.id), store_factory.stored(entry)
        assert got == expected
        assert got is not None and got.model_dump(mode="json") == expected.model_dump(mode="json")
    assert loaded.locations() == {
        -3: LocationRecord(id=-3, name="Négative ** room \\ [1]", visits=1, episodes=[]),
        15: LocationRecord(id=15, name="West of House", visits=3, episodes=[1, 2]),
        20: LocationRecord(id=20, name="", visits=0, episodes=[]),
    }
    assert loaded.problems() == []


def test_a_memory_stamped_by_the_clock_reads_back_exactly_from_every_store(
    store_factory: StoreFactory,
) -> None:
    """Memories are stamped to the second, what every store keeps: the one a store returns is
    the one given, with the same time in every store (so ties in the ranking fall the same
    way whichever store holds them)."""
    made = [world_memory(f"Now {n}") for n in range(3)]  # created_at: the clock's now
    made.append(world_memory("Service", created_at=SystemClock().now()))
    store = store_factory.open()
    add_all(store, *made)
    loaded = reopened(store_factory, store)
    for entry in made:
        assert entry.created_at.microsecond == 0
        assert loaded.get(entry.id) == entry


def test_visits_count_visits_not_memories(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    add_all(store, *(location_memory(f"Memory {n}", location_id=4) for n in range(5)))
    for episode in (1, 1, 3):
        with store.transaction() as tx:
            tx.record_visit(4, "Cellar", episode)
    record = reopened(store_factory, store).locations()[4]
    assert (record.visits, record.episodes, record.name) == (3, [1, 3], "Cellar")


def test_location_records_read_are_the_callers_own(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    with store.transaction() as tx:
        tx.record_visit(4, "Cellar", 1)
    for record in (store.location(4), store.locations()[4]):
        assert record is not None
        record.episodes.append(9)  # a caller changing its copy changes nothing stored
        record.visits, record.name = 7, "Attic"
    assert store.location(4) == LocationRecord(id=4, name="Cellar", visits=1, episodes=[1])


def test_record_visit_rejects_a_location_id_that_is_not_an_integer(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    with pytest.raises(StoreError, match="location_id"), store.transaction() as tx:
        tx.record_visit("5", "Hall", 1)  # type: ignore[arg-type]
    assert store.locations() == {}


def test_filters_return_matching_memories_oldest_first(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    a = location_memory("A", location_id=1)
    b = location_memory("B", location_id=2, status=MemoryStatus.TENTATIVE)
    c = npc_memory("C", npc="troll")
    d = MemoryEntry(scope=MemoryScope.NPC, npc_ids=["thief", "troll"], title="D")
    e = world_memory("E", status=MemoryStatus.SUPERSEDED)
    f = location_memory("F", location_id=1)
    add_all(store, a, b, c, d, e)
    add_all(store, f)
    loaded = reopened(store_factory, store)

    def ids(**filters: Any) -> list[str]:
        return [m.id for m in loaded.entries(**filters)]

    assert ids(location_id=1) == [a.id, f.id]  # one section: oldest first in every store
    assert sorted(ids(scope=MemoryScope.NPC)) == sorted([c.id, d.id])
    assert sorted(ids(npc_id="troll")) == sorted([c.id, d.id])
    assert ids(npc_id="thief") == [d.id]
    assert ids(scope=MemoryScope.WORLD) == [e.id]
    assert set(ids(statuses=frozenset({MemoryStatus.TENTATIVE, MemoryStatus.SUPERSEDED}))) == {
        b.id,
        e.id,
    }
    assert ids(scope=MemoryScope.LOCATION, statuses=frozenset({MemoryStatus.ACTIVE})) == [
        a.id,
        f.id,
    ]
    assert sorted(m.id for m in loaded) == sorted(m.id for m in (a, b, c, d, e, f))


def test_update_and_delete_are_stored(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    keep, change, drop = (location_memory(t) for t in ("Keep", "Change", "Drop"))
    add_all(store, keep, change, drop)
    changed = change.model_copy(update={"text": "new text", "importance": 900})
    with store.transaction() as tx:
        tx.update(changed)
        tx.delete(drop.id)
    loaded = reopened(store_factory, store)
    assert loaded.get(change.id) == store_factory.stored(changed)
    assert loaded.get(drop.id) is None
    assert [m.id for m in loaded.entries()] == [keep.id, change.id]


@pytest.mark.parametrize(
    "stage",
    [
        lambda tx: tx.update(location_memory("Ghost", id="m-ghost")),
        lambda tx: tx.supersede("m-ghost", None),
        lambda tx: tx.delete("m-ghost"),
    ],
    ids=["update", "supersede", "delete"],
)
def test_an_unknown_id_fails_the_unit_of_work_and_writes_nothing(
    store_factory: StoreFactory, stage: Callable[[Any], None]
) -> None:
    store = store_factory.open()
    first = location_memory("First")
    add_all(store, first)
    staged = location_memory("Staged with a bad op")
    with pytest.raises(MemoryNotFoundError, match="m-ghost"), store.transaction() as tx:
        tx.add(staged)
        stage(tx)
    for view in (store, reopened(store_factory, store)):
        assert [m.id for m in view.entries()] == [first.id]


def test_adding_an_existing_id_fails(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    first = location_memory("First")
    add_all(store, first)
    with pytest.raises(StoreError, match=first.id):
        add_all(store, location_memory("Second", id=first.id))
    assert reopened(store_factory, store).get(first.id) == store_factory.stored(first)


def test_a_transaction_that_raises_writes_nothing(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    before = location_memory("Before")
    add_all(store, before)
    snapshot = file_state(store_factory)
    called: list[str] = []

    class Boom(Exception):
        pass

    with pytest.raises(Boom), store.transaction() as tx:
        tx.add(location_memory("Never stored"))
        tx.supersede(before.id, None)
        tx.record_visit(1, "Renamed hall", 1)
        tx.after_commit(lambda: called.append("after"))
        raise Boom

    assert called == []
    for view in (store, reopened(store_factory, store)):
        assert view.entries() == [store_factory.stored(before)]
        assert view.locations() == {1: LocationRecord(id=1, name="Hall")}
    assert file_state(store_factory) == snapshot
    add_all(store, location_memory("After"))  # the store still works
    assert len(reopened(store_factory, store).entries()) == 2


def test_nested_transactions_join_the_outer_one_and_write_once(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    outer_entry, inner_entry = location_memory("Outer"), npc_memory("Inner")
    order: list[str] = []
    with counting_commits(store) as commits:
        with store.transaction() as outer:
            outer.add(outer_entry)
            with store.transaction() as inner:
                inner.add(inner_entry)
                inner.record_visit(1, "Hall", 1)
                inner.after_commit(lambda: order.append("inner"))
            assert commits() == 0
            # the unit's own reads see what it staged; nobody else does before the commit
            assert [m.id for m in store.entries()] == [outer_entry.id, inner_entry.id]
            assert store.location(1).visits == 1  # type: ignore[union-attr]
            if store_factory.durable:
                assert store_factory.open().entries() == []
            outer.after_commit(lambda: order.append("outer"))
        assert commits() == 1
    assert order == ["inner", "outer"]
    loaded = reopened(store_factory, store)
    assert [m.id for m in loaded.entries()] == [outer_entry.id, inner_entry.id]
    assert loaded.locations()[1].visits == 1


@pytest.mark.parametrize("call", ["checkpoint", "reload"])
def test_a_checkpoint_or_reload_inside_a_unit_of_work_is_refused_and_loses_nothing(
    file_factory: StoreFactory, call: str
) -> None:
    """They would rewrite the cache or the file under the unit's staged (and shown) changes."""
    store = file_factory.open()
    kept = location_memory("Kept")
    add_all(store, kept)
    with pytest.raises(StoreError, match="inside a unit of work"), store.transaction() as tx:
        tx.add(world_memory("Staged"))
        assert len(store.entries()) == 2
        getattr(store, call)()
    assert [m.id for m in store.entries()] == [kept.id]
    assert [m.id for m in reopened(file_factory, store).entries()] == [kept.id]
    getattr(store, call)()  # after the unit: as usual


def test_after_commit_runs_once_the_write_is_durable(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    entry = world_memory("Durable")
    seen: list[MemoryEntry | None] = []
    with store.transaction() as tx:
        tx.add(entry)
        tx.after_commit(lambda: seen.append(reopened(store_factory, store).get(entry.id)))
    assert seen == [store_factory.stored(entry)]


def test_supersession_by_id_and_its_link_survive_a_reload(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    troll = location_memory("Troll")
    bridge = location_memory("Troll bridge")  # a substring match would catch this one too
    attacks = location_memory("Troll attacks after accepting gift", turn_start=13)
    gone = location_memory("Troll sleeps")
    add_all(store, troll, bridge)
    with store.transaction() as tx:
        tx.add(attacks)
        tx.add(gone)
        tx.supersede(troll.id, attacks.id)
    with store.transaction() as tx:
        tx.supersede(gone.id, None)

    loaded = reopened(store_factory, store)
    got_troll, got_bridge, got_gone = (loaded.get(m.id) for m in (troll, bridge, gone))
    assert got_troll is not None and got_bridge is not None and got_gone is not None
    assert (got_troll.status, got_troll.superseded_by) == (MemoryStatus.SUPERSEDED, attacks.id)
    assert (got_gone.status, got_gone.superseded_by) == (MemoryStatus.SUPERSEDED, None)
    assert (got_bridge.status, got_bridge.superseded_by) == (MemoryStatus.ACTIVE, None)
    assert not got_troll.visible and got_bridge.visible
    visible = loaded.entries(statuses=frozenset({MemoryStatus.ACTIVE}))
    assert [m.id for m in visible] == [bridge.id, attacks.id]


def test_ranked_puts_the_most_important_memories_first(store_factory: StoreFactory) -> None:
    """The top notes of every prompt come from `ranked`: a player who marks a lesson 900 sees
    it before a 100 note, whatever the order and game time they were written in, after a
    change of importance, and after the store is opened again (each store's load path)."""
    store = store_factory.open()
    # least important first, and the least important the latest in game time (game time is
    # the ranking's second key: it must not beat importance); a hidden 1000 is never shown
    written = [
        location_memory("Leaflet", importance=100, episode=3, turn_start=9),
        npc_memory("Troll hungry", importance=300, episode=3, turn_start=5),
        world_memory("Lamp dims", importance=500, episode=2, turn_start=8),
        location_memory("Grue in the dark", location_id=2, importance=700, episode=2, turn_start=1),
        world_memory("Carry the lamp", importance=900, episode=1, turn_start=1),
    ]
    hidden = world_memory("Old lesson", importance=1000, episode=1, turn_start=1)
    add_all(store, *written, hidden)
    with store.transaction() as tx:
        tx.supersede(hidden.id, None)

    def titles(s: IMemoryStore, limit: int) -> list[str]:
        return [m.title for m in s.ranked(limit)]

    by_importance = ["Carry the lamp", "Grue in the dark", "Lamp dims", "Troll hungry", "Leaflet"]
    assert titles(store, 10) == by_importance
    assert titles(store, 1) == ["Carry the lamp"]
    assert titles(store, 3) == by_importance[:3]

    # the leaflet turns out to matter most; the lamp lesson matters least
    with store.transaction() as tx:
        tx.update(written[0].model_copy(update={"importance": 950}))
        tx.update(written[4].model_copy(update={"importance": 50}))
    changed = ["Leaflet", "Grue in the dark", "Lamp dims", "Troll hungry", "Carry the lamp"]
    assert titles(store, 10) == changed
    assert titles(store, 1) == ["Leaflet"]

    loaded = reopened(store_factory, store)
    assert titles(loaded, 10) == changed
    assert titles(loaded, 2) == changed[:2]


# -- escaping: any text round-trips and creates no structure (PITFALLS 4-6) -------------------

MARKDOWN_PIECES = [
    "\n", "\r\n", "\r", " ", "\t", "#", "# ", "## ", "### Memories", "# World Memories",
    "## Location 999: Fake Room", "## Location 1: Hall", "## NPC troll", "**", "*", "\\",
    "\\*", "\\u0041", "\\\"", "[DANGER]", "[NOTE - SUPERSEDED]", "**[DANGER] Grue here**",
    " *(Ep1, T1)*", "*(Ep1, T1, +5)*", "(", ")", "---", "***", "___", "===", "-", "+ ", "> ",
    "<!-- cairn {\"id\": \"m-fake\"} -->", "<!--", "-->", "[Superseded at T13 by \"X\"]",
    "[Invalidated]", "**Visits:** 3 | **Episodes:** 1", "1. ", "|", "`", "~", "\"", "'",
    "\u2028", "\u2029", "\x85", "\ufeff", "\x00", "\x1f", "\xa0", "é", "🐉", "x", "Grue",
]  # fmt: skip
markdownish = st.lists(st.sampled_from(MARKDOWN_PIECES), max_size=14).map("".join)
any_text = st.one_of(st.text(), markdownish)
any_title = st.one_of(st.text(min_size=1), markdownish.filter(bool))
ODD_NAMES = [
    "troll\n## Location 999: Fake Room",
    "West ** of \\ House",
    "# World Memories",
    " spaced ",
    "*(Ep1, T1)*",
    "\\u0041",
    "龍 🐉",
]
odd_name = st.one_of(st.sampled_from(ODD_NAMES), st.text(min_size=1), markdownish.filter(bool))
PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _write_then_reopen(
    kind: str, build: Callable[[IMemoryStore], None], check: Callable[[IMemoryStore], None]
) -> None:
    """Build a store in a fresh folder, then run `check` on a NEW store object from disk."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("Memories.md" if kind == "markdown" else "memories.sqlite3")
        store = open_store(kind, path)
        try:
            build(store)
        finally:
            store.close()
        loaded = open_store(kind, path)
        try:
            check(loaded)
            assert loaded.problems() == []
            if kind == "markdown":
                assert check_memory_file(path) == []
        finally:
            loaded.close()


@pytest.mark.parametrize("kind", DURABLE_KINDS)
@PROPERTY_SETTINGS
@given(title=any_title, text=any_text)
@example(title="Grue", text=PITFALL_4_TEXT)
@example(title="Rule", text=PITFALL_5_TEXT)
@example(title=PITFALL_6_TITLE, text="")
@example(title=PITFALL_6_TITLE, text=PITFALL_4_TEXT + "\n" + PITFALL_5_TEXT)
def test_any_title_and_text_round_trip_and_create_no_structure(
    kind: str, title: str, text: str
) -> None:
    before = location_memory("Before")
    subjects = [
        location_memory(title, text=text),
        npc_memory(title, text=text),
        world_memory(title, text=text),
    ]
    after = location_memory("After", text="after text")

    def build(store: IMemoryStore) -> None:
        with store.transaction() as tx:
            tx.record_visit(1, "Hall", 1)
            for entry in (before, *subjects, after):
                tx.add(entry)

    def check(loaded: IMemoryStore) -> None:
        for subject in subjects:
            got = loaded.get(subject.id)
            assert got is not None
            assert (got.title, got.text) == (title, text)
            assert got == as_stored(kind, subject)
        assert [m.id for m in loaded.entries(location_id=1)] == [
            before.id,
            subjects[0].id,
            after.id,
        ]
        assert loaded.get(after.id) == as_stored(kind, after)
        assert len(loaded.entries()) == 5
        assert set(loaded.locations()) == {1}
        assert {npc for m in loaded.entries() for npc in m.npc_ids} == {"troll"}

    _write_then_reopen(kind, build, check)


@pytest.mark.parametrize("kind", DURABLE_KINDS)
@PROPERTY_SETTINGS
@given(npc_id=odd_name, other_npc=odd_name, name=st.one_of(st.just(""), odd_name))
@example(npc_id="troll\n## Location 999: Fake", other_npc="thief", name="A ** b \\ c\n# NPC x")
def test_npc_ids_and_location_names_with_odd_characters_round_trip(
    kind: str, npc_id: str, other_npc: str, name: str
) -> None:
    at_location = location_memory("Here", location_id=7, location_name=name)
    about_npcs = MemoryEntry(scope=MemoryScope.NPC, npc_ids=[npc_id, other_npc], title="Them")
    world = world_memory("World", text="w")

    def build(store: IMemoryStore) -> None:
        with store.transaction() as tx:
            tx.record_visit(7, name, 1)
            tx.add(at_location)
            tx.add(about_npcs)
            tx.add(world)

    def check(loaded: IMemoryStore) -> None:
        assert loaded.locations() == {7: LocationRecord(id=7, name=name, visits=1, episodes=[1])}
        assert loaded.get(at_location.id) == as_stored(kind, at_location)
        assert loaded.get(about_npcs.id) == as_stored(kind, about_npcs)
        assert loaded.get(world.id) == as_stored(kind, world)
        assert [m.id for m in loaded.entries(npc_id=npc_id)] == [about_npcs.id]
        assert [m.id for m in loaded.entries(npc_id=other_npc)] == [about_npcs.id]
        assert len(loaded.entries()) == 3

    _write_then_reopen(kind, build, check)


def test_fake_location_text_creates_no_location_or_memory(durable_factory: StoreFactory) -> None:
    store = durable_factory.open()
    grue = location_memory("Grue", text=PITFALL_4_TEXT)
    add_all(store, grue)
    loaded = durable_factory.open()
    assert set(loaded.locations()) == {1}
    assert loaded.entries() == [durable_factory.stored(grue)]
    assert all(m.category is MemoryCategory.NOTE for m in loaded.entries())
    if durable_factory.kind == "markdown":
        lines = durable_factory.path.read_text(encoding="utf-8").splitlines()
        assert "## Location 999: Fake Room" not in lines
        assert not any(line.startswith("**[DANGER]") for line in lines)


def test_a_rule_line_in_text_keeps_later_memories_in_place(durable_factory: StoreFactory) -> None:
    store = durable_factory.open()
    ruled = location_memory("Ruled", location_id=1, text=PITFALL_5_TEXT)
    later = [location_memory(f"Later {n}", location_id=1, text="---") for n in range(3)]
    elsewhere = location_memory("Elsewhere", location_id=2, location_name="Cellar")
    add_all(store, ruled, *later, elsewhere)
    loaded = durable_factory.open()
    stored = durable_factory.stored
    assert loaded.entries(location_id=1) == [stored(ruled), *map(stored, later)]
    assert loaded.entries(location_id=2) == [stored(elsewhere)]
    assert loaded.problems() == []


def test_a_title_with_bold_markup_round_trips(durable_factory: StoreFactory) -> None:
    store = durable_factory.open()
    sign = location_memory(PITFALL_6_TITLE, episode=1, turn_start=4, score_delta=0)
    add_all(store, sign)
    assert durable_factory.open().get(sign.id) == durable_factory.stored(sign)


# -- other writers: people and processes --------------------------------------------------------


def test_another_store_objects_writes_are_read_and_kept(durable_factory: StoreFactory) -> None:
    first, second = durable_factory.open(), durable_factory.open()
    a, b = location_memory("From the first"), npc_memory("From the second")
    add_all(first, a)
    add_all(second, b)  # `second` never read `a`: its write must not drop it
    assert [m.id for m in first.entries()] == [a.id, b.id]
    add_all(first, world_memory("First again"))
    assert len(durable_factory.open().entries()) == 3
    second.reload()
    assert len(second.entries()) == 3


def test_scope_counts_are_the_visible_and_hidden_memories_of_each_key(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    gone = location_memory("Gone", location_id=2)
    add_all(
        store,
        location_memory("Hall one"),
        location_memory("Hall two"),
        gone,
        MemoryEntry(scope=MemoryScope.NPC, npc_ids=["troll", "thief"], title="Troll and thief"),
        npc_memory("Thief", npc="thief"),
        world_memory("World"),
    )
    with store.transaction() as tx:
        tx.supersede(gone.id, None)
    expected = {
        (MemoryScope.LOCATION, "1"): (2, 0),
        (MemoryScope.LOCATION, "2"): (0, 1),
        (MemoryScope.NPC, "troll"): (1, 0),  # the first NPC's key
        (MemoryScope.NPC, "thief"): (1, 0),
        (MemoryScope.WORLD, ""): (1, 0),
    }
    assert store.scope_counts() == expected
    assert IMemoryStore.scope_counts(store) == expected  # the port's reading of every memory
    assert reopened(store_factory, store).scope_counts() == expected  # a loaded index too


def test_reads_in_a_steady_block_look_once_and_see_their_own_writes(
    file_factory: StoreFactory,
) -> None:
    first, second = file_factory.open(), file_factory.open()
    add_all(first, location_memory("Before"))
    add_all(second, npc_memory("Earlier"))
    with first.steady():
        assert len(first.entries()) == 2  # the first read looks
        add_all(second, npc_memory("Theirs"))  # after the block looked: not read inside it
        assert [m.title for m in first.entries()] == ["Before", "Earlier"]
        assert first.location(1) is not None
        add_all(first, world_memory("Ours"))  # a write still merges what others wrote
        assert {m.title for m in first.entries()} == {"Before", "Earlier", "Theirs", "Ours"}
        add_all(second, location_memory("Later"))
        with first.steady():  # nested: joins the outer block
            assert len(first.entries()) == 4
        first.reload()  # an explicit reload still reads
        assert len(first.entries()) == 5
        add_all(second, location_memory("Last"))
        assert len(first.entries()) == 5
    assert "Last" in {m.title for m in first.entries()}  # outside: every read looks
    assert len(file_factory.open().entries()) == 6


def test_a_person_appending_a_memory_by_hand_is_read_and_kept(
    markdown_factory: StoreFactory,
) -> None:
    store = markdown_factory.open()
    ours = location_memory("Ours")
    add_all(store, ours)
    with markdown_factory.path.open("a", encoding="utf-8") as handle:
        handle.write(
            "\n**[DANGER] Grue lurks in the dark** *(Ep1, T9, -10)*\n"
            "It is pitch black. You are likely to be eaten by a grue.\n"
        )
    grues = store.entries(scope=MemoryScope.WORLD)
    assert [(m.title, m.category, m.score_delta, m.turn_start) for m in grues] == [
        ("Grue lurks in the dark", MemoryCategory.DANGER, -10, 9)
    ]
    assert grues[0].text == "It is pitch black. You are likely to be eaten by a grue."
    add_all(store, npc_memory("Next"))
    loaded = markdown_factory.open()
    assert [m.title for m in loaded.entries()] == ["Ours", "Next", "Grue lurks in the dark"]
    assert loaded.get(grues[0].id) == grues[0]  # its id and time written by cairn's write
    assert loaded.problems() == []


def test_a_memory_written_by_hand_keeps_the_time_it_was_first_read_with(
    markdown_factory: StoreFactory,
) -> None:
    """A block without cairn's comment takes the file's modification time when read; cairn's
    next write is a fold that writes its comment, so later reads (of a file touched since)
    give the same time. A store that only reads writes nothing."""
    import os
    from datetime import UTC, datetime

    store = markdown_factory.open()
    add_all(store, location_memory("Ours"))
    path = markdown_factory.path
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n**[NOTE] Written by hand**\nThe lamp is under the rug.\n")
    first, later = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), datetime(2026, 2, 3, tzinfo=UTC)
    os.utime(path, (first.timestamp(), first.timestamp()))
    reader = markdown_factory.open()
    reader.close()  # reads, writes nothing
    assert os.stat(path).st_mtime == first.timestamp()
    (hand,) = store.entries(scope=MemoryScope.WORLD)
    assert hand.created_at == first
    add_all(store, npc_memory("Next"))  # writes the hand memory's comment
    assert f'"id": "{hand.id}"' in path.read_text(encoding="utf-8")
    os.utime(path, (later.timestamp(), later.timestamp()))
    assert markdown_factory.open().get(hand.id) == hand


def test_a_hand_edit_between_reads_and_a_write_is_not_lost(
    markdown_factory: StoreFactory,
) -> None:
    store = markdown_factory.open()
    add_all(store, location_memory("Alpha", text="old words"))
    path = markdown_factory.path
    path.write_text(path.read_text(encoding="utf-8").replace("old words", "new words"), "utf-8")
    add_all(store, location_memory("Beta"))  # no read in between
    texts = {m.title: m.text for m in markdown_factory.open().entries()}
    assert texts == {"Alpha": "new words", "Beta": ""}


def test_reload_picks_up_changes_from_disk(durable_factory: StoreFactory) -> None:
    reader, writer = durable_factory.open(), durable_factory.open()
    assert reader.entries() == []
    entry = location_memory("Seen after reload")
    add_all(writer, entry)
    reader.reload()
    assert reader.entries() == [durable_factory.stored(entry)]


def test_a_reload_gives_exactly_what_the_store_returned(store_factory: StoreFactory) -> None:
    """Timestamps and order are what readers sort by ((importance, created_at), oldest first):
    a store returns the same values in the same order before and after a reload, even for
    memories made within one second, and keeps the order they were made in within a section."""
    store = store_factory.open()
    second = datetime(2026, 11, 23, 9, 31, 46, tzinfo=UTC)
    made = [
        location_memory(
            f"Made {n}",
            location_id=n % 3,
            importance=500 + 100 * (n % 2),
            created_at=second + timedelta(microseconds=997 * n + 1),
            since_timestamp=second - timedelta(microseconds=n + 1),
        )
        for n in range(12)
    ]
    add_all(store, *made[:6])
    add_all(store, *made[6:])
    before = store.entries()
    loaded = reopened(store_factory, store)
    assert loaded.entries() == before
    assert [m.model_dump(mode="json") for m in loaded.entries()] == [
        m.model_dump(mode="json") for m in before
    ]
    assert sorted(before, key=lambda m: (m.importance, m.created_at)) == sorted(
        loaded.entries(), key=lambda m: (m.importance, m.created_at)
    )
    for location_id in range(3):
        oldest_first = sorted(loaded.entries(location_id=location_id), key=lambda m: m.created_at)
        assert [m.id for m in oldest_first] == [m.id for m in made if m.location_id == location_id]
    assert sorted(before, key=lambda m: m.id) == sorted(
        map(store_factory.stored, made), key=lambda m: m.id
    )


# -- markdown: corrupt blocks, old forms, backups -----------------------------------------------

CORRUPT_FILE = """\
# Location Memories

## Location 1: Hall
**Visits:** 1 | **Episodes:** 1

### Memories

**[NOTE] Good one** *(Ep1, T1)*
<!-- cairn {"id": "m-good", "created_at": "2024-01-01T00:00:00+00:00"} -->
Fine.

**[BOGUS] Strange category** *(Ep1, T2)*
Some text that stays.

**[NOTE] Broken comment** *(Ep1, T3)*
<!-- cairn {"id": "m-broken", -->
Text kept too.

# NPC Memories

# World Memories
"""
BOGUS_BLOCK = ["**[BOGUS] Strange category** *(Ep1, T2)*", "Some text that stays."]
BROKEN_BLOCK = [
    "**[NOTE] Broken comment** *(Ep1, T3)*",
    '<!-- cairn {"id": "m-broken", -->',
    "Text kept too.",
]


def _line_of(text: str, first_line: str) -> int:
    return text.split("\n").index(first_line) + 1


def _assert_corrupt_blocks_reported(path: Path, reported: list[Any]) -> None:
    text = path.read_text(encoding="utf-8")
    assert "\n".join(BOGUS_BLOCK) in text
    assert "\n".join(BROKEN_BLOCK) in text
    lines = sorted((p.line, p.message) for p in reported)
    assert [line for line, _ in lines] == sorted(
        [_line_of(text, BOGUS_BLOCK[0]), _line_of(text, BROKEN_BLOCK[0])]
    )
    messages = dict(lines)
    assert "BOGUS" in messages[_line_of(text, BOGUS_BLOCK[0])]
    assert "JSON" in messages[_line_of(text, BROKEN_BLOCK[0])]
    assert all(str(path) == p.path for p in reported)


def test_corrupt_blocks_are_reported_and_survive_writes_verbatim(
    markdown_factory: StoreFactory,
) -> None:
    path = markdown_factory.path
    path.write_text(CORRUPT_FILE, encoding="utf-8")
    store = markdown_factory.open()
    assert [m.id for m in store.entries()] == ["m-good"]
    _assert_corrupt_blocks_reported(path, store.problems())
    _assert_corrupt_blocks_reported(path, check_memory_file(path))

    add_all(store, location_memory("New one", location_id=1), world_memory("World one"))
    _assert_corrupt_blocks_reported(path, store.problems())
    _assert_corrupt_blocks_reported(path, check_memory_file(path))
    with store.transaction() as tx:
        tx.record_visit(1, "Hall", 2)
    _assert_corrupt_blocks_reported(path, check_memory_file(path))
    loaded = markdown_factory.open()
    assert [m.title for m in loaded.entries()] == ["Good one", "New one", "World one"]
    _assert_corrupt_blocks_reported(path, loaded.problems())


def test_a_bad_section_at_the_end_of_the_file_is_kept(markdown_factory: StoreFactory) -> None:
    path = markdown_factory.path
    tail = "## Dungeon notes\nA person wrote this section by hand.\n\nAnd a second paragraph."
    path.write_text("# Location Memories\n\n# NPC Memories\n\n# World Memories\n\n" + tail + "\n")
    store = markdown_factory.open()
    assert store.problems() == []  # a section of a person's own, prose only: a note
    assert check_file(path).notes == [7]
    add_all(store, world_memory("Written after"))
    text = path.read_text(encoding="utf-8")
    assert tail in text
    assert [m.title for m in markdown_factory.open().entries()] == ["Written after"]


SEED_FILE = """\
# Location Memories

## Location 10: Troll Room
**Visits:** 2 | **Episodes:** 1

### Memories

**[DANGER - PERMANENT - ACTIVE] Troll guards the passage** *(Ep1, T5, -10)*
The troll swings his axe.

**[NOTE - SUPERSEDED] Troll accepts lunch gift** *(Ep01, T12, +0)*
[Superseded at T13 by "Troll attacks after accepting gift"]
Troll accepts lunch offering graciously.

**[DANGER] Troll attacks after accepting gift** *(Ep1, T13, -5)*
Never give the troll lunch.
"""


def test_older_header_forms_load_and_their_links_survive_writes(
    markdown_factory: StoreFactory,
) -> None:
    markdown_factory.path.write_text(SEED_FILE, encoding="utf-8")
    store = markdown_factory.open()
    guard, gift, attack = store.entries(location_id=10)
    assert (guard.category, guard.persistence, guard.status) == (
        MemoryCategory.DANGER,
        "PERMANENT",
        MemoryStatus.ACTIVE,
    )
    assert (guard.episode, guard.turn_start, guard.turn_end, guard.score_delta) == (1, 5, 5, -10)
    assert (gift.category, gift.status, gift.superseded_by) == (
        MemoryCategory.NOTE,
        MemoryStatus.SUPERSEDED,
        attack.id,
    )
    assert (gift.episode, gift.turn_start, gift.score_delta) == (1, 12, 0)
    assert gift.text == "Troll accepts lunch offering graciously."
    assert store.locations()[10] == LocationRecord(id=10, name="Troll Room", visits=2, episodes=[1])
    assert store.problems() == []

    assert markdown_factory.open().entries() == [guard, gift, attack]  # same ids on every load
    add_all(store, location_memory("Troll is gone", location_id=10))
    loaded = markdown_factory.open()
    assert loaded.entries(location_id=10)[:3] == [guard, gift, attack]
    assert '[Superseded at T13 by "Troll attacks after accepting gift"]' in (
        markdown_factory.path.read_text(encoding="utf-8")
    )


# An older file: the full cairn comment with microsecond timestamps and `+00:00`, fields the
# header shows repeated in it, no rule lines.
OLDER_FILE = """\
# Location Memories

## Location 44: Entrance Hall
**Visits:** 7 | **Episodes:** 1, 2, 3

### Memories

**[NOTE] 'open crown' does not work here.** *(Ep1, T2)*
<!-- cairn {"id": "m-crown", "importance": 300, "tags": ["note"], "created_at": "2026-11-23T09:32:29.997347+00:00"} -->
'open crown' does not work here.

**[NOTE] Visit to Entrance Hall** *(Ep1, T0-15)*
<!-- cairn {"id": "m-visit", "scope": "location", "category": "NOTE", "title": "Visit to Entrance Hall", "episode": 1, "location_id": 44, "tags": ["session"], "since_message_index": 29, "since_timestamp": "2026-11-23T09:32:29.993869Z", "created_at": "2026-11-23T09:32:30.031257+00:00"} -->
A draughty hall.

## Location 50: Library
**Visits:** 1 | **Episodes:** 1

### Memories

**[NOTE] 'open back' does not work here.** *(Ep1, T17)*
<!-- cairn {"id": "m-back", "importance": 300, "tags": ["note"], "created_at": "2026-11-23T09:32:30.040000+00:00"} -->
'open back' does not work here.

# NPC Memories

# World Memories
"""  # noqa: E501


def test_an_older_file_loads_exactly_and_is_written_to_the_second(
    markdown_factory: StoreFactory,
) -> None:
    path = markdown_factory.path
    path.write_text(OLDER_FILE, encoding="utf-8")
    store = markdown_factory.open()
    assert store.problems() == [] and check_memory_file(path) == []
    crown, visit, back = store.entries()
    assert (crown.id, crown.importance, crown.tags) == ("m-crown", 300, ["note"])
    assert crown.created_at == datetime(2026, 11, 23, 9, 32, 29, 997347, tzinfo=UTC)
    assert visit.created_at == datetime(2026, 11, 23, 9, 32, 30, 31257, tzinfo=UTC)
    assert visit.since_timestamp == datetime(2026, 11, 23, 9, 32, 29, 993869, tzinfo=UTC)
    assert (visit.turn_start, visit.turn_end, visit.since_message_index) == (0, 15, 29)
    assert back.created_at == datetime(2026, 11, 23, 9, 32, 30, 40000, tzinfo=UTC)

    add_all(store, location_memory("Written after", location_id=50))
    text = path.read_text(encoding="utf-8")
    assert ".997347" not in text and '"scope"' not in text and '"title"' not in text
    assert store.entries()[:3] == [as_stored("markdown", m) for m in (crown, visit, back)]
    assert markdown_factory.open().entries() == store.entries()


def test_backups_are_per_session_and_keep_the_file_as_it_was_before_each(
    markdown_factory: StoreFactory,
) -> None:
    """Ten writes in one session must not rotate away the file the session started from (it
    used to: .1-.3 rotated on every write, so ten turns after --fresh the old file was gone)."""
    path = markdown_factory.path
    before_sessions: list[bytes] = []
    for session in range(4):
        store = markdown_factory.open(backup_count=2)
        if path.exists():
            before_sessions.append(path.read_bytes())
        for n in range(10):
            add_all(store, location_memory(f"Session {session} write {n}"))
        store.close()
    backup = {n: path.with_name(f"Memories.md.{n}") for n in (1, 2, 3)}
    assert backup[1].read_bytes() == before_sessions[-1]  # as the last session found it
    assert backup[2].read_bytes() == before_sessions[-2]
    assert not backup[3].exists()
    assert len(parse(backup[1].read_text(encoding="utf-8")).cache.memories) == 30
    assert not list(path.parent.glob("*.tmp"))


def test_backup_count_zero_keeps_no_backups(markdown_factory: StoreFactory) -> None:
    store = markdown_factory.open(backup_count=0)
    for n in range(3):
        add_all(store, location_memory(f"Version {n}"))
    path = markdown_factory.path
    names = sorted(p.name for p in path.parent.iterdir())
    assert names == [".Memories.md.snapshot", "Memories.md", "Memories.md.lock"]  # no backup


def test_a_negative_backup_count_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="backup_count"):
        open_store("markdown", tmp_path / "Memories.md", backup_count=-1)


# -- sqlite: WAL, schema version, corrupt rows ---------------------------------------------------


def test_sqlite_uses_wal_and_records_its_schema_version(sqlite_factory: StoreFactory) -> None:
    add_all(sqlite_factory.open(), world_memory("One"))
    assert sqlite_pragma(sqlite_factory.path, "journal_mode") == "wal"
    assert sqlite_pragma(sqlite_factory.path, "user_version") == SCHEMA_VERSION


def test_sqlite_drops_the_indexes_of_older_schemas_that_no_query_uses(
    sqlite_factory: StoreFactory,
) -> None:
    """A schema 4 file had four indexes no query of cairn's uses, each a page more to write at
    every commit: opening it drops them and keeps its memories."""
    add_all(sqlite_factory.open(), world_memory("Kept", id="m-kept"))
    conn = sqlite3.connect(sqlite_factory.path)
    with conn:
        conn.execute("CREATE INDEX memories_by_location ON memories(location_id)")
        conn.execute("CREATE INDEX memories_by_status ON memories(status)")
        conn.execute("CREATE INDEX memories_by_importance ON memories(importance)")
        conn.execute("CREATE INDEX memory_npcs_by_npc ON memory_npcs(npc_id)")
    conn.execute("PRAGMA user_version = 4")
    conn.close()
    store = sqlite_factory.open()
    assert [e.id for e in store.entries()] == ["m-kept"]
    store.close()
    conn = sqlite3.connect(sqlite_factory.path)
    indexes = {
        row[0]
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        if not row[0].startswith("sqlite_autoindex")
    }
    conn.close()
    assert indexes == {"memories_store_order"}
    assert sqlite_pragma(sqlite_factory.path, "user_version") == SCHEMA_VERSION == 5


def test_sqlite_refuses_a_file_with_a_newer_schema(sqlite_factory: StoreFactory) -> None:
    sqlite_factory.open().close()
    conn = sqlite3.connect(sqlite_factory.path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        sqlite_factory.open()


def test_sqlite_reports_a_corrupt_row_and_keeps_it(sqlite_factory: StoreFactory) -> None:
    store = sqlite_factory.open()
    add_all(store, world_memory("Good", id="m-good"))
    conn = sqlite3.connect(sqlite_factory.path)
    with conn:
        conn.execute(
            "INSERT INTO memories (id, scope, category, status, location_id, importance,"
            " created_at, entry) VALUES ('m-bad', 'world', 'BOGUS', 'ACTIVE', NULL, 1, '', '{}')"
        )
    seq = conn.execute("SELECT seq FROM memories WHERE id = 'm-bad'").fetchone()[0]
    [problem] = store.problems()
    assert problem.line == seq and "m-bad" in problem.message
    add_all(store, world_memory("After"))
    assert conn.execute("SELECT entry FROM memories WHERE id = 'm-bad'").fetchone() == ("{}",)
    conn.close()
    loaded = sqlite_factory.open()
    assert [m.title for m in loaded.entries()] == ["Good", "After"]
    assert [p.line for p in loaded.problems()] == [seq]
