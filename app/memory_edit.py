"""`cairn memories edit`: a scope's memories as Memories.md text for a person's editor, and the
saved text read back into the commands that apply it (pure functions; the command line runs
the editor and sends the commands).

The text is the block format Memories.md uses (`markdown_render`), so every block keeps its
`<!-- cairn {...} -->` comment and its id: a block whose id the editor was given is that
memory; its text, title, importance, category and tags may change (an `UpdateMemory`), nothing
else (the rest is cairn's record of what happened: a change there is a problem). A block
deleted is a memory forgotten (`ForgetMemory`: SUPERSEDED, never deleted); a block with no id
in a comment is a new memory (`AddMemory`) in the section it stands in. Lines starting with
`#` before the first section header are this tool's comments (the problems, when the text is
reopened), never read as memories.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cairn.adapters.input_files import MAX_IMPORT_BYTES, read_named_file
from cairn.adapters.storage.markdown_blocks import as_written, comment_object, render_entry
from cairn.adapters.storage.markdown_escape import escape_inline
from cairn.adapters.storage.markdown_layout import (
    COMMENT_START,
    LOCATIONS_HEADER,
    NPCS_HEADER,
    WORLD_HEADER,
)
from cairn.adapters.storage.markdown_parse import parse
from cairn.adapters.storage.markdown_render import render
from cairn.adapters.storage.memory_cache import MemoryCache
from cairn.errors import CairnError
from cairn.events.commands import AddMemory, Command, ForgetMemory, UpdateMemory
from cairn.models.memory import (
    VISIBLE_STATUSES,
    LocationRecord,
    MemoryEntry,
    MemoryScope,
    MemorySource,
)

if TYPE_CHECKING:
    from cairn.container import Container
    from cairn.events.bus import MessageBus
    from cairn.interfaces.clock import IClock
    from cairn.interfaces.store import IStoreReader

EDITABLE = ("text", "title", "importance", "category", "tags")
"""The fields a block may change: what `UpdateMemory` sets."""
_FIXED_EXCLUDED = set(EDITABLE) | {"location_name"}
"""Fields not compared for a memory kept: the editable ones, and the location's name (the
section header shows the place's current name, which may differ from the one recorded)."""
_TOP_HEADERS = frozenset({LOCATIONS_HEADER, NPCS_HEADER, WORLD_HEADER})
_COMMENT_ID = re.compile(r"^" + re.escape(COMMENT_START))

GUIDE = (
    "Edit the memories below and save; quit without saving to change nothing.",
    "A block's text, title, importance, category and tags may change; delete a block to forget",
    "its memory (SUPERSEDED, kept); add a block (**[NOTE] Title**, then its text) without a",
    "`<!-- cairn ... -->` line for a new memory. Lines starting with # up here are ignored.",
)


@dataclass(frozen=True)
class EditScope:
    """The memories an edit shows: one location's, one NPC's, the world's, or all (kind None)."""

    kind: MemoryScope | None = None
    location_id: int | None = None
    npc_id: str | None = None

    def holds(self, entry: MemoryEntry) -> bool:
        """Whether a new memory (its block's section) lies in this scope."""
        if self.kind is None:
            return True
        if entry.scope is not self.kind:
            return False
        if self.kind is MemoryScope.LOCATION:
            return entry.location_id == self.location_id
        if self.kind is MemoryScope.NPC:
            return entry.npc_ids == [self.npc_id]
        return True

    def describe(self) -> str:
        if self.kind is MemoryScope.LOCATION:
            return f"location {self.location_id}"
        if self.kind is MemoryScope.NPC:
            return f"NPC {self.npc_id}"
        return "the world" if self.kind is MemoryScope.WORLD else "every scope"


@dataclass
class Changes:
    """What a saved text asks for, against the versions the editor was given."""

    added: list[MemoryEntry] = field(default_factory=list)
    """New memories as read (ids and times are given when they are sent)."""
    updated: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Memory id -> the editable fields that changed, with their new values."""
    forgotten: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.forgotten)

    def touched(self) -> list[str]:
        """The ids of the existing memories this changes (a conflict is checked for each)."""
        return [*self.updated, *self.forgotten]

    def summary(self) -> str:
        return (
            f"{len(self.added)} added, {len(self.updated)} updated,"
            f" {len(self.forgotten)} forgotten"
        )


# -- rendering -------------------------------------------------------------------------------


def render_scope(
    entries: list[MemoryEntry], records: dict[int, LocationRecord], scope: EditScope
) -> str:
    """The Memories.md text of `entries` (with the location records their sections need): the
    section of the scope stands even when it holds no memory, so a person can add one."""
    cache = MemoryCache()
    cache.memories = {entry.id: entry for entry in entries}
    wanted = {e.location_id for e in entries if e.location_id is not None}
    if scope.kind is MemoryScope.LOCATION and scope.location_id is not None:
        wanted.add(scope.location_id)
    cache.locations = {
        loc_id: records.get(loc_id) or LocationRecord(id=loc_id) for loc_id in sorted(wanted)
    }
    text = render(cache, [])
    if scope.kind is MemoryScope.NPC and not entries and scope.npc_id is not None:
        header = f"## NPC {escape_inline(scope.npc_id)}"
        text = text.replace(f"{NPCS_HEADER}\n", f"{NPCS_HEADER}\n\n{header}\n", 1)
    return text


def with_comments(notes: list[str], body: str) -> str:
    """The text for the editor: `notes` (the guide, problems) as `#` lines above `body`."""
    lines = [f"# {line}".rstrip() if line else "#" for line in notes]
    return "\n".join(lines) + "\n\n" + body


def body_of(text: str) -> tuple[str, int]:
    """The saved text without this tool's leading `#` comment lines (and blank lines among
    them), and how many lines were taken off (to give problems the file's line numbers)."""
    lines = text.split("\n")
    skipped = 0
    for line in lines:
        stripped = line.rstrip("\r")
        if stripped in _TOP_HEADERS or (stripped and not stripped.startswith("#")):
            break
        skipped += 1
    return "\n".join(lines[skipped:]), skipped


# -- reading the saved text ------------------------------------------------------------------


def _comment_ids(body: str) -> set[str]:
    """The ids the saved text's cairn comments name (a block that keeps one is no new memory)."""
    found: set[str] = set()
    for line in body.split("\n"):
        if _COMMENT_ID.match(line):
            value = comment_object(line.rstrip("\r"))
            if isinstance(value, dict) and isinstance(value.get("id"), str):
                found.add(value["id"])
    return found


def _fixed(entry: MemoryEntry) -> dict[str, Any]:
    return as_written(entry).model_dump(exclude=_FIXED_EXCLUDED)


def read_changes(
    text: str, given: dict[str, MemoryEntry], scope: EditScope, now: datetime
) -> Changes | list[tuple[int | None, str]]:
    """The changes the saved `text` asks for against `given` (the versions the editor was
    given, by id), or its problems as (line in `text` or None, message)."""
    body, offset = body_of(text)
    parsed = parse(body, "edit", created_at=now)
    problems: list[tuple[int | None, str]] = [(p.line + offset, p.message) for p in parsed.problems]
    problems += [
        (line + offset, "not a memory block (**[CATEGORY] Title** starts one): remove it")
        for line in parsed.notes
    ]
    commented = _comment_ids(body)
    changes = Changes()
    for entry in parsed.cache.memories.values():
        old = given.get(entry.id)
        if old is None:
            if entry.id in commented:
                problems.append(
                    (None, f"memory {entry.id}: not one this edit was given (not in the scope,"
                     " or forgotten): delete its <!-- cairn --> line to add it as a new memory")
                )
            elif not scope.holds(entry):
                problems.append((None, f"new memory {entry.title!r}: outside {scope.describe()}"))
            else:
                changes.added.append(entry)
            continue
        before, after = _fixed(old), _fixed(entry)
        differ = sorted(name for name in before if before[name] != after.get(name))
        if differ:
            problems.append(
                (None, f"memory {entry.id} ({entry.title!r}): {', '.join(differ)} cannot be"
                 f" changed here (only {', '.join(EDITABLE)})")
            )
            continue
        shown = as_written(old)
        fields = {
            name: getattr(entry, name)
            for name in EDITABLE
            if getattr(entry, name) != getattr(shown, name)
        }
        if fields:
            changes.updated[entry.id] = fields
    changes.forgotten = [i for i in given if i not in parsed.cache.memories]
    return problems or changes


def commands(changes: Changes, new_id: Any, now: Any) -> list[Command]:
    """The commands for `changes`: `new_id(title)` and `now()` stamp each new memory (the
    container's clock); a new memory's source is NOTE (a person wrote it)."""
    out: list[Command] = []
    for memory_id, fields in changes.updated.items():
        if "tags" in fields:
            fields = {**fields, "tags": tuple(fields["tags"])}
        out.append(UpdateMemory(memory_id, **fields))
    out += [ForgetMemory(memory_id) for memory_id in changes.forgotten]
    for entry in changes.added:
        update: dict[str, Any] = {"id": new_id(entry.title), "created_at": now()}
        if "source" not in entry.model_fields_set:
            update["source"] = MemorySource.NOTE
        out.append(AddMemory(entry.model_copy(update=update)))
    return out


def conflicts(
    changes: Changes, given: dict[str, MemoryEntry], current: dict[str, MemoryEntry | None]
) -> list[str]:
    """Each memory the edit changes that someone else changed since the editor was given it
    (`current`: the store's versions now), described with both versions."""
    found: list[str] = []
    for memory_id in changes.touched():
        old, now = given[memory_id], current.get(memory_id)
        if now is not None and as_written(now) == as_written(old):
            continue
        theirs = "(gone)" if now is None else render_entry(as_written(now), None, None)
        found.append(
            f"memory {memory_id} changed in the store after the editor opened it:\n"
            f"-- the version you edited --\n{render_entry(as_written(old), None, None)}\n"
            f"-- the store's now --\n{theirs}"
        )
    return found


# -- the session: editor, problems, conflicts, one unit of work -----------------------------


class _Conflicts(Exception):
    """Raised inside the unit of work to roll it back: the edit would overwrite others' changes."""

    def __init__(self, found: list[str]) -> None:
        super().__init__(f"{len(found)} conflict(s)")
        self.found = found


def run_editor(path: Path) -> int:
    """Run `$EDITOR` (else `$VISUAL`, else `vi`) on `path`; its exit status."""
    command = os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
    return subprocess.run([*shlex.split(command), str(path)], check=False).returncode


def edit_memories(
    container: Container,
    scope: EditScope,
    echo: Callable[[str], None],
    editor: Callable[[Path], int] = run_editor,
) -> int:
    """Let a person edit `scope`'s memories and apply the result; the exit status.

    0: applied, or nothing to do (the file saved unchanged). Problems reopen the editor with
    them listed on top; saving that unchanged abandons (1). A conflict (a memory the person
    changed that someone else changed meanwhile) applies nothing and exits 1, naming both
    versions; the person's text is kept in its file, as when the editor fails.
    """
    store: IStoreReader = container.store()  # (reads; every write goes through the bus)
    clock: IClock = container.clock()
    shown_entries = store.entries(
        scope=scope.kind,
        location_id=scope.location_id,
        npc_id=scope.npc_id,
        statuses=VISIBLE_STATUSES,
    )
    given = {entry.id: entry for entry in shown_entries}
    body = render_scope(shown_entries, store.locations(), scope)
    handle, name = tempfile.mkstemp(prefix="cairn-memories-", suffix=".md")
    os.close(handle)
    path = Path(name)
    notes = [f"Memories of {scope.describe()} in {store.path}.", *GUIDE]
    first = True
    while True:
        shown = with_comments(notes, body)
        path.write_text(shown, encoding="utf-8")
        status = editor(path)
        if status != 0:
            echo(f"memories edit: the editor exited with {status}; nothing changed ({path})")
            return 1
        saved = _saved_text(path)
        if saved == shown:
            if first:
                path.unlink()
                echo("No changes.")
                return 0
            echo(f"memories edit: abandoned; nothing changed (your text: {path})")
            return 1
        first = False
        found = read_changes(saved, given, scope, clock.now())
        body, offset = body_of(saved)
        if isinstance(found, list):
            top = len(found) + 3  # the intro line, the problems, a blank line, the guide after
            lines = [
                message if line is None else f"line {line - offset + top + len(GUIDE)}: {message}"
                for line, message in found
            ]
            notes = [f"{len(found)} problem(s): fix them and save, or quit to abandon:"]
            notes += [*lines, "", *GUIDE]
            continue
        if not found:
            path.unlink()
            echo("No changes.")
            return 0
        bus: MessageBus = container.bus()
        try:
            with bus.unit():
                current = {memory_id: store.get(memory_id) for memory_id in found.touched()}
                clashes = conflicts(found, given, current)
                if clashes:
                    raise _Conflicts(clashes)
                for command in commands(found, clock.new_id, clock.now):
                    bus.handle(command)
        except _Conflicts as exc:
            echo("\n\n".join(exc.found))
            echo(
                f"memories edit: {len(exc.found)} conflict(s), nothing changed; your text is"
                f" in {path} (run `memories edit` again to edit the store's versions)"
            )
            return 1
        except CairnError as exc:  # a command refused or the store failed: the unit rolled back
            echo(f"memories edit: {exc}; nothing changed; your text is in {path}")
            return 1
        path.unlink()
        echo(f"memories edit: {found.summary()}")
        return 0


def _saved_text(path: Path) -> str:
    """The editor's save of `path`: a CairnError naming it (the file is kept, with the person's
    text) when it is no regular file, is over MAX_IMPORT_BYTES or is not UTF-8."""
    data = read_named_file(
        path,
        what="saved edit",
        limit=MAX_IMPORT_BYTES,
        error=lambda problem: CairnError(f"memories edit: {path}: {problem}; nothing changed"),
    )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CairnError(
            f"memories edit: {path}: not UTF-8 ({exc.reason} at byte {exc.start});"
            " nothing changed, your text stays there"
        ) from exc
