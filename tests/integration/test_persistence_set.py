"""Persistence levels are set, not only read (issue 38, item 5): `cairn.Memory.add`/`update` take
a level on every store (markdown, SQLite, PostgreSQL), `memories edit` changes one in a block's
header (`[NOTE - core]`), and an unknown level is refused with its name, storing nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cairn.errors import InvalidMemoryError
from cairn.memory_api import Memory
from cairn.models.memory import MemoryEntry, Persistence
from tests.contract.conftest import FILE_NAMES, open_store
from tests.integration.test_memories_edit import KINDS, Setup
from tests.postgres import server


def _open(kind: str, tmp_path: Path) -> Memory:
    options: dict[str, Any] = {"memory_space": str(tmp_path)}
    if kind == "postgres":
        options["database_url"] = server().url  # skips when there are no PostgreSQL binaries
    return Memory.open(tmp_path / "run", store=kind, **options)


def _stored(kind: str, tmp_path: Path, memory_id: str) -> MemoryEntry:
    """The memory as a fresh store object reads it back (what the file or database holds)."""
    path = tmp_path / "run" / FILE_NAMES[kind] if kind != "postgres" else tmp_path
    store = open_store(kind, path)
    try:
        entry = store.get(memory_id)
        assert entry is not None
        return entry
    finally:
        store.close()


@pytest.mark.parametrize("kind", KINDS)
def test_add_and_update_set_a_level_on_every_store(kind: str, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    with _open(kind, tmp_path) as memory:
        lamp = memory.add("The lamp is in the cellar.", persistence="Ephemeral")
        assert lamp.persistence == "ephemeral"
        plain = memory.add("The mailbox holds a leaflet.")
        assert plain.persistence is None
        with pytest.raises(InvalidMemoryError, match=r"Memory\.add: persistence: 'forever'"):
            memory.add("Never stored.", persistence="forever")
        assert _stored(kind, tmp_path, lamp.id).persistence == "ephemeral"
        memory.update(plain.id, persistence=Persistence.CORE)
        assert _stored(kind, tmp_path, plain.id).persistence == "core"
        with pytest.raises(InvalidMemoryError, match=r"Memory\.update: persistence"):
            memory.update(plain.id, persistence="sometimes")
        memory.update(plain.id, importance=700)  # another field: the level stays
        assert _stored(kind, tmp_path, plain.id).persistence == "core"
        memory.update(plain.id, persistence="")  # the level taken away
        again = _stored(kind, tmp_path, plain.id)
        assert again.persistence is None and again.importance == 700
        assert [e.text for e in memory.list()].count("Never stored.") == 0


@pytest.fixture(params=KINDS)
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Setup:
    return Setup(request.param, tmp_path)


def test_memories_edit_sets_changes_and_takes_away_a_level(setup: Setup) -> None:
    steps = [{"replace": [("**[NOTE] Storm coming**", "**[NOTE - core] Storm coming**")]}]
    result = setup.run(steps, "--world")
    assert result.exit_code == 0, result.output
    assert "0 added, 1 updated, 0 forgotten" in result.output
    assert setup.memories()["m-storm"].persistence == "core"
    (setup.editor_dir / "count").unlink()
    steps = [{"replace": [("[NOTE - core - ACTIVE] Storm", "[NOTE - Ephemeral - ACTIVE] Storm")]}]
    assert setup.run(steps, "--world").exit_code == 0
    assert setup.memories()["m-storm"].persistence == "ephemeral"
    (setup.editor_dir / "count").unlink()
    steps = [{"replace": [("[NOTE - ephemeral - ACTIVE] Storm", "[NOTE] Storm")]}]
    assert setup.run(steps, "--world").exit_code == 0
    assert setup.memories()["m-storm"].persistence is None


def test_memories_edit_refuses_an_unknown_level_and_changes_nothing(setup: Setup) -> None:
    steps = [
        {"replace": [("**[NOTE] Storm coming**", "**[NOTE - forever] Storm coming**")]},
        {"quit": True},
    ]
    result = setup.run(steps, "--world")
    assert result.exit_code == 1 and "abandoned" in result.output
    assert "persistence: 'forever' is not one of core, permanent, ephemeral" in setup.shown(1)
    assert setup.memories()["m-storm"].persistence is None
