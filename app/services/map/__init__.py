"""The map of a game learned from moves, keyed by integer location ids (MapGraph).

What it holds (all keyed by the Jericho integer location id, never by name: names repeat,
e.g. several rooms called "Forest"):

- **known edges**: `A --action--> B`, learned when taking `action` in A reached B. Compass
  actions are normalised (`n` -> `north`, `go ne` -> `northeast`, `u` -> `up`, ...); any other
  action (`enter window`, `climb tree`) is kept as typed, lower-cased with whitespace collapsed.
  Taking the same action again from the same room to a different room replaces the old edge
  (the latest observation wins). A move with no action recorded is kept as an unlabelled link:
  it counts for adjacency and diagrams but never for routes (there is no action to give).
- **inferred edges**: for a known compass move `A --north--> B`, the reverse `B --south--> A`
  is *assumed* (north/south, east/west, the diagonals, up/down; not in/out, which are often
  one-way or lead elsewhere). An inference is dropped when B already has a known edge with that
  action, when that action was refused at B, or when two known moves would infer conflicting
  reverses. Inferred edges are flagged (`MapEdge.inferred`), never drawn, and routing uses them
  only when no route over known edges exists (`route`, `nearest_unexplored`): many IF maps have
  bent or one-way passages, so a route the agent actually walked is preferred to a guessed one.
- **adjacency** (`neighbors`, the `IMapView` side): both directions of every known move or link.
- **names** (display only) and **visit counts** (`record_visit`).
- **exits**: exits the room text mentions (`note_exits`, found with `exits_in_text`), exits the
  game refused (`mark_failed_exit`), and `unexplored_exits` = mentioned minus refused minus
  those already covered by a known or inferred edge (or tried and found to stay in place).

Modules: `exits` (exits in room text), `graph` (MapGraph: learning, reading, routing, its
saved form), `render` (connections, one per pair of rooms; Mermaid, dot, prompt summaries; it
reads the graph through a protocol, so the two do not import each other). The values are the
models' (`cairn.models.directions`: compass words; `cairn.models.map`: edges and the saved
form). Pure: saving and loading are the map repository adapter's
(`app/adapters/storage/map_repository.py`), which knows the saved form only.
"""

from cairn.models.directions import DIRECTIONS, normalize_action, normalize_direction
from cairn.models.map import MapEdge, MapSnapshot
from cairn.services.map.exits import exits_in_text
from cairn.services.map.graph import ExplorationFigures, MapGraph
from cairn.services.map.render import Connection, connections, room_label

__all__ = [
    "DIRECTIONS",
    "Connection",
    "ExplorationFigures",
    "MapEdge",
    "MapGraph",
    "MapSnapshot",
    "connections",
    "exits_in_text",
    "normalize_action",
    "normalize_direction",
    "room_label",
]
