"""A person edits a lesson by hand (issue 36): its fields live in the block's cairn comment of
Memories.md (what `memories edit` opens too), are read back as typed fields, and a field that is
not valid is reported with its line and kept, never dropped."""

from __future__ import annotations

from pathlib import Path

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.lessons.reading import steps_first
from cairn.models.lesson import Effect, EffectKind, Evidence, Lesson
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope


def scored() -> MemoryEntry:
    lesson = Lesson(
        action="west",
        effect=Effect(kind=EffectKind.SCORED, points=10),
        steps_first=["open window"],
        evidence=Evidence.TESTED,
        episode=1,
        turn=69,
    )
    return MemoryEntry(
        id="m-scored",
        scope=MemoryScope.LOCATION,
        location_id=79,
        location_name="Behind House",
        category=MemoryCategory.SUCCESS,
        title="Scored 10 by 'west'",
        text="'west' gained 10 points. Steps first: (1) open window.",
        lesson=lesson,
    )


def written(tmp_path: Path) -> Path:
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    with store.transaction() as tx:
        tx.add(scored())
    store.close()
    return path


def test_a_hand_edited_lesson_field_is_what_readers_take(tmp_path: Path) -> None:
    path = written(tmp_path)
    text = path.read_text()
    assert '"steps_first": ["open window"]' in text
    path.write_text(text.replace('"steps_first": ["open window"]', '"steps_first": ["open door"]'))
    store = MarkdownMemoryStore(path)
    entry = store.get("m-scored")
    assert entry is not None and steps_first(entry) == ["open door"]
    # the prose still says "open window": it is never parsed back
    assert "(1) open window" in entry.text
    store.close()


def test_a_lesson_field_that_is_not_valid_is_reported_with_its_line_and_kept(
    tmp_path: Path,
) -> None:
    path = written(tmp_path)
    text = path.read_text().replace('"kind": "scored"', '"kind": "flew"')
    path.write_text(text)
    store = MarkdownMemoryStore(path)
    problems = store.problems()
    assert store.get("m-scored") is None
    assert len(problems) == 1 and "lesson" in problems[0].message
    line = text.splitlines()[problems[0].line - 1]
    assert "Scored 10 by 'west'" in line or '"flew"' in line
    store.close()
    assert '"flew"' in path.read_text()  # the block is kept verbatim
