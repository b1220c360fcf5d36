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
