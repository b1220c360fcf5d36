"""The map's ports: IMapView (the read side context builders and memory queries need),
IMapRecorder (what the memory service writes), ISavableMap (what the map files take)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol

from cairn.models.map import MapSnapshot


class IMapView(ABC):
    """Adjacency between integer location ids, in both directions."""

    @abstractmethod
    def neighbors(self, location_id: int) -> list[int]:
        """Ids of locations one move away from `location_id` (either direction), sorted."""

    @abstractmethod
    def name_of(self, location_id: int) -> str | None:
        """The display name of a location, when known."""


class IMapRecorder(IMapView):
    """The map as the memory service keeps it: names and moves learned, adjacency read."""

    @abstractmethod
    def set_name(self, location_id: int, name: str) -> None:
        """Remember a location's display name."""

    @abstractmethod
    def add_connection(self, from_id: int, to_id: int, *, action: str | None = None) -> None:
        """Learn that a move from `from_id` (by `action`, when known) reached `to_id`."""


class ISavableMap(Protocol):
    """A map as its files take it: its saved form, and its Mermaid drawing for people."""

    def snapshot(self) -> MapSnapshot:
        """Everything the map learned, as values."""
        ...

    def render_mermaid(self) -> str:
        """The map as a Mermaid flowchart."""
        ...
