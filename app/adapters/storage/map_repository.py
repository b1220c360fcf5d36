"""The map repository: MapGraph to and from `map.json` (versioned JSON, atomic writes).

`MapFileError` names the file and the field when a map cannot be read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from cairn.adapters.files import atomic_write_text
from cairn.errors import MapFileError
from cairn.services.map import MapGraph, normalize_direction

MAP_FORMAT_VERSION: Final = 1


class _ConnectionData(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_id: StrictInt = Field(alias="from")
    to_id: StrictInt = Field(alias="to")
    action: StrictStr | None = Field(default=None, min_length=1)


class _RoomData(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: StrictInt
    name: StrictStr | None = None
    visits: StrictInt = Field(default=0, ge=0)
    exits: list[StrictStr] = Field(default_factory=list)
    failed_exits: list[StrictStr] = Field(default_factory=list)
    tried: list[StrictStr] = Field(default_factory=list)


class _MapData(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = MAP_FORMAT_VERSION
    rooms: list[_RoomData] = Field(default_factory=list)
    connections: list[_ConnectionData] = Field(default_factory=list)


def _describe_validation_error(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "(top level)"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)


def map_to_dict(graph: MapGraph) -> dict[str, Any]:
    """A JSON-ready dict (see `from_dict`); deterministic order."""
    rooms = []
    for room in graph.location_ids():
        rooms.append(
            _RoomData(
                id=room,
                name=graph.name_of(room),
                visits=graph.visit_count(room),
                exits=graph.noted_exits(room),
                failed_exits=graph.failed_exits(room),
                tried=graph.tried_here(room),
            )
        )
    data = _MapData(
        rooms=rooms,
        connections=[
            _ConnectionData(from_id=e.from_id, to_id=e.to_id, action=e.action)
            for e in graph.edges()
        ],
    )
    return data.model_dump(by_alias=True, exclude_none=True)


def map_from_dict(data: object) -> MapGraph:
    """Rebuild a map from `map_to_dict` output; MapFileError (path None) names a bad field."""
    try:
        parsed = _MapData.model_validate(data)
    except ValidationError as error:
        raise MapFileError(None, _describe_validation_error(error)) from error
    graph = MapGraph()
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
        if room.name:
            graph.set_name(room.id, room.name)
        if room.visits:
            graph.set_visits(room.id, room.visits)
        graph.note_exits(room.id, room.exits)
    # connections before refusals: learning a move clears a refusal of the same action
    for connection in parsed.connections:
        graph.add_connection(connection.from_id, connection.to_id, action=connection.action)
    for room in parsed.rooms:
        for action in room.failed_exits:
            graph.mark_failed_exit(room.id, action)
        for action in room.tried:
            graph.add_connection(room.id, room.id, action=action)
    return graph


def save_map(graph: MapGraph, path: Path) -> None:
    """Write the map as JSON atomically (temp file in the same folder, fsync, replace)."""
    text = json.dumps(map_to_dict(graph), indent=2, ensure_ascii=False) + "\n"
    try:
        atomic_write_text(path, text)
    except OSError as error:
        raise MapFileError(path, f"cannot write: {error}") from error


def load_map(path: Path) -> MapGraph:
    """Read a map saved by `save_map`; a missing file is an empty map.

    Raises MapFileError (naming `path`) for an unreadable, non-JSON or invalid file.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return MapGraph()
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
