"""The library's and an import's writes are commands on the bus (issue 30, "one door each
way"): AddMemory, UpdateMemory, ForgetMemory and ImportMemories, handled by MemoryHandler over
the IMemoryEditor port, in the bus's unit of work, with events sent after it commits."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from pydantic import ValidationError
from pytest_mock import MockerFixture

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.container import Container, build_container
from cairn.errors import MemoryNotFoundError, StoreError, UnknownCommandError
from cairn.events import commands as c
from cairn.events import events
from cairn.events.bus import MessageBus
from cairn.interfaces.memory_service import IMemoryEditor
from cairn.memory_api import Memory
from cairn.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemoryStatus,
)
from cairn.settings import load_settings


def world(title: str) -> MemoryEntry:
    return MemoryEntry(scope=MemoryScope.WORLD, title=title, text=f"{title}.")


@pytest.fixture
def container() -> Container:
    return build_container(load_settings(workdir=Path(tempfile.mkdtemp())), store=InMemoryStore())


@pytest.fixture
def handled(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the commands every bus handles from now on."""
    seen: list[str] = []
    original = MessageBus.handle

    def recording(bus: MessageBus, command: c.Command) -> Any:
        seen.append(type(command).__name__)
        return original(bus, command)

    monkeypatch.setattr(MessageBus, "handle", recording)
    yield seen


# -- the wiring: the container's bus hands each command to IMemoryEditor ---------------------


@pytest.fixture
def editor(mocker: MockerFixture) -> Any:
    return mocker.create_autospec(IMemoryEditor, instance=True)


def bus_over(editor: Any) -> MessageBus:
    """The container's real bus and handlers, the memory editor replaced by `editor`."""
    built = build_container(load_settings(workdir=Path(tempfile.mkdtemp())), store=InMemoryStore())
    built.memory_editor.override(providers.Object(editor))
    bus: MessageBus = built.bus()
    return bus


def test_each_edit_command_reaches_its_editor_method(editor: Any) -> None:
    bus = bus_over(editor)
    entry = world("Lamp")
    editor.add_memory.return_value = entry
    assert bus.handle(c.AddMemory(entry)) is entry
    editor.add_memory.assert_called_once_with(entry)
    bus.handle(c.UpdateMemory("m-1", importance=900, tags=("x",), persistence="core"))
    editor.update_memory.assert_called_once_with(
        "m-1",
        text=None,
        title=None,
        importance=900,
        category=None,
        tags=("x",),
        persistence="core",
    )
    bus.handle(c.ForgetMemory("m-2"))
    editor.forget_memory.assert_called_once_with("m-2")
    editor.import_memories.return_value = ["a warning"]
    record = LocationRecord(id=3, name="Hall", visits=1)
    assert bus.handle(c.ImportMemories(records=(record,), entries=(entry,))) == ["a warning"]
    editor.import_memories.assert_called_once_with((record,), (entry,))


def test_edit_commands_need_no_game_state() -> None:
    command = c.ForgetMemory("m-1")
    assert command.game_state.turns == [] and c.ForgetMemory("m-1").game_state is not (
        command.game_state
    )


# -- the library goes through the door ------------------------------------------------------


def test_the_library_s_writes_need_no_map(tmp_path: Path) -> None:
    """The editor is a service of its own (store and publisher): a library write builds no
    memory service, so it does not read map.json."""
    (tmp_path / "map.json").write_text("{not json")
    with Memory.open(tmp_path) as memory:
        entry = memory.add("The lamp is in the attic.")
        assert memory.get(entry.id) is not None


def test_memory_writes_are_bus_commands(container: Container, handled: list[str]) -> None:
    memory = Memory(container)
    entry = memory.add("The lamp is in the attic.")
    memory.update(entry.id, importance=900)
    memory.forget(entry.id)
    memory.get(entry.id), memory.list(), memory.search("lamp")  # reads: no command
    assert handled == ["AddMemory", "UpdateMemory", "ForgetMemory"]


def test_a_bus_without_the_handler_refuses_the_write(container: Container) -> None:
    """The library has no way in of its own: without the bus's handler nothing is stored."""
    container.bus.override(providers.Object(MessageBus({}, container.store())))
    memory = Memory(container)
    with pytest.raises(UnknownCommandError, match="AddMemory"):
        memory.add("Never stored.")
    assert memory.list() == []


def test_the_library_s_events_come_from_the_memory_editor_service(
    container: Container,
) -> None:
    """Sent by the service that wrote them (`events.py`: the sender is the service), the
    container's memory editor, as play's come from the memory service."""
    senders: list[object] = []
    memory = Memory(container)
    with (
        events.memory_recorded.connected_to(lambda sender, **kw: senders.append(sender)),
        events.memory_superseded.connected_to(lambda sender, **kw: senders.append(sender)),
    ):
        entry = memory.add("A note.")
        memory.forget(entry.id)
    assert senders == [container.memory_editor(), container.memory_editor()]


def test_memory_inside_a_bus_unit_joins_it(container: Container) -> None:
    """A play turn (`with bus.unit():`) that also writes through the library: one unit, the
    events after it, nothing kept when it fails."""
    memory, bus = Memory(container), container.bus()
    recorded: list[str] = []
    with events.memory_recorded.connected_to(lambda sender, **kw: recorded.append(kw["entry"].id)):
        with pytest.raises(RuntimeError), bus.unit():
            memory.add("Never stored.")
            raise RuntimeError("the turn failed")
        assert memory.list() == [] and recorded == []
        with bus.unit():
            first = memory.add("One.")
            memory.update(first.id, text="One, changed.")
            assert recorded == []
        assert recorded == [first.id]
    stored = memory.get(first.id)
    assert stored is not None and stored.text == "One, changed."


# -- the service's side: IMemoryEditor on MemoryService -------------------------------------


def test_add_names_the_place_as_the_store_knows_it(container: Container) -> None:
    store = container.store()
    with store.transaction() as tx:
        tx.record_visit(7, "Crypt", 1)
    entry = MemoryEntry(scope=MemoryScope.LOCATION, location_id=7, title="Cold", text="Cold.")
    container.bus().handle(c.AddMemory(entry))
    stored = store.get(entry.id)
    assert stored is not None and stored.location_name == "Crypt"


def test_update_reads_inside_the_unit_and_refuses_an_invalid_result(
    container: Container,
) -> None:
    bus, store = container.bus(), container.store()
    entry = world("Old")
    bus.handle(c.AddMemory(entry))
    with pytest.raises(MemoryNotFoundError):
        bus.handle(c.UpdateMemory("m-unknown", text="x"))
    with pytest.raises(ValidationError):
        bus.handle(c.UpdateMemory(entry.id, importance=5000, text="Kept?"))
    assert store.get(entry.id) == entry
    changed = bus.handle(c.UpdateMemory(entry.id, category=MemoryCategory.DANGER))
    assert changed.category is MemoryCategory.DANGER and changed.text == entry.text
    assert bus.handle(c.UpdateMemory(entry.id)) == changed


def test_forget_marks_superseded_once(container: Container) -> None:
    bus, store = container.bus(), container.store()
    entry = world("Gone")
    bus.handle(c.AddMemory(entry))
    sent: list[dict[str, Any]] = []
    with events.memory_superseded.connected_to(lambda sender, **kw: sent.append(kw)):
        bus.handle(c.ForgetMemory(entry.id))
        bus.handle(c.ForgetMemory(entry.id))  # already SUPERSEDED: nothing again
    assert sent == [{"old_id": entry.id, "new_id": None}]
    forgotten = store.get(entry.id)
    assert forgotten is not None and forgotten.status is MemoryStatus.SUPERSEDED
    with pytest.raises(MemoryNotFoundError):
        bus.handle(c.ForgetMemory("m-unknown"))


def test_import_is_one_unit_announcing_nothing_and_warns_after_commit(
    container: Container,
) -> None:
    bus, store = container.bus(), container.store()
    entries = (
        MemoryEntry(scope=MemoryScope.LOCATION, location_id=1, location_name="Hall", title="A"),
        world("B"),
    )
    # three episodes for one visit: a visit names at most one, so the record cannot be made
    records = (LocationRecord(id=1, name="Hall", visits=1, episodes=[1, 2, 3]),)
    recorded: list[object] = []
    with events.memory_recorded.connected_to(lambda sender, **kw: recorded.append(kw)):
        with bus.unit():
            warnings = bus.handle(c.ImportMemories(records=records, entries=entries))
            assert warnings == []  # filled when the unit commits, not before
        assert warnings == [
            "location 1: stored as id=1 name='Hall' visits=1 episodes=[1], exported as"
            " id=1 name='Hall' visits=1 episodes=[1, 2, 3]"
        ]
    assert recorded == []
    assert [e.id for e in store.entries()] == [e.id for e in entries]
    with pytest.raises(StoreError, match="holds 2 memories and 1 locations already"):
        bus.handle(c.ImportMemories(entries=(world("C"),)))
    assert len(store.entries()) == 2
