"""IMapView: the read side of the map that context builders and memory queries need."""

from __future__ import annotations

from abc import ABC, abstractmethod


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
