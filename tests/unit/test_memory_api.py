"""cairn.Memory: add/get/list/update/forget, BM25 search, query escaping, external changes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
from cairn.container import build_container
from cairn.errors import CairnError, InvalidMemoryError, MemoryNotFoundError
from cairn.events import events
from cairn.interfaces.store import IMemoryStore
from cairn.memory_api import Memory
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    MemoryStatus,
)
from cairn.services.search_index import SearchIndex, fts_query

STORES = ["markdown", "sqlite"]
FILES = {"markdown": "Memories.md", "sqlite": "memories.sqlite3"}


@pytest.fixture(params=STORES)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def memory(tmp_path: Path, kind: str) -> Iterator[Memory]:
    with Memory.open(tmp_path, store=kind) as opened:
        yield opened


def other_store(tmp_path: Path, kind: str) -> IMemoryStore:
    """A second store object over the same file, as another part of the program would hold."""
    if kind == "markdown":
        return MarkdownMemoryStore(tmp_path / FILES[kind])
    return SqliteMemoryStore(tmp_path / FILES[kind])


def titles(hits: list[Any]) -> list[str]:
    return [h.memory.title for h in hits]


# -- add / get / list / update / forget ----------------------------------------------------


def test_add_infers_scope_and_get_and_list_read_it_back(memory: Memory, kind: str) -> None:
    assert memory.store.path.name == FILES[kind]
    place = memory.add("Open the window, then enter it.", location_id=79, location_name="Behind")
    bram = memory.add("Bram sells rope.", npc_id="bram", title="Rope seller", importance=700)
    world = memory.add("A storm comes at dusk.", category="danger", tags=["weather"])

    assert place.scope is MemoryScope.LOCATION and place.location_id == 79
    assert place.title == "Open the window, then enter it."
    assert place.source is MemorySource.NOTE and place.status is MemoryStatus.ACTIVE
    assert bram.scope is MemoryScope.NPC and bram.npc_ids == ["bram"] and bram.importance == 700
    assert world.scope is MemoryScope.WORLD and world.category is MemoryCategory.DANGER
    assert memory.get(bram.id) == bram
    assert memory.get("m-nothing") is None
    assert [e.id for e in memory.list()] == [place.id, bram.id, world.id]
    assert [e.id for e in memory.list(scope="npc")] == [bram.id]
    assert [e.id for e in memory.list(location_id=79)] == [place.id]
    assert [e.id for e in memory.list(npc_id="bram")] == [bram.id]
    # the location's name is remembered by the store, and reused when not given
    again = memory.add("The window sticks.", location_id=79)
    assert again.location_name == "Behind"


def test_added_memories_are_durable_and_announced_after_commit(tmp_path: Path, kind: str) -> None:
    recorded: list[MemoryEntry] = []
    with (
        events.memory_recorded.connected_to(lambda sender, **kw: recorded.append(kw["entry"])),
        Memory.open(tmp_path, store=kind) as memory,
    ):
        entry = memory.add("The lamp is in the attic.")
    assert recorded == [entry]
    with Memory.open(tmp_path, store=kind) as reopened:
        assert reopened.get(entry.id) == entry


def test_add_joins_an_outer_unit_of_work(memory: Memory) -> None:
    recorded: list[MemoryEntry] = []
    with events.memory_recorded.connected_to(lambda sender, **kw: recorded.append(kw["entry"])):
        with pytest.raises(RuntimeError), memory.store.transaction():
            memory.add("Never stored.")
            raise RuntimeError("the command failed")
        assert memory.list() == [] and recorded == []
        with memory.store.transaction():
            first = memory.add("One.")
            second = memory.add("Two.")
            assert recorded == []  # nothing announced before the outer commit
        assert [e.id for e in recorded] == [first.id, second.id]
        assert recorded == [memory.get(first.id), memory.get(second.id)]


def test_update_changes_only_the_given_fields(memory: Memory) -> None:
    entry = memory.add("The troll takes the sword.", npc_id="troll", tags=["combat"])
    updated = memory.update(entry.id, text="The troll is afraid of the sword.", importance=900)
    assert updated.id == entry.id and updated.text == "The troll is afraid of the sword."
    assert updated.importance == 900 and updated.title == entry.title
    assert updated.tags == ["combat"] and updated.npc_ids == ["troll"]
    assert memory.get(entry.id) == updated
    retagged = memory.update(entry.id, tags=["fear"], category="DISCOVERY", title="Troll fear")
    assert retagged.tags == ["fear"] and retagged.category is MemoryCategory.DISCOVERY
    assert memory.update(entry.id) == retagged  # nothing asked, nothing changed


def test_update_rejects_unknown_ids_and_invalid_values(memory: Memory) -> None:
    entry = memory.add("A note.")
    with pytest.raises(MemoryNotFoundError):
        memory.update("m-unknown", text="x")
    with pytest.raises(InvalidMemoryError, match=r"^Memory.update: importance: .*1000"):
        memory.update(entry.id, importance=5000)
    with pytest.raises(InvalidMemoryError, match=r"^Memory.update: title: "):
        memory.update(entry.id, title="   ")
    assert memory.get(entry.id) == entry


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.add(""), r"^Memory.add: text: must be a non-empty string"),
        (lambda m: m.add("   \n"), r"^Memory.add: text: "),
        (lambda m: m.add("A note.", importance=0), r"^Memory.add: importance: "),
        (lambda m: m.add("A note.", category="RUMOUR"), r"^Memory.add: category: 'RUMOUR'"),
        (lambda m: m.add("A note.", scope="galaxy"), r"^Memory.add: scope: 'galaxy'"),
        (lambda m: m.add("A note.", source="dream"), r"^Memory.add: source: 'dream'"),
        (lambda m: m.list(scope="galaxy"), r"^Memory.list: scope: 'galaxy'"),
    ],
)
def test_a_bad_argument_is_cairns_error_naming_it_and_stores_nothing(
    memory: Memory, call: Any, message: str
) -> None:
    """A new user's first call, `Memory.add("")`, raised pydantic's ValidationError about a
    "title" they never gave."""
    with pytest.raises(InvalidMemoryError, match=message) as caught:
        call(memory)
    assert isinstance(caught.value, CairnError) and isinstance(caught.value, ValueError)
    assert not isinstance(caught.value, ValidationError)
    assert memory.list() == []


def test_forget_supersedes_and_never_deletes(memory: Memory) -> None:
    keep = memory.add("The grating opens with the skeleton key.")
    gone = memory.add("The grating is locked for ever.")
    superseded: list[dict[str, Any]] = []
    with events.memory_superseded.connected_to(lambda sender, **kw: superseded.append(kw)):
        memory.forget(gone.id)
    assert superseded == [{"old_id": gone.id, "new_id": None}]
    forgotten = memory.get(gone.id)
    assert forgotten is not None
    assert forgotten.status is MemoryStatus.SUPERSEDED and forgotten.superseded_by is None
    assert forgotten.text == gone.text
    assert [e.id for e in memory.list()] == [keep.id]
    assert [e.id for e in memory.list(include_superseded=True)] == [keep.id, gone.id]
    assert titles(memory.search("grating")) == [keep.title]
    assert gone.id in [h.memory.id for h in memory.search("grating", include_superseded=True)]
    with pytest.raises(MemoryNotFoundError):
        memory.forget("m-unknown")


def test_forgetting_a_superseded_memory_keeps_its_successor_link(memory: Memory) -> None:
    old = memory.add("Old fact.")
    new = memory.add("New fact.")
    with memory.store.transaction() as tx:
        tx.supersede(old.id, new.id)
    memory.forget(old.id)
    again = memory.get(old.id)
    assert again is not None and again.superseded_by == new.id


def test_memory_wraps_any_built_container() -> None:
    store = InMemoryStore()
    memory = Memory(build_container(store=store))
    entry = memory.add("The cellar is dark.", location_id=3)
    assert store.get(entry.id) == entry
    assert titles(memory.search("cellar")) == [entry.title]


# -- BM25 ranking --------------------------------------------------------------------------


def test_a_rare_term_beats_two_common_ones(memory: Memory) -> None:
    """Word overlap ranks "open the door" first (two query words to one); BM25 knows that
    words in most memories say little and ranks the one holding the rare word first."""
    for room in ["kitchen", "attic", "cellar", "hall", "study"]:
        memory.add(f"Open the door of the {room}.")
    common = memory.add("You open the door.")
    rare = memory.add("A brass key lies here.")
    hits = memory.search("open door brass", k=3)
    assert hits[0].memory.id == rare.id
    assert common.id in [h.memory.id for h in hits[1:]]
    assert hits[0].score > hits[1].score > 0


def test_shorter_memories_rank_first_for_the_same_word(memory: Memory) -> None:
    """Length normalization: the same single mention counts for more in a short memory."""
    long = memory.add(
        "After a long climb past the ruined mill, the broken cart and the old well, "
        "you find a lantern half buried in the mud beside the road.",
        title="Long walk",
    )
    short = memory.add("A lantern.", title="Short find")
    for filler in ["The river is cold.", "Bats live here.", "The road forks."]:
        memory.add(filler)
    assert [h.memory.id for h in memory.search("lantern")] == [short.id, long.id]


def test_words_are_stemmed_and_titles_weigh_more(memory: Memory) -> None:
    in_text = memory.add("Somewhere there is a sword.", title="Notes on the hall")
    in_title = memory.add("It hangs above the fireplace.", title="Sword")
    for filler in ["Rain.", "Wind.", "Snow."]:
        memory.add(filler)
    assert [h.memory.id for h in memory.search("swords")] == [in_title.id, in_text.id]


def test_k_limits_and_filters_select(memory: Memory) -> None:
    here = memory.add("The lamp is on the table.", location_id=1)
    there = memory.add("The lamp is broken.", location_id=2)
    bram = memory.add("Bram wants the lamp.", npc_id="bram")
    world = memory.add("Lamps run out of oil.")
    assert len(memory.search("lamp", k=2)) == 2
    assert memory.search("lamp", k=0) == []
    assert {h.memory.id for h in memory.search("lamp", k=10)} == {
        here.id,
        there.id,
        bram.id,
        world.id,
    }
    assert [h.memory.id for h in memory.search("lamp", location_id=2)] == [there.id]
    assert [h.memory.id for h in memory.search("lamp", npc_id="bram")] == [bram.id]
    assert [h.memory.id for h in memory.search("lamp", scope="world")] == [world.id]
    assert [h.memory.id for h in memory.search("lamp", scope=MemoryScope.LOCATION, k=9)] in (
        [here.id, there.id],
        [there.id, here.id],
    )


def test_tags_and_location_names_are_searched(memory: Memory) -> None:
    tagged = memory.add("Something odd.", tags=["ghost"])
    placed = memory.add("Cold air.", location_id=7, location_name="Crypt")
    assert titles(memory.search("ghost")) == [tagged.title]
    assert titles(memory.search("crypt")) == [placed.title]


# -- hostile queries -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        '"',
        '"lamp',
        "AND",
        "lamp AND",
        "OR OR NOT",
        "*",
        "lamp*",
        "(",
        "lamp)",
        "-x",
        "- -",
        "NEAR(lamp troll, 2)",
        "title:lamp",
        "^lamp",
        "{title text}: lamp",
        "lamp + troll",
        "_",
        "\x00",
    ],
)
def test_search_syntax_in_queries_is_never_interpreted(memory: Memory, query: str) -> None:
    memory.add("The lamp and the troll.")
    hits = memory.search(query)
    assert isinstance(hits, list)


def test_hostile_queries_are_taken_as_plain_words(memory: Memory) -> None:
    both = memory.add("The lamp and the troll.")
    memory.add("Rain.")
    assert memory.search("") == [] and memory.search("*") == [] and memory.search("(") == []
    assert titles(memory.search("-lamp")) == [both.title]  # not a NOT
    assert titles(memory.search("AND")) == [both.title]  # the word "and", not an operator
    assert titles(memory.search('"troll')) == [both.title]
    assert titles(memory.search("-x")) == []


def test_fts_query_quotes_every_word() -> None:
    assert fts_query('say "hi" AND (x*) -y') == '"say" OR "hi" OR "and" OR "x" OR "y"'
    assert fts_query("Lamp lamp LAMP") == '"lamp"'
    assert fts_query(" *()-^\"' ") == ""


# -- changes made elsewhere ----------------------------------------------------------------


def test_search_sees_a_second_store_object(tmp_path: Path, kind: str) -> None:
    with Memory.open(tmp_path, store=kind) as memory:
        first = memory.add("The dam controls the water.")
        assert titles(memory.search("dam")) == [first.title]
        other = other_store(tmp_path, kind)
        try:
            added = MemoryEntry(scope=MemoryScope.WORLD, title="Dam bolt", text="Turn the bolt.")
            with other.transaction() as tx:
                tx.add(added)
                tx.supersede(first.id, None)
        finally:
            other.close()
        assert titles(memory.search("dam")) == ["Dam bolt"]
        assert titles(memory.search("bolt")) == ["Dam bolt"]


def test_search_sees_another_process_writing_the_same_file(tmp_path: Path, kind: str) -> None:
    with Memory.open(tmp_path, store=kind) as memory:
        memory.add("Nothing about the subject yet.")
        assert memory.search("coffin") == []
        script = textwrap.dedent(
            f"""
            from pathlib import Path
            from cairn.memory_api import Memory

            with Memory.open(Path({str(tmp_path)!r}), store={kind!r}) as other:
                other.add("The gold coffin is in the Egyptian room.", location_id=12)
            """
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
        hits = memory.search("coffin")
        assert titles(hits) == ["The gold coffin is in the Egyptian room."]
        assert hits[0].memory.location_id == 12


def test_the_index_is_updated_by_id_not_rebuilt(tmp_path: Path, kind: str) -> None:
    store = other_store(tmp_path, kind)
    writer = other_store(tmp_path, kind)
    try:
        with store.transaction() as tx:
            for n in range(20):
                tx.add(MemoryEntry(scope=MemoryScope.WORLD, title=f"Room {n}", text="A room."))
        index = SearchIndex(store)
        assert len(index.search("room", k=50)) == 20
        assert index.writes == 20
        index.search("room")
        index.search("anything")
        assert index.writes == 20  # nothing changed: nothing written
        victim = store.entries()[3]
        with writer.transaction() as tx:  # another store object: the file is re-read
            tx.add(MemoryEntry(scope=MemoryScope.WORLD, title="Vault", text="A vault."))
            tx.update(victim.model_copy(update={"text": "A locked room."}))
            tx.update(store.entries()[4].model_copy(update={"importance": 900}))
        assert titles(index.search("vault")) == ["Vault"]
        assert titles(index.search("locked")) == [victim.title]
        assert index.writes == 22  # one insert, one rewrite; the importance change costs none
        with writer.transaction() as tx:
            tx.delete(victim.id)
        assert index.search("locked") == []
        assert index.writes == 23
        index.close()
    finally:
        writer.close()
        store.close()
