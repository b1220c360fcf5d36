"""The map repository: a map's saved form (`MapSnapshot`) to and from `map.json` (versioned
JSON, atomic writes), and `map.mmd`, its Mermaid drawing. It knows the saved form and the
`ISavableMap` port, never the map graph: `MapGraph.from_snapshot` rebuilds the map.

`MapFileError` names the file and the field when a map cannot be read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cairn.adapters.files import atomic_write_text
from cairn.errors import MapFileError
from cairn.interfaces.map import ISavableMap
from cairn.models.directions import normalize_direction
from cairn.models.map import MAP_FORMAT_VERSION, MapSnapshot

__all__ = [
    "MAP_FORMAT_VERSION",
    "MapFiles",
    "load_map",
    "map_from_dict",
    "map_to_dict",
    "save_map",
]

MERMAID_FILE = "map.mmd"
"""The drawing beside the map file, for people (nothing reads it back)."""


def _describe_validation_error(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "(top level)"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)


def map_to_dict(snapshot: MapSnapshot) -> dict[str, Any]:
    """A JSON-ready dict (see `map_from_dict`); deterministic order."""
    return snapshot.model_dump(by_alias=True, exclude_none=True)


def map_from_dict(data: object) -> MapSnapshot:
    """The saved form in `map_to_dict` output; MapFileError (path None) names a bad field."""
    try:
        parsed = MapSnapshot.model_validate(data)
    except ValidationError as error:
        raise MapFileError(None, _describe_validation_error(error)) from error
    for index, room in enumerate(parsed.rooms):
        for field in ("exits", "failed_exits", "tried"):
            for position, value in enumerate(getattr(room, field)):
                if not value.strip():
                    raise MapFileError(None, f"rooms.{index}.{field}.{position}: empty action")
        for position, value in enumerate(room.exits):
            if normalize_direction(value) is None:
                raise MapFileError(
                    None, f"rooms.{index}.exits.{position}: {value!r} is not a direction"
                )
    return parsed


def save_map(graph: ISavableMap, path: Path) -> None:
    """Write the map as JSON atomically (temp file in the same folder, fsync, replace)."""
    text = json.dumps(map_to_dict(graph.snapshot()), indent=2, ensure_ascii=False) + "\n"
    try:
        atomic_write_text(path, text)
    except OSError as error:
        raise MapFileError(path, f"cannot write: {error}") from error


def load_map(path: Path) -> MapSnapshot:
    """Read a map saved by `save_map`; a missing file is an empty map.

    Raises MapFileError (naming `path`) for an unreadable, non-JSON or invalid file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return MapSnapshot()
    except (OSError, UnicodeDecodeError) as error:
        raise MapFileError(path, f"cannot read: {error}") from error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise MapFileError(
            path, f"not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}"
        ) from error
    try:
        return map_from_dict(data)
    except MapFileError as error:
        raise MapFileError(path, error.message) from error


class MapFiles:
    """A workdir's map files: `map_file` (the map, which the next run loads) and `map.mmd`
    (its drawing). A play run saves both after every episode."""

    def __init__(self, workdir: str | Path, map_file: str) -> None:
        self.path = Path(workdir) / map_file
        self.drawing = Path(workdir) / MERMAID_FILE

    def load(self) -> MapSnapshot:
        """The saved map (empty when there is none yet); MapFileError for a bad file."""
        return load_map(self.path)

    def save(self, graph: ISavableMap) -> None:
        """Write the map file, then its drawing (each atomically)."""
        save_map(graph, self.path)
        atomic_write_text(self.drawing, graph.render_mermaid() + "\n")
