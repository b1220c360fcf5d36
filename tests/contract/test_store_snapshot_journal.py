"""The snapshot's journal: a load reads the recent part's index from it, never parsing it, only
while it proves the file; the recent part's bound grows with the file.

- Each append adds a line to `.Memories.md.snapshot` (see `snapshot`); a new store object
  opened on the file then reads what a full parse reads, with no memory read yet.
- A journal that does not prove the whole file (a line lost in a crash, a digest that does not
  match, a torn or hostile line, a person's edit) is not used: the recent part is parsed.
- The recent part may grow to the folded part's size over `RECENT_SHARE` (at least
  `RECENT_LIMIT`), so folds (whole-file writes) come at sizes growing by a constant factor.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.adapters.storage import markdown_store
from cairn.adapters.storage.markdown_layout import RECENT_HEADER
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.snapshot import snapshot_path
from cairn.errors import StoreError
from cairn.models.memory import MemoryEntry, MemoryScope, MemoryStatus

BASE = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)
_NAMES = ("Hall", "Cellar \u00e9t\u00e9", "Attic *star*", "Dam")


def entry(rng: random.Random, n: int) -> MemoryEntry:
    """A memory in some room, NPC section or the world, some with non-ASCII text."""
    roll = rng.random()
    fields: dict[str, object] = {
        "id": f"j-{n:04d}",
        "title": f"Memory {n} \u2014 caf\u00e9" if n % 5 == 0 else f"Memory {n}",
        "text": f"Learned thing {n}.\n# not a header {n}" if n % 7 == 0 else f"Thing {n}.",
        "importance": rng.randrange(1, 1000),
        "created_at": BASE + timedelta(seconds=n),
    }
    room = rng.randrange(1, 5)
    if roll < 0.5:
        return MemoryEntry(  # type: ignore[arg-type]
            scope=MemoryScope.LOCATION, location_id=room, location_name=_NAMES[room - 1], **fields
        )
    if roll < 0.8:
        npcs = rng.choice((["troll"], ["thief", "troll"], ["cyclops"]))
        return MemoryEntry(scope=MemoryScope.NPC, npc_ids=npcs, **fields)  # type: ignore[arg-type]
    return MemoryEntry(scope=MemoryScope.WORLD, **fields)  # type: ignore[arg-type]


def grow(store: MarkdownMemoryStore, rng: random.Random, start: int, units: int) -> None:
    """`units` units of work: adds, updates (some moving a memory to another section),
    supersessions and visits (some renaming a room)."""
    for n in range(start, start + units):
        known = [e.id for e in store.entries()]
        with store.transaction() as tx:
            tx.add(entry(rng, n))
            roll = rng.random()
            if known and roll < 0.3:
                old = store.get(rng.choice(known))
                assert old is not None
                moved = entry(rng, n).model_copy(update={"id": old.id, "text": f"Moved {n}."})
                tx.update(moved)
            elif known and roll < 0.45:
                tx.supersede(rng.choice(known), f"j-{n:04d}")
            if rng.random() < 0.4:
                room = rng.randrange(1, 5)
                name = _NAMES[room - 1] if rng.random() < 0.7 else f"Renamed {n}"
                tx.record_visit(room, name, n % 3 + 1)


def full_parse(path: Path) -> tuple[list[MemoryEntry], dict[int, object]]:
    """What a store that parses the whole file reads (a copy with no snapshot beside it)."""
    copy = path.parent / "parsed" / path.name
    copy.parent.mkdir(exist_ok=True)
    copy.write_bytes(path.read_bytes())
    store = MarkdownMemoryStore(copy)
    try:
        assert store._cache.unread == 0
        records = {k: r.model_dump() for k, r in store.locations().items()}
        assert records == {
            k: r.model_dump()
            for k, r in parse(path.read_text(encoding="utf-8"), str(path)).cache.locations.items()
        }
        return store.entries(), records
    finally:
        store.close()


def by_id(entries: list[MemoryEntry]) -> list[MemoryEntry]:
    return sorted(entries, key=lambda e: e.id)


def journal_lines(path: Path) -> list[bytes]:
    return snapshot_path(path).read_bytes().split(b"\n")[1:-1]


def written(tmp_path: Path, units: int = 25) -> tuple[Path, MarkdownMemoryStore]:
    """A store that folded (its first write), then appended `units` units of work."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    rng = random.Random(3)
    grow(store, rng, 0, 20)
    store.fold()
    grow(store, rng, 20, units)
    assert RECENT_HEADER in path.read_text(encoding="utf-8")
    return path, store


def test_a_load_takes_the_recent_part_from_the_journal_and_reads_what_a_parse_reads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "Memories.md"
    writer = MarkdownMemoryStore(path)
    rng = random.Random(11)
    grow(writer, rng, 0, 15)
    writer.fold()
    for step in range(6):
        grow(writer, rng, 15 + step * 8, 8)
        assert len(journal_lines(path)) == 8 * (step + 1), "one line per unit of work"
        store = MarkdownMemoryStore(path)
        total = len(store._cache.index.order)
        assert store._cache.unread == total, "nothing parsed: the recent part's index is read"
        entries, records = full_parse(path)
        # the writer's order (a memory moved to another section in the recent part keeps its
        # place in store order; a whole parse takes file order there: compare by id)
        assert store.entries() == writer.entries()
        assert by_id(store.entries()) == by_id(entries)
        assert {k: r.model_dump() for k, r in store.locations().items()} == records
        assert store.problems() == []
        assert store.ranked(1000) == writer.ranked(1000)
        assert store.entries(location_id=2) == writer.entries(location_id=2)
        assert store.entries(npc_id="troll") == writer.entries(npc_id="troll")
        store.close()
    writer.close()


def test_a_session_opened_from_the_journal_goes_on_with_it(tmp_path: Path) -> None:
    path, writer = written(tmp_path)
    writer._appender.appended = False  # leave the recent part unfolded on close
    writer.close()
    second = MarkdownMemoryStore(path)
    before = len(journal_lines(path))
    rng = random.Random(5)
    for n in range(100, 104):  # no reads: the session appends (takes its backup as a copy)
        with second.transaction() as tx:
            tx.add(entry(rng, n))
            tx.record_visit(n % 4 + 1, f"Renamed {n}", 2)
    assert len(journal_lines(path)) == before + 4
    third = MarkdownMemoryStore(path)
    assert third._cache.unread == len(third._cache.index.order)
    assert third.entries() == second.entries()
    assert by_id(third.entries()) == by_id(full_parse(path)[0])
    third.close()
    second.close()


def _lose_last_line(path: Path) -> None:
    data = snapshot_path(path).read_bytes()
    snapshot_path(path).write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])


def _tear_last_line(path: Path) -> None:
    data = snapshot_path(path).read_bytes()
    snapshot_path(path).write_bytes(data[:-9])


def _bad_digest(path: Path) -> None:
    lines = snapshot_path(path).read_bytes().split(b"\n")
    doc = json.loads(lines[3])
    doc["digest"] = "0" * 32
    lines[3] = json.dumps(doc).encode()
    snapshot_path(path).write_bytes(b"\n".join(lines))


def _hostile_rows(path: Path) -> None:
    lines = snapshot_path(path).read_bytes().split(b"\n")
    doc = json.loads(lines[2])
    doc["rows"] = [[{"x": 1}, "a", None, "b", [], 7, "z", None, -5, "q", 3]]
    lines[2] = json.dumps(doc).encode()
    snapshot_path(path).write_bytes(b"\n".join(lines))


def _gap(path: Path) -> None:
    lines = snapshot_path(path).read_bytes().split(b"\n")
    del lines[2]
    snapshot_path(path).write_bytes(b"\n".join(lines))


def _edited_recent_part(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    recent = text.index(RECENT_HEADER)
    at = text.index("Thing", recent)
    path.write_text(text[:at] + "Fixed" + text[at + 5 :], encoding="utf-8")


@pytest.mark.parametrize(
    "spoil",
    [_lose_last_line, _tear_last_line, _bad_digest, _hostile_rows, _gap, _edited_recent_part],
)
def test_a_journal_that_does_not_prove_the_file_is_not_used(tmp_path: Path, spoil: object) -> None:
    path, writer = written(tmp_path)
    writer._appender.appended = False
    writer.close()
    assert callable(spoil)
    spoil(path)
    expected = full_parse(path)
    store = MarkdownMemoryStore(path)
    assert store._cache.unread < len(store._cache.index.order), "the recent part was parsed"
    assert by_id(store.entries()) == by_id(expected[0])
    assert {k: r.model_dump() for k, r in store.locations().items()} == expected[1]
    store.close()


def test_a_journal_row_that_lies_about_its_block_is_caught_when_the_block_is_read(
    tmp_path: Path,
) -> None:
    """The digests prove the file; rows whose spans point elsewhere (written by hand) fail
    loudly, naming the memory, rather than returning another memory."""
    path, writer = written(tmp_path)
    writer._appender.appended = False
    writer.close()
    lines = snapshot_path(path).read_bytes().split(b"\n")
    docs = [json.loads(line) for line in lines[1:-1]]
    first, second = docs[0]["rows"][0], docs[1]["rows"][0]
    first[8:10], second[8:10] = second[8:10], first[8:10]
    lines[1:-1] = [json.dumps(d).encode() for d in docs]
    snapshot_path(path).write_bytes(b"\n".join(lines))
    store = MarkdownMemoryStore(path)
    assert store._cache.unread == len(store._cache.index.order), "the journal was taken"
    with pytest.raises(StoreError, match="does not read"):
        store.entries()
    store.close()


def test_a_status_change_in_the_recent_part_reaches_a_lazy_load(tmp_path: Path) -> None:
    path, writer = written(tmp_path)
    superseded = writer._cache.ids_with_status(MemoryStatus.SUPERSEDED)
    writer._appender.appended = False
    writer.close()
    store = MarkdownMemoryStore(path)
    assert superseded, "the units superseded some memories"
    assert store._cache.ids_with_status(MemoryStatus.SUPERSEDED) == superseded
    store.close()


def _folds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: int) -> tuple[int, int]:
    """Grow a store unit by unit; return the folds (whole-file swaps) and check the recent part
    never outgrows its bound by more than a unit."""
    monkeypatch.setattr(markdown_store, "RECENT_LIMIT", 2_000)
    monkeypatch.setattr(markdown_store, "RECENT_SHARE", share)
    path = tmp_path / f"share{share}" / "Memories.md"
    store = MarkdownMemoryStore(path)
    rng = random.Random(2)
    folds, last, longest = 0, 0, 0
    for n in range(300):
        with store.transaction() as tx:
            tx.add(entry(rng, n))
        text = path.read_text(encoding="utf-8")
        folded, _, recent = text.partition(RECENT_HEADER)
        folds += len(recent) < last  # the recent part went into the sections
        last = len(recent)
        bound = max(2_000, len(folded) // share) if share else 2_000
        longest = max(longest, len(recent) - bound)
    assert longest < 700, "a fold comes at the first write past the bound"
    assert by_id(store.entries()) == by_id(full_parse(path)[0])
    store.close()
    return folds, longest


def test_the_recent_parts_bound_grows_with_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixed, _ = _folds(tmp_path, monkeypatch, 0)
    growing, _ = _folds(tmp_path, monkeypatch, 2)
    assert fixed > 2 * growing, f"{growing} folds with a growing bound, {fixed} with a fixed one"


def test_a_rooms_unread_memories_are_read_in_few_parses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.adapters.storage import block_source

    path, writer = written(tmp_path)
    room = max(range(1, 5), key=lambda r: len(writer.entries(location_id=r)))
    expected = writer.entries(location_id=room)
    writer._appender.appended = False
    writer.close()
    store = MarkdownMemoryStore(path)
    calls: list[int] = []

    def counted(text: str, *args: object, **kwargs: object) -> object:
        calls.append(len(text))
        return parse(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(block_source, "parse", counted)
    assert len(expected) > 3
    assert store.entries(location_id=room) == expected
    # one parse per name the room's headers show (it was renamed in the recent part)
    assert len(calls) == 2, "the room's blocks (folded and recent) read in few parses"
    store.close()


def test_a_room_name_orjson_refuses_is_journaled_escaped_and_still_loads(tmp_path: Path) -> None:
    """A lone surrogate (a name read from a file that was not UTF-8) cannot go through orjson:
    its journal line is written escaped, and a load that refuses the journal parses instead."""
    path = tmp_path / "Memories.md"
    writer = MarkdownMemoryStore(path)
    grow(writer, random.Random(3), 0, 4)
    writer.fold()
    with writer.transaction() as tx:
        tx.record_visit(7, "Caf\udce9", 1)
    assert b"\\udce9" in journal_lines(path)[-1]
    loaded = MarkdownMemoryStore(path)
    assert loaded.entries() == writer.entries()
    record = loaded.location(7)
    assert record is not None and record.name == "Caf\udce9"
    loaded.close()
    writer.close()
