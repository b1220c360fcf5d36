"""RoomNames: each room's own name, read from `look`, and the player's context in it.

The adapter reads the answer to `look` (sent on a saved state that is then restored, so no
move is spent). A room's name is settled once the game's header agrees with the room's
object-tree name (or with the words of its internal identifier: "(gnomeRoom)" is "Gnome
Room"): from then on it is never looked at again nor renamed (a dream's headers do not
rename the bedroom the player sleeps in). Until then `look` is read on every turn spent in
the room and its latest header is the name: a dark room keeps its cleaned tree name until a
real header is printed (a dark "Closet" becomes "Gnome Room" once lit), and rooms whose tree
names are empty or abbreviated ("CR") follow the headers the game prints. A room with neither
a header nor a tree name is named from its description (`names.described_name`), read from
the first `look` that gives one and kept: a description that changes later does not rename
it, a header printed later does. The context ("in the boat") is read once per (room, holder)
pair.
"""

from __future__ import annotations

from cairn.adapters.game.names import LookReading, clean_room_name, object_name


def default_context(holder_name: str) -> str:
    """ "in the bed" from the holder's tree name; "" when it has none."""
    name = object_name(holder_name)
    return f"in the {name}" if name else ""


class RoomNames:
    """Names by room id, contexts by (room id, holder id), for one game (kept across resets)."""

    def __init__(self) -> None:
        """Start knowing no room."""
        self._names: dict[int, str] = {}
        self._confirmed: set[int] = set()
        self._contexts: dict[tuple[int, int], str] = {}
        self._described: dict[int, str] = {}

    def needs_look(self, room: int, holder: int) -> bool:
        """Whether `look` should be read now (see the module docstring)."""
        if room not in self._confirmed:
            return True
        return bool(holder) and (room, holder) not in self._contexts

    def learn(self, room: int, holder: int, reading: LookReading, holder_name: str) -> None:
        """Keep what one `look` answer said about `room` seen from `holder`."""
        key = (room, holder)
        if reading.found and room not in self._confirmed:
            self._names[room] = reading.name
            if reading.confirmed:
                self._confirmed.add(room)
        if reading.described:
            self._described.setdefault(room, reading.described)
        if holder and (reading.context or key not in self._contexts):
            self._contexts[key] = reading.context or default_context(holder_name)

    def known_names(self) -> list[str]:
        """Every room name read from the game so far."""
        return list(self._names.values())

    def name(self, room: int, tree_name: str) -> str:
        """The name read from `look`, else the cleaned tree name, else the description's."""
        return self._names.get(room) or clean_room_name(tree_name) or self._described.get(room, "")

    def context(self, room: int, holder: int, holder_name: str) -> str:
        """Where the player is in the room ("in the magic boat"), "" when not in anything."""
        if not holder:
            return ""
        return self._contexts.get((room, holder)) or default_context(holder_name)
