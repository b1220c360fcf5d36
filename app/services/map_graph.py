"""MapGraph: connections between integer location ids learned from moves."""

from __future__ import annotations

from app.interfaces.map import IMapView


class MapGraph(IMapView):
    """An undirected view over directed moves; names for display only."""

    def __init__(self) -> None:
        self._edges: dict[int, set[int]] = {}
        self._names: dict[int, str] = {}

    def add_connection(self, from_id: int, to_id: int) -> None:
        """Learn that a move from `from_id` reached `to_id`."""
        if from_id == to_id:
            return
        self._edges.setdefault(from_id, set()).add(to_id)
        self._edges.setdefault(to_id, set()).add(from_id)

    def set_name(self, location_id: int, name: str) -> None:
        """Remember a display name."""
        if name:
            self._names[location_id] = name

    def neighbors(self, location_id: int) -> list[int]:
        return sorted(self._edges.get(location_id, set()))

    def name_of(self, location_id: int) -> str | None:
        return self._names.get(location_id)
