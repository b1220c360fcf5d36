"""ListMemo and the filters built on it: an answer is handed back only for a list of the very
same objects (and context); a list holding one new object, or another episode, is read again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cairn.models.memory import MemoryEntry, MemoryScope
from cairn.services.list_memo import ListMemo
from cairn.services.persistence import CurrentFilter

START = datetime(2026, 1, 1, tzinfo=UTC)


def note(n: int, persistence: str | None = None, age_days: int = 1) -> MemoryEntry:
    return MemoryEntry(
        id=f"m-{n}",
        scope=MemoryScope.WORLD,
        title=f"Note {n}",
        text=f"Text {n}.",
        persistence=persistence,
        created_at=START - timedelta(days=age_days),
    )


def test_an_answer_comes_back_only_for_the_very_same_objects_and_context() -> None:
    memo: ListMemo[str] = ListMemo(kept=2)
    a, b = note(1), note(2)
    memo.put([a, b], "answer", "ep1")
    assert memo.get([a, b], "ep1") == (True, "answer")  # a new list of the same objects
    assert memo.get([a, b], "ep2") == (False, None)
    assert memo.get([a, note(2)], "ep1") == (False, None)  # an equal but new object
    assert memo.get([b, a], "ep1") == (False, None)
    assert memo.get([], "ep1") == (False, None)
    memo.put([b], "second", "ep1")
    memo.put([note(3)], "third", "ep1")  # the least recently used list goes
    assert memo.get([a, b], "ep1") == (False, None)
    assert memo.get([b], "ep1") == (True, "second")


def test_the_current_filter_reads_a_changed_list_again() -> None:
    keep = CurrentFilter()
    plain = [note(1), note(2, "permanent")]
    assert keep(plain, START) is plain
    assert keep(list(plain), START) == plain  # the same objects: handed back whole
    changed = [plain[0], note(2, "ephemeral")]  # the second memory is now ephemeral and old
    assert [e.id for e in keep(changed, START)] == ["m-1"]
    assert [e.id for e in keep(list(changed), START)] == ["m-1"]
    # in an episode that started before it was written, an ephemeral memory is current
    assert keep(changed, START - timedelta(days=2)) == changed
