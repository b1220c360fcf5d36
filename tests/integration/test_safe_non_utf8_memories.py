"""Issue 37 item 9: a Memories.md that is not UTF-8 is refused by `show` and `play`, untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.cli import main
from cairn.errors import MemoryFileEncodingError
from cairn.memory_api import Memory
from cairn.models.memory import MemoryEntry, MemoryScope

PLAY = ["play", "--episodes", "1", "--max-turns", "3"]


def _saved_as(folder: Path, encoding: str) -> bytes:
    """Memories.md of `folder`, holding a memory with an accent, saved again in `encoding`."""
    with Memory.open(folder) as memory:
        memory.add("The café sells a brass lamp.", title="Café")
        memory.add("The troll is north.", title="Troll")
    path = folder / "Memories.md"
    data = path.read_text(encoding="utf-8").encode(encoding)
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_show_refuses_a_file_that_is_not_utf8_naming_line_and_offset(
    tmp_path: Path, encoding: str
) -> None:
    data = _saved_as(tmp_path, encoding)
    result = CliRunner().invoke(main, ["memories", "show", "--workdir", str(tmp_path)])
    assert isinstance(result.exception, MemoryFileEncodingError), result.output
    assert "No memories" not in result.output and "Troll" not in result.output
    path = tmp_path / "Memories.md"
    message = str(result.exception)
    assert f"{path}:" in message and "byte offset" in message and "not UTF-8" in message
    assert path.read_bytes() == data


def test_the_line_and_offset_are_those_of_the_first_bad_byte(tmp_path: Path) -> None:
    data = _saved_as(tmp_path, "latin-1")
    offset = data.index("é".encode("latin-1"))
    line = data.count(b"\n", 0, offset) + 1
    where = rf"Memories\.md:{line}: byte offset {offset}:"
    with pytest.raises(MemoryFileEncodingError, match=where):
        Memory.open(tmp_path)
    assert (tmp_path / "Memories.md").read_bytes() == data


def test_play_refuses_a_file_that_is_not_utf8_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(main, [*PLAY, "--workdir", str(tmp_path)])
    assert first.exit_code == 0, first.output
    data = _saved_as(tmp_path, "latin-1")
    result = runner.invoke(main, [*PLAY, "--workdir", str(tmp_path)])
    assert isinstance(result.exception, MemoryFileEncodingError), result.output
    assert f"{tmp_path / 'Memories.md'}:" in str(result.exception)
    assert (tmp_path / "Memories.md").read_bytes() == data


def test_a_utf8_file_with_a_byte_order_mark_still_reads(tmp_path: Path) -> None:
    data = _saved_as(tmp_path, "utf-8-sig")
    result = CliRunner().invoke(main, ["memories", "show", "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "Café" in result.output and "Troll" in result.output
    assert (tmp_path / "Memories.md").read_bytes() == data


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_a_save_that_is_not_utf8_during_play_is_merged_and_loses_nothing(
    tmp_path: Path, encoding: str
) -> None:
    """Refused when a store opens; while it is open, a person's save in another encoding is
    merged as any save is (what the store acknowledged stays, and goes on being written)."""
    path = tmp_path / "Memories.md"
    store = MarkdownMemoryStore(path)
    with Memory.open(tmp_path) as memory:
        titles = [memory.add(f"Note {i}: the café.", title=f"Note {i}").title for i in range(12)]
    store.reload()
    path.write_bytes(path.read_text(encoding="utf-8").encode(encoding))
    with store.transaction() as tx:
        tx.add(MemoryEntry(id="m-after", title="After", text="t", scope=MemoryScope.WORLD))
    assert {e.title for e in store.entries()} >= {*titles, "After"}
    store.close()
