"""Moving memories between stores: a JSON-lines export of every field, and reading it back.

The export is a header line (`{"cairn_export": 1}`), one line per location record (by id),
then one line per memory, each with every field: the memories in play (not SUPERSEDED) in
store order, then every SUPERSEDED one, whether a store keeps it in play or has moved it to
its archive, by section, creation time and id. Lines are ASCII JSON, so any text (NUL,
unpaired surrogates from a hand-edited file) survives. Two stores holding the same memories
give the same export, whatever their kind and whatever they archived. Writing what was read
into a store is the `ImportMemories` command's (`cairn.services.memory_edits`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from cairn.adapters.input_files import MAX_IMPORT_BYTES, read_named_file
from cairn.adapters.storage.memory_index import section_key
from cairn.errors import StoreError
from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import LocationRecord, MemoryEntry, MemoryStatus

EXPORT_VERSION = 1


def export_lines(store: IMemoryStore) -> Iterator[str]:
    """The export of `store`, line by line (without line ends)."""
    yield json.dumps({"cairn_export": EXPORT_VERSION})
    for _, record in sorted(store.locations().items()):
        yield json.dumps({"location": record.model_dump(mode="json")})
    entries = store.entries()
    hot = {e.id for e in entries}
    superseded = [e for e in store.archived() if e.id not in hot]
    superseded += [e for e in entries if e.status is MemoryStatus.SUPERSEDED]
    superseded.sort(key=_archive_order)
    for entry in [*(e for e in entries if e.status is not MemoryStatus.SUPERSEDED), *superseded]:
        yield json.dumps({"memory": entry.model_dump(mode="json")})


def _archive_order(entry: MemoryEntry) -> tuple[tuple[int, int | str], float, str]:
    """Store order's sections (rooms by id, NPCs by first id, the world); then oldest first,
    then by id."""
    return section_key(entry), entry.created_at.timestamp(), entry.id


def read_export(path: Path) -> tuple[list[LocationRecord], list[MemoryEntry]]:
    """The location records and memories of an export file; StoreError naming the line of
    anything that is not one."""
    records: list[LocationRecord] = []
    entries: list[MemoryEntry] = []
    try:
        data = read_named_file(
            path,
            what="import file",
            limit=MAX_IMPORT_BYTES,
            error=lambda problem: StoreError(f"{path}: {problem}"),
        )
        # lines end with "\n" only: a text's U+2028 or U+0085 (JSON writes them raw) is no end
        lines = data.decode("utf-8").removesuffix("\n").split("\n")
        lines = [line.removesuffix("\r") for line in lines]
    except (OSError, UnicodeDecodeError) as e:
        raise StoreError(f"{path}: cannot read the export: {e}") from e
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if number == 1:
                if item != {"cairn_export": EXPORT_VERSION}:
                    raise ValueError(f"not a cairn export (version {EXPORT_VERSION}) header")
            elif set(item) == {"location"}:
                records.append(LocationRecord.model_validate(item["location"]))
            elif set(item) == {"memory"}:
                entries.append(MemoryEntry.model_validate(item["memory"]))
            else:
                raise ValueError("expected a 'location' or a 'memory' object")
        except RecursionError:  # json.loads on brackets nested thousands deep
            raise StoreError(f"{path}:{number}: nested too deeply to be an export line") from None
        except (ValueError, TypeError, ValidationError) as e:
            problem = " ".join(str(e).split())
            raise StoreError(f"{path}:{number}: {problem}") from e
    if not any(line.strip() for line in lines):
        raise StoreError(f"{path}: empty file, not a cairn export")
    return records, entries
