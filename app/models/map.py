"""A learned map's values: the edges it hands out, and its saved form (what map.json holds).

The map itself (`cairn.services.map.MapGraph`) learns, infers and routes; these are the values
it gives to its readers and to the map repository, which stores a `MapSnapshot` and knows no
map graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

MAP_FORMAT_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class MapEdge:
    """One directed edge: taking `action` at `from_id` leads to `to_id`.

    `action` is None for a move learned without its action; `inferred` marks an assumed
    reverse of a known compass move.
    """

    from_id: int
    to_id: int
    action: str | None
    inferred: bool = False


class MapConnection(BaseModel):
    """A known move as saved: `from` and `to` room ids, and the action when known."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_id: StrictInt = Field(alias="from")
    to_id: StrictInt = Field(alias="to")
    action: StrictStr | None = Field(default=None, min_length=1)


class MapRoom(BaseModel):
    """A room as saved: its name, visits, the exits its text mentions, the exits the game
    refused, and the actions taken there that stayed in place."""

    model_config = ConfigDict(extra="forbid")

    id: StrictInt
    name: StrictStr | None = None
    visits: StrictInt = Field(default=0, ge=0)
    exits: list[StrictStr] = Field(default_factory=list)
    failed_exits: list[StrictStr] = Field(default_factory=list)
    tried: list[StrictStr] = Field(default_factory=list)


class MapSnapshot(BaseModel):
    """A whole map as saved, in a deterministic order (rooms by id, edges as the map sorts
    them). Unknown fields are refused, so a newer format is not half read."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = MAP_FORMAT_VERSION
    rooms: list[MapRoom] = Field(default_factory=list)
    connections: list[MapConnection] = Field(default_factory=list)
