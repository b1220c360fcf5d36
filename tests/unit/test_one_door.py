"""One door each way (issue 30): every memory write is a command on the bus, handled in its
unit of work, and the unit of work on the store is opened only behind the door.

Before, `cairn.Memory.add/update/forget` and `cairn memories import` (through
`adapters/storage/transfer.import_into`) opened `store.transaction()` themselves: a second,
unguarded way in beside the bus that play and replay use.

The scan parses every module of the package (ast) for a call `<something>.transaction(...)`.
It is allowed under `app/services/` (the memory engine, IMemoryService's implementation, which
the handlers reach through ports) and `app/testing/` (the test doubles users get); anywhere
else only in `ALLOWED`, each with its reason. The adapters folder is not exempt as a whole: the
import's write hid there, an application's use case in an adapter's clothes.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import cairn


def package_modules() -> dict[str, Path]:
    """Every module of the package by dotted name, with its source file."""
    root = Path(cairn.__file__).parent
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(["cairn", *parts])] = path
    return modules


EXEMPT = ("services", "testing")
"""Folders of the package whose modules may open a unit of work on the store."""

ALLOWED: dict[str, str] = {
    "cairn.events.bus": (
        "the door itself: MessageBus.unit opens the one unit of work each command (and each"
        " `with bus.unit():` block) is handled in"
    ),
    "cairn.events.handlers.turn": (
        "RecordTurn's handler applies the turn rules' typed changes in the bus's unit of work"
        " (it joins the one the bus opened; the rules themselves only write to a draft)"
    ),
    "cairn.events.handlers.location": (
        "ChangeLocation's handler applies what the memory service drafted (the visit's summary,"
        " the visit count) in the bus's unit of work (it joins the one the bus opened)"
    ),
    "cairn.events.handlers.quest": (
        "CompleteObjective's handler applies the drafted world memory in the bus's unit of"
        " work (it joins the one the bus opened)"
    ),
    "cairn.adapters.storage.postgres_store": (
        "the store's own database transactions (psycopg `conn.transaction()`), inside the"
        " store's commit and reads: the store is what the unit of work writes through"
    ),
    "cairn.adapters.storage.postgres_schema": (
        "creating or upgrading the store's tables in one database transaction (psycopg)"
    ),
}
"""Modules outside `EXEMPT` that may call `.transaction(`: module -> why."""


@dataclass(frozen=True)
class Opening:
    """One `.transaction(` call: where, and the receiver as written."""

    module: str
    path: Path
    line: int
    receiver: str


def openings(module: str, source: str, path: Path) -> list[Opening]:
    """Each call of a method named `transaction` in `source`, in line order."""
    found = [
        Opening(module, path, node.lineno, ast.unparse(node.func.value))
        for node in ast.walk(ast.parse(source, filename=str(path)))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "transaction"
    ]
    return sorted(found, key=lambda opening: opening.line)


def exempt(module: str) -> bool:
    return any(module.startswith(f"cairn.{folder}.") for folder in EXEMPT)


def outside_the_door(found: list[Opening], allowed: dict[str, str]) -> list[str]:
    """A line per opening neither exempt nor allowed (`module:line: receiver.transaction()`)."""
    return [
        f"{o.module}:{o.line}: {o.receiver}.transaction()"
        for o in found
        if not exempt(o.module) and o.module not in allowed
    ]


def all_openings() -> list[Opening]:
    found: list[Opening] = []
    for name, path in package_modules().items():
        found += openings(name, path.read_text(encoding="utf-8"), path)
    return found


def test_no_module_outside_the_services_opens_a_unit_of_work() -> None:
    problems = outside_the_door(all_openings(), ALLOWED)
    assert problems == [], "units of work opened outside the bus and the services:\n" + "\n".join(
        problems
    )


def test_every_allowed_module_still_opens_one() -> None:
    """An entry no module needs any more is struck off: the list only shrinks."""
    used = {o.module for o in all_openings()}
    assert [module for module in ALLOWED if module not in used] == []


# -- the scan itself: a write that bypasses the bus is caught, wherever it stands -----------


def test_the_scan_finds_the_old_library_write() -> None:
    source = (
        "class Memory:\n"
        "    def add(self, entry):\n"
        "        with self._store.transaction() as tx:\n"
        "            tx.add(entry)\n"
        "def import_into(store, entries):\n"
        "    with store.transaction() as tx:\n"
        "        pass\n"
    )
    found = openings("cairn.memory_api", source, Path("memory_api.py"))
    assert outside_the_door(found, ALLOWED) == [
        "cairn.memory_api:3: self._store.transaction()",
        "cairn.memory_api:6: store.transaction()",
    ]
    adapter = openings("cairn.adapters.storage.transfer", source, Path("transfer.py"))
    assert len(outside_the_door(adapter, ALLOWED)) == 2  # the adapters are no hiding place
    engine = openings("cairn.services.memory_edits", source, Path("memory_edits.py"))
    assert outside_the_door(engine, ALLOWED) == []
