"""`cairn memories import` writes through the bus (issue 30, "one door each way"): one
`ImportMemories` command, in one unit of work, with the messages it always printed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.sqlite_store import SqliteMemoryStore
from cairn.cli import main
from cairn.events.bus import MessageBus
from cairn.events.commands import Command
from cairn.models.memory import MemoryEntry, MemoryScope


@pytest.fixture
def handled(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    seen: list[str] = []
    original = MessageBus.handle

    def recording(bus: MessageBus, command: Command) -> Any:
        seen.append(type(command).__name__)
        return original(bus, command)

    monkeypatch.setattr(MessageBus, "handle", recording)
    yield seen


def exported(tmp_path: Path) -> Path:
    """An export of a markdown store whose room record says one visit and two episodes (as a
    hand might write it): a visit names at most one episode, so the import warns."""
    store = MarkdownMemoryStore(tmp_path / "md" / "Memories.md")
    with store.transaction() as tx:
        tx.add(
            MemoryEntry(
                scope=MemoryScope.LOCATION, location_id=4, location_name="Hall", title="Cold"
            )
        )
        tx.add(MemoryEntry(scope=MemoryScope.WORLD, title="Storm", text="Rain at dusk."))
        tx.record_visit(4, "Hall", 1)
    store.close()
    result = CliRunner().invoke(
        main, ["memories", "export", "--format", "jsonl", "--workdir", str(tmp_path / "md")]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # as an older cairn, or a hand, wrote it: one visit, two episodes
    lines[1] = lines[1].replace('"episodes": [1]', '"episodes": [1, 2]')
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_import_is_one_bus_command_with_its_messages(
    tmp_path: Path, handled: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = exported(tmp_path)
    # a settings file naming a model must not make an import ask for its key
    monkeypatch.setenv("CAIRN_LLM", "anthropic")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    workdir = tmp_path / "sqlite"
    args = ["memories", "import", str(path), "--workdir", str(workdir), "--store", "sqlite"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert handled == ["ImportMemories"]
    store_path = workdir / "memories.sqlite3"
    assert result.stdout == f"2 memories and 1 locations into {store_path}\n"
    assert result.stderr == (
        "warning: location 4: stored as id=4 name='Hall' visits=1 episodes=[1], exported as"
        " id=4 name='Hall' visits=1 episodes=[1, 2]\n"
    )
    store = SqliteMemoryStore(store_path)
    try:
        assert sorted(e.title for e in store.entries()) == ["Cold", "Storm"]
    finally:
        store.close()
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 1 and "import into an empty store" in str(again.exception)
    assert handled == ["ImportMemories", "ImportMemories"]
