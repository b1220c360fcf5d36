"""Memories say what made them (`source`), also when they come from files written before."""

from __future__ import annotations

from pathlib import Path

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope, MemorySource


def test_older_entries_get_their_source_from_their_tags() -> None:
    note = MemoryEntry.model_validate(
        {"scope": "world", "title": "Words", "tags": ["note"], "text": "x"}
    )
    visit = MemoryEntry.model_validate(
        {"scope": "location", "location_id": 1, "title": "Visit to Hall", "tags": ["session"]}
    )
    plain = MemoryEntry.model_validate({"scope": "world", "title": "Anything"})
    assert (note.source, visit.source, plain.source) == (
        MemorySource.NOTE,
        MemorySource.VISIT,
        MemorySource.ACTION,
    )


def test_a_source_the_tags_would_contradict_survives_the_markdown_file(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    odd = MemoryEntry(
        id="m-odd",
        scope=MemoryScope.LOCATION,
        location_id=3,
        title="Tagged 'note' by a person, made by synthesis",
        tags=["note"],
        source=MemorySource.ACTION,
    )
    usual = MemoryEntry(
        id="m-usual",
        scope=MemoryScope.LOCATION,
        location_id=3,
        title="A note",
        tags=["note"],
        source=MemorySource.NOTE,
    )
    with store.transaction() as tx:
        tx.add(odd)
        tx.add(usual)
    store.close()
    text = path.read_text()
    assert '"source": "action"' in text and text.count('"source"') == 1
    again = MarkdownMemoryStore(path)
    assert again.get("m-odd").source is MemorySource.ACTION  # type: ignore[union-attr]
    assert again.get("m-usual").source is MemorySource.NOTE  # type: ignore[union-attr]
    again.close()


def test_older_move_tags_become_the_typed_move() -> None:
    old = MemoryEntry.model_validate(
        {
            "scope": "location",
            "location_id": 79,
            "title": "'west' leads to Kitchen",
            "tags": ["location_changed", "move:west->203"],
        }
    )
    assert (old.via, old.leads_to) == ("west", 203)


def test_a_location_id_no_store_can_keep_is_refused_by_name() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="location_id"):
        MemoryEntry(scope=MemoryScope.LOCATION, location_id=2**63, title="Far away")
    assert MemoryEntry(scope=MemoryScope.LOCATION, location_id=2**63 - 1, title="Edge").location_id


def test_lone_surrogates_are_refused_by_field() -> None:
    import pytest
    from pydantic import ValidationError

    for field in ("title", "text", "location_name", "quest_id", "encounter_id", "via"):
        values = {"scope": MemoryScope.WORLD, "title": "Ok", field: "bad \ud83d here"}
        with pytest.raises(ValidationError, match=rf"{field}\n[\s\S]*U\+D83D at position 4"):
            MemoryEntry(**values)  # type: ignore[arg-type]
    # read from JSON, and inside a list: the error keeps its field and its place
    from pydantic import TypeAdapter

    rows = [{"scope": "world", "title": "Ok"}, {"scope": "world", "title": "Ok", "via": "\udcff"}]
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(list[MemoryEntry]).validate_python(rows)
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [
        ((1, "via"), "lone_surrogate")
    ]


def test_an_empty_title_is_refused_by_field() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as caught:
        MemoryEntry.model_validate_json('{"scope": "world", "title": ""}')
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [
        (("title",), "string_too_short")
    ]


def test_an_older_move_tag_to_a_location_no_store_keeps_is_refused() -> None:
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=r"leads_to\n.*move:west->99999999999999999999"):
        MemoryEntry(scope=MemoryScope.WORLD, title="Far", tags=["move:west->99999999999999999999"])


def test_a_given_source_and_move_win_over_older_tags() -> None:
    entry = MemoryEntry.model_validate_json(
        '{"scope": "world", "title": "t", "tags": ["note", "move:west->5"],'
        ' "source": "action", "via": "north", "leads_to": 7}'
    )
    assert (entry.source, entry.via, entry.leads_to) == (MemorySource.ACTION, "north", 7)
    told = MemoryEntry.model_validate_json(
        '{"scope": "world", "title": "t", "tags": ["note", "move:west->5"]}'
    )
    assert (told.source, told.via, told.leads_to) == (MemorySource.NOTE, "west", 5)
    assert {"source", "via", "leads_to"} <= told.model_fields_set
