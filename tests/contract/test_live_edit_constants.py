"""The constants of the live-edit protocol (`live_edit`), each pinned by what it promises a
person editing Memories.md while cairn writes it, and the rules no other test pinned (a save
cut mid-line, a save renamed into place, the checks before an append and before a swap).

Each test fails when its constant is changed in `live_edit`, or its rule's code disabled:
docs/live-edit.md names the mutations tried. Time is faked, not waited for: `file_swap.time`
(the settle time) and `watched_files.time` (the watch window) are replaced by a clock that
moves only when the code under test sleeps, or when the test moves it.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from cairn.adapters.storage import file_swap, markdown_store, watched_files
from cairn.adapters.storage.markdown_layout import RECENT_HEADER
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.errors import StoreError
from cairn.models.memory import MemoryEntry, MemoryScope
from tests.contract import editor
from tests.contract.test_store_hand_edits import (
    a_save_meeting_the_next_append,
    add,
    note,
    npc_note,
    reopened_titles,
    with_hand_note,
)


class FakeClock:
    """`time` as the code under test sees it: `time()` and `monotonic()` move only when it
    sleeps (or the test moves `now`). The first sleep runs `on_sleep`: what an editor does
    while cairn waits."""

    def __init__(self, now: float, on_sleep: Callable[[], None] | None = None) -> None:
        self.now = now
        self.slept = 0.0
        self._on_sleep = on_sleep

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert self.slept < 60, "cairn kept waiting for a file to settle"
        seconds = max(seconds, 0.001)  # (as a real sleep: a tiny one would not move `now`)
        self.now += seconds
        self.slept += seconds
        if self._on_sleep is not None:
            action, self._on_sleep = self._on_sleep, None
            action()


def mtime(path: Path) -> float:
    return path.stat().st_mtime_ns / 1e9


def block(text: str, n: int) -> int:
    """Where cairn note `n`'s block starts in `text`."""
    return text.index(f"**[NOTE] Cairn note {n}**")


# -- rule 3: SETTLE_SECONDS, SETTLE_TIMEOUT ----------------------------------------------------


def test_a_save_in_place_is_read_only_once_it_has_been_still_for_the_settle_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor saves in place in two writes; cairn looks between them. The first write ends
    at a line end (it looks whole) and lacks the last three memories, which the file it was
    copied from held: read then, they would be taken as deleted by hand, and cairn's change
    to one of them dropped. The file changed less than `SETTLE_SECONDS` ago, so cairn waits
    (the editor's second write lands meanwhile) and reads the whole save."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, *range(12))
    with store.transaction() as tx:  # the newest version the copy shows: notes 9-11 are older
        tx.update(note(0).model_copy(update={"text": "Learned 0, again."}))
    store.fold()
    saved = with_hand_note(path.read_text(), 0)
    first = saved[: block(saved.decode(), 9)]
    with open(path, "r+b") as editor_file:
        editor_file.truncate(0)
        editor_file.write(first)
        editor_file.flush()

        def second_write() -> None:
            editor_file.write(saved[len(first) :])
            editor_file.flush()

        clock = FakeClock(mtime(path), on_sleep=second_write)
        monkeypatch.setattr(file_swap, "time", clock)
        with store.transaction() as tx:
            tx.update(note(11).model_copy(update={"text": "Changed by cairn."}))
        monkeypatch.setattr(file_swap, "time", time)
        if editor_file.tell() < len(saved):  # cairn did not wait: the save ends now
            second_write()
    store.close()
    reread = MarkdownMemoryStore(path)
    texts = {m.title: m.text for m in reread.entries()}
    reread.close()
    assert {f"Cairn note {n}" for n in range(12)} | {"Hand note 0"} <= texts.keys()
    assert texts["Cairn note 11"] == "Changed by cairn."
    assert clock.slept >= 0.02


def test_a_save_in_place_cut_mid_line_is_read_once_it_ends_with_a_line_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As above, but the editor's first write stops mid-line and the file has been still for
    a second when cairn looks: a file cut mid-line is a save still being written, so cairn
    waits for the rest (a settled read alone would take the three missing memories as
    deleted by hand)."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, *range(12))
    with store.transaction() as tx:
        tx.update(note(0).model_copy(update={"text": "Learned 0, again."}))
    store.fold()
    saved = with_hand_note(path.read_text(), 0)
    first = saved[: block(saved.decode(), 9) + len("**[NOTE] Cai")]
    with open(path, "r+b") as editor_file:
        editor_file.truncate(0)
        editor_file.write(first)
        editor_file.flush()

        def second_write() -> None:
            editor_file.write(saved[len(first) :])
            editor_file.flush()

        clock = FakeClock(mtime(path) + 1.0, on_sleep=second_write)
        monkeypatch.setattr(file_swap, "time", clock)
        with store.transaction() as tx:
            tx.update(note(11).model_copy(update={"text": "Changed by cairn."}))
        monkeypatch.setattr(file_swap, "time", time)
        if editor_file.tell() < len(saved):  # cairn did not wait: the save ends now
            second_write()
    store.close()
    reread = MarkdownMemoryStore(path)
    texts = {m.title: m.text for m in reread.entries()}
    reread.close()
    assert {f"Cairn note {n}" for n in range(12)} | {"Hand note 0"} <= texts.keys()
    assert texts["Cairn note 11"] == "Changed by cairn."


def test_a_save_in_place_that_never_looks_finished_is_taken_after_the_settle_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person saved in place without a last line end (to cairn, a save still being
    written). cairn waits `SETTLE_TIMEOUT` (two seconds), no longer, then merges what it
    read: the write goes on, and nothing is lost."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0, 1)
    editor.save(path, with_hand_note(path.read_text(), 0).rstrip(b"\n"), "in-place")
    clock = FakeClock(mtime(path))
    monkeypatch.setattr(file_swap, "time", clock)
    add(store, 2)
    monkeypatch.setattr(file_swap, "time", time)
    store.close()
    assert 2.0 <= clock.slept < 2.05
    assert {"Cairn note 0", "Cairn note 1", "Cairn note 2", "Hand note 0"} <= reopened_titles(path)


def test_a_save_renamed_into_place_is_read_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file renamed into place is whole when it appears: cairn reads it without waiting,
    even one without a last line end, just written."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0, 1)
    editor.save(path, with_hand_note(path.read_text(), 0).rstrip(b"\n"), "rename")
    clock = FakeClock(mtime(path))
    monkeypatch.setattr(file_swap, "time", clock)
    add(store, 2)
    monkeypatch.setattr(file_swap, "time", time)
    store.close()
    assert clock.slept == 0
    assert {"Cairn note 0", "Cairn note 1", "Cairn note 2", "Hand note 0"} <= reopened_titles(path)


# -- rule 8: WATCH_SECONDS, WATCHED_FILES ------------------------------------------------------


def held_open(handle: BinaryIO) -> int:
    """Descriptors of this process open on the file `handle` is open on, besides `handle`
    (which keeps the file, and so its inode number, from going to another file)."""
    inode, count = os.fstat(handle.fileno()).st_ino, 0
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd == handle.fileno():
            continue
        try:
            if os.fstat(fd).st_ino == inode:
                count += 1
        except OSError:
            continue
    return count


@pytest.fixture
def every_write_folds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(markdown_store, "RECENT_LIMIT", 0)


@pytest.mark.usefixtures("every_write_folds")
def test_a_late_save_is_merged_up_to_the_end_of_the_watch_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor opened the file before a fold replaced it, and saves into the old file 4.9
    s later, after cairn wrote again: within `WATCH_SECONDS` (five), the save is merged."""
    clock = FakeClock(1000.0)
    monkeypatch.setattr(watched_files, "time", clock)
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0)
    opened = path.read_text()
    with open(path, "r+b") as editor_file:
        add(store, 1)  # the fold replaces the file the editor has open
        clock.now += 4.9
        add(store, 2)  # cairn writes again: the replaced file is still watched
        editor_file.truncate(0)
        editor_file.write(with_hand_note(opened, 0))
    add(store, 3)
    assert store.merges == {"late": 1}
    store.close()
    assert {f"Cairn note {n}" for n in range(4)} | {"Hand note 0"} <= reopened_titles(path)


@pytest.mark.usefixtures("every_write_folds")
def test_a_replaced_file_is_let_go_once_the_watch_window_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window bounds how long cairn keeps a replaced file open: past `WATCH_SECONDS`,
    the next write closes it."""
    clock = FakeClock(1000.0)
    monkeypatch.setattr(watched_files, "time", clock)
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0)
    with open(path, "rb") as replaced:
        add(store, 1)  # the fold replaces it
        clock.now += 4.9
        add(store, 2)
        assert held_open(replaced) == 1
        clock.now += 0.2  # 5.1 s after the swap
        add(store, 3)
        assert held_open(replaced) == 0
    store.close()


@pytest.mark.usefixtures("every_write_folds")
def test_a_late_save_into_a_file_replaced_four_folds_ago_is_merged(tmp_path: Path) -> None:
    """An editor kept the file open through four folds (`WATCHED_FILES`), then saved into it:
    the save is merged."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0)
    opened = path.read_text()
    with open(path, "r+b") as editor_file:
        add(store, 1, 2, 3, 4)  # four folds: the editor's file is the oldest one replaced
        editor_file.truncate(0)
        editor_file.write(with_hand_note(opened, 0))
    add(store, 5)
    assert store.merges == {"late": 1}
    store.close()
    assert {f"Cairn note {n}" for n in range(6)} | {"Hand note 0"} <= reopened_titles(path)


@pytest.mark.usefixtures("every_write_folds")
def test_no_more_than_four_replaced_files_are_held_open(tmp_path: Path) -> None:
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0)
    with ExitStack() as files:
        replaced = []
        for n in range(1, 7):
            replaced.append(files.enter_context(open(path, "rb")))
            add(store, n)  # a fold replaces it
        assert [held_open(handle) for handle in replaced] == [0, 0, 1, 1, 1, 1]
    store.close()


# -- rule 9: UNIT_BYTES_KEPT -------------------------------------------------------------------


def big_note(n: int) -> MemoryEntry:
    return MemoryEntry(
        id=f"b-{n:04d}", scope=MemoryScope.WORLD, title=f"Big note {n}", text="x" * 10_000
    )


def test_a_copy_torn_inside_a_unit_appended_a_megabyte_of_units_ago_is_read_without_it(
    tmp_path: Path,
) -> None:
    """An editor read the file while cairn appended a unit (the copy holds it cut inside a
    memory's header line); cairn then appended 95 more units, ~0.98 MB, before the person
    saved the copy with a note below. cairn still knows the torn unit's bytes
    (`UNIT_BYTES_KEPT`: a mebibyte): it is taken out, and the file reads with no problem (else
    the cut header is a block that does not parse, reported and kept verbatim)."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path, backup_count=0)
    add(store, 0, 1)
    opened = path.read_bytes()
    with store.transaction() as tx:
        tx.add(npc_note(10))
        tx.add(note(11))
    appended = path.read_bytes()[len(opened) :]
    torn = opened + appended[: appended.index(b"**[NOTE] Cairn note 10**") + len(b"**[NOTE] Cair")]
    for n in range(95):
        with store.transaction() as tx:
            tx.add(big_note(n))
    editor.save(path, (torn.decode() + "\n\n" + editor.hand_note(0) + "\n").encode(), "rename")
    add(store, 12)
    store.close()
    titles = reopened_titles(path)  # (no problem reported)
    assert {f"Cairn note {n}" for n in (0, 1, 10, 11, 12)} | {"Hand note 0"} <= titles
    assert {f"Big note {n}" for n in range(95)} <= titles


# -- rule 5: the check before an append ----------------------------------------------------------


def test_a_save_in_place_landing_just_before_an_append_is_merged_first(tmp_path: Path) -> None:
    """An editor saves in place after cairn's refresh and before its append (the same
    file, grown). The check before the append finds it: the save is merged and the unit
    appended to it. Without the check, the unit lands after the save, cairn takes the file
    for its own, and the next fold writes it without the person's note."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0, 1)
    appender = store._appender
    real_append = appender.append

    def save_then_append(*args: Any, **kwargs: Any) -> Any:
        appender.append = real_append  # type: ignore[method-assign]
        editor.save(path, with_hand_note(path.read_text(), 0), "in-place")
        return real_append(*args, **kwargs)

    appender.append = save_then_append  # type: ignore[method-assign]
    add(store, 2)
    store.fold()
    store.close()
    assert {"Cairn note 0", "Cairn note 1", "Cairn note 2", "Hand note 0"} <= reopened_titles(path)
    assert store.merges == {"check": 1}


# -- rule 6: REMNANTS_KEPT ---------------------------------------------------------------------


def add_long_unit(store: MarkdownMemoryStore, first: int) -> None:
    """Cairn notes `first` to `first + 19` in one unit, in the World and an NPC's section."""
    with store.transaction() as tx:
        for n in range(first, first + 20):
            tx.add(note(n) if n % 2 else npc_note(n))


def test_an_older_remnant_is_still_taken_out_of_a_copy_saved_after_a_newer_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twice, a save in place meets a long unit cairn is appending and the unit's end stands
    after the saved text until cairn's next write; an editor copies the file the first time.
    That copy is saved after the second remnant was cut: cairn still knows the first one
    (`REMNANTS_KEPT` remembers the last eight), takes it out, and the file reads with no
    problem, every note in it (its section header would take in the person's note)."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0)  # (the session's first write folds)
    copies: list[bytes] = []
    for save, first in ((0, 100), (1, 200)):
        saved = with_hand_note(path.read_text(), save) + b"\n"
        with a_save_meeting_the_next_append(monkeypatch, path, saved, len(saved) // 2) as cut:
            add_long_unit(store, first)
        copies += cut
        add(store, first + 50)  # a fold: the remnant is gone from the file
    editor.save(path, with_hand_note(copies[0].decode(), 2), "in-place")
    add(store, 99)
    store.close()
    cairn_notes = {f"Cairn note {n}" for n in (0, 99, 150, 250, *range(100, 120), *range(200, 220))}
    assert cairn_notes | {"Hand note 0", "Hand note 1", "Hand note 2"} <= reopened_titles(path)


# -- rule 2: VERSIONS_KEPT, ABSENT_KEPT --------------------------------------------------------


@pytest.mark.parametrize(("revisions", "text"), [(15, "Revised 14."), (16, "Learned 0.")])
def test_a_copy_is_known_unedited_while_its_version_is_among_the_last_sixteen(
    tmp_path: Path, revisions: int, text: str
) -> None:
    """A person's copy shows a memory cairn has revised since. While that version is among
    the memory's last `VERSIONS_KEPT` (sixteen) versions, the copy is known as unedited and
    cairn's newest version stays; a copy older than that counts as the person's edit (their
    older version wins), as live_edit states."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0, 1)
    opened = path.read_text()
    for r in range(revisions):
        with store.transaction() as tx:
            tx.update(note(0).model_copy(update={"text": f"Revised {r}."}))
    editor.save(path, with_hand_note(opened, 0), "rename")
    add(store, 2)
    assert store.get("c-0000").text == text  # type: ignore[union-attr]
    store.close()
    assert {"Cairn note 0", "Cairn note 1", "Cairn note 2", "Hand note 0"} <= reopened_titles(path)


def edit(text: str, n: int, by: str) -> str:
    """`text` with cairn note `n`'s text edited by hand."""
    return text.replace(f"Learned {n}.", f"Learned {n}, edited by {by}.", 1)


def test_a_memory_a_save_lacked_is_kept_when_a_copy_of_that_save_comes_240_writes_later(
    tmp_path: Path,
) -> None:
    """A person's save (an edit) lacked a memory cairn wrote after their editor read the file:
    kept, they never saw it. They edit that buffer further and save it again 240 writes
    later, after another editor's save was merged. The newest version their copy shows is
    their own first save's, which lacked the memory: it is still known as a memory that save
    lacked (`ABSENT_KEPT`: 256 generations), and kept again, not taken as deleted by hand."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    with store.transaction() as tx:
        for n in range(400):  # (so that what the copy lacks is no bulk loss)
            tx.add(note(n))
    opened = path.read_text()  # editor A reads the file
    add(store, 400)
    buffer = edit(opened, 0, "A")
    editor.save(path, buffer.encode(), "rename")  # A's save lacks note 400: kept
    add(store, *range(401, 641))
    editor.save(path, edit(path.read_text(), 2, "B").encode(), "rename")  # editor B's save
    add(store, 641)
    editor.save(path, edit(buffer, 1, "A").encode(), "rename")  # A saves its buffer again
    add(store, 642)
    store.close()
    reread = MarkdownMemoryStore(path)
    texts = {m.title: m.text for m in reread.entries()}
    reread.close()
    assert {f"Cairn note {n}" for n in range(643)} - texts.keys() == set()
    assert [texts[f"Cairn note {n}"] for n in range(3)] == [
        "Learned 0, edited by A.",
        "Learned 1, edited by A.",
        "Learned 2, edited by B.",
    ]


# -- rule 4: SHRINK_SHARE, SHRINK_MIN_HELD -----------------------------------------------------


@pytest.mark.parametrize(
    ("held", "deleted", "taken"),
    [
        (20, 10, True),  # half: a person's deletion
        (20, 11, False),  # more than half: a broken save
        (9, 8, True),  # fewer than ten held: a person's intent
        (10, 6, False),  # ten held: the rule applies
    ],
)
def test_a_save_lacking_more_than_half_of_ten_or_more_memories_deletes_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, held: int, deleted: int, taken: bool
) -> None:
    """A save that lacks more than one in `SHRINK_SHARE` (two) of the memories cairn holds,
    when it holds at least `SHRINK_MIN_HELD` (ten), is a broken save: every memory it lacks
    is kept, with a warning. Half of them, or most of fewer than ten, are deleted by hand."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    with store.transaction() as tx:
        for n in range(held):
            tx.add(note(n))
    store.fold()
    text = path.read_text()
    path.write_text(text[: block(text, 0)] + text[block(text, deleted) :])
    with caplog.at_level(logging.WARNING):
        store.reload()
    titles = {m.title for m in store.entries()}
    store.close()
    gone = {f"Cairn note {n}" for n in range(deleted)}
    assert (titles == {f"Cairn note {n}" for n in range(held)} - gone) is taken
    assert (f"lost {deleted} of {held} memories at once; kept them" in caplog.text) is not taken


# -- rule 7: FOLD_TRIES, MAX_ROUNDS ------------------------------------------------------------


def saves_before_every_swap(path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """From now on, an editor saves the file (as it is, with a note added, renamed into place)
    just before each of cairn's folds writes its temp file, so every fold's check before its
    swap finds a new save. Returns what stops it."""
    real_mkstemp = tempfile.mkstemp
    saves = 0

    def save_then_mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        nonlocal saves
        if Path(kwargs.get("dir", "")) == path.parent:
            editor.save(path, with_hand_note(path.read_text(), saves), "rename")
            saves += 1
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", save_then_mkstemp)
    return lambda: monkeypatch.setattr(tempfile, "mkstemp", real_mkstemp)


@pytest.mark.usefixtures("every_write_folds")
def test_a_fold_outpaced_by_saves_three_times_appends_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Saves land before every fold's swap: after `FOLD_TRIES` (three) of them, a fold that
    deletes nothing appends to the last save what it lacks, and the write succeeds."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0)
    stop = saves_before_every_swap(path, monkeypatch)
    add(store, 1)
    stop()
    assert store.merges == {"check": 3}
    store.close()
    titles = reopened_titles(path)
    assert {"Cairn note 0", "Cairn note 1", "Hand note 0", "Hand note 1", "Hand note 2"} <= titles


@pytest.mark.usefixtures("every_write_folds")
def test_a_fold_that_meets_saves_twenty_times_fails_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deletion must be written by a fold; saves before every swap make it try
    `MAX_ROUNDS` (twenty) times, then fail with an error that names them. The unit of work
    is undone; every save was merged."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0, 1)
    stop = saves_before_every_swap(path, monkeypatch)
    kept_changing = r"the file kept changing \(20 writes; check 20\)"
    with pytest.raises(StoreError, match=kept_changing), store.transaction() as tx:
        tx.delete("c-0000")
    stop()
    store.close()
    titles = reopened_titles(path)
    assert {"Cairn note 0", "Cairn note 1"} | {f"Hand note {n}" for n in range(20)} <= titles


def test_an_append_that_meets_saves_twenty_times_is_written_by_a_fold(tmp_path: Path) -> None:
    """Saves (each an edit of a memory) land before every append: after `MAX_ROUNDS`
    (twenty) tries, the unit of work is written by a fold, which meets none."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    add(store, 0, 1)
    appender = store._appender
    real_append = appender.append
    saves = 0

    def save_then_append(*args: Any, **kwargs: Any) -> Any:
        nonlocal saves
        edited = re.sub(r"Learned 1\b[^\n]*", f"Learned 1, edit {saves}.", path.read_text())
        editor.save(path, edited.encode(), "rename")
        saves += 1
        return real_append(*args, **kwargs)

    appender.append = save_then_append  # type: ignore[method-assign]
    add(store, 2)
    appender.append = real_append  # type: ignore[method-assign]
    assert sum(store.merges.values()) == saves == 20
    assert RECENT_HEADER not in path.read_text()  # folded
    store.close()
    reread = MarkdownMemoryStore(path)
    texts = {m.title: m.text for m in reread.entries()}
    reread.close()
    assert texts.keys() == {"Cairn note 0", "Cairn note 1", "Cairn note 2"}
    assert texts["Cairn note 1"] == "Learned 1, edit 19."
