"""The files cairn keeps in a workdir: a Memories.md's companions, and each file-naming
setting's files, with the first two settings whose files collide.

A setting that names a file owns more than that name: `memory_file` also owns its session
backups, lock, archive and snapshots; `sqlite_file` its -wal, -shm and -journal files;
`map_file` shares the workdir with `map.mmd`, `report_file` with `report.html`. Two settings
whose files share a name would write one over the other (`report_file = "memories.sqlite3"`
swaps report.json over the database), so settings that collide are refused when they load.
Names are compared without case: on macOS and Windows `memories.md` is `Memories.md`.
"""

from __future__ import annotations

from typing import Protocol


def archive_name(name: str) -> str:
    """`Memories.md` -> `Memories.archive.md` (`notes` -> `notes.archive`): SUPERSEDED
    memories moved out of play when an episode ended."""
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}.archive.{suffix}" if dot and stem else f"{name}.archive"


def snapshot_name(name: str) -> str:
    """`Memories.md` -> `.Memories.md.snapshot`: the index a load reads instead of parsing."""
    return f".{name}.snapshot"


FILE_SETTINGS = (
    "memory_file",
    "sqlite_file",
    "map_file",
    "knowledge_file",
    "report_file",
    "llm_log_file",
)
"""Every setting that names a file in the workdir."""

CAIRN_OWN_FILES = {
    "map.mmd": "the map's Mermaid file",
    "report.html": "the HTML report",
    ".cairn": "the workdir's marker",
    ".cairn-replay": "cairn replay's marker",
    "runs": "the runs folder",
    "backups": "the folder `--fresh` sets files aside in",
}
"""Names cairn uses in the workdir whatever the settings say."""


class FileNaming(Protocol):
    """The settings this module reads (a `CairnSettings`)."""

    memory_file: str
    sqlite_file: str
    map_file: str
    knowledge_file: str
    report_file: str
    llm_log_file: str
    backup_count: int


def owned_names(field: str, settings: FileNaming) -> list[str]:
    """The file names setting `field` puts in the workdir, its own name first."""
    name: str = getattr(settings, field)
    if field == "memory_file":
        backups = [f"{name}.{n}" for n in range(1, settings.backup_count + 1)]
        archive = archive_name(name)
        return [
            name,
            *backups,
            *(f"{backup}.tmp" for backup in backups[:1]),
            f"{name}.lock",
            archive,
            snapshot_name(name),
            snapshot_name(archive),
        ]
    if field == "sqlite_file":
        return [name, f"{name}-wal", f"{name}-shm", f"{name}-journal"]
    return [name]


def _describe(field: str, name: str, own: str) -> str:
    if name.casefold() == own.casefold():
        return f"{field} ({own!r})"
    return f"{field} ({own!r}, whose files include {name!r})"


def file_name_clash(settings: FileNaming) -> str | None:
    """A message naming the first two settings (or a setting and one of cairn's own files)
    whose files share a name, None when every name is distinct."""
    seen: dict[str, str] = {}
    for name, what in CAIRN_OWN_FILES.items():
        seen[name.casefold()] = f"{what} ({name!r})"
    for field in FILE_SETTINGS:
        own = getattr(settings, field)
        for name in owned_names(field, settings):
            key = name.casefold()
            if key in seen:
                return (
                    f"{_describe(field, name, own)} and {seen[key]} name the same file in "
                    "the workdir: one would be written over the other; give each its own name"
                )
        for name in owned_names(field, settings):
            seen[name.casefold()] = _describe(field, name, own)
    return None
