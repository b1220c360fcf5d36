"""A stand-in for Jericho's FrotzEnv over a synthetic version 3 story file, for room identity tests.

`FakeStory` lays out a Z-machine object tree (Z-machine standard §12, the short names Z-encoded
as in §3) and a globals table in the bytes of a story file; `FakeFrotz` plays it: compass moves
along each room's exits, `look`, getting into and out of furniture, vehicles that carry the
player, with the player object moved in the interpreter's memory as a real game moves it.
Global 0 follows the player's room when the story says so (every version 3 game does; many
later ones do not), or what the player is in. The trees are whatever a test needs: rooms at
the top (Inform), or all inside one container, named or not (Infocom's `rooms`, Plundered
Hearts' "it"). `JerichoGame` plays it once `load_interpreter` is patched to return a
`FakeFrotz`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_HEADER = 64
_ENTRY = 9  # version 3: 4 attribute bytes, parent, sibling, child, property address
_GLOBALS = 240
_MOVES = {
    "n": "north",
    "s": "south",
    "e": "east",
    "w": "west",
    "ne": "northeast",
    "nw": "northwest",
    "se": "southeast",
    "sw": "southwest",
    "u": "up",
    "d": "down",
}


def encode(name: str) -> bytes:
    """A version 3 Z-string of letters and spaces (capitals shifted into alphabet A1)."""
    zchars: list[int] = []
    for c in name:
        if c == " ":
            zchars.append(0)
        elif c.isupper():
            zchars += [4, ord(c.lower()) - ord("a") + 6]
        else:
            zchars.append(ord(c) - ord("a") + 6)
    zchars = zchars or [5]
    while len(zchars) % 3:
        zchars.append(5)
    out = bytearray()
    for i in range(0, len(zchars), 3):
        word = (zchars[i] << 10) | (zchars[i + 1] << 5) | zchars[i + 2]
        out += (word | (0x8000 if i + 3 >= len(zchars) else 0)).to_bytes(2, "big")
    return bytes(out)


@dataclass(frozen=True)
class FakePlace:
    """A room object's words and map: its `look` answer and its exits (move -> room object)."""

    description: str
    header: str = ""
    """The name line `look` prints first; "" for a game that prints none."""
    exits: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class FakeStory:
    """A whole fake game: the tree (object -> (short name, parent)), the player, the rooms."""

    objects: dict[int, tuple[str, int]]
    player: int
    places: dict[int, FakePlace]
    furniture: dict[str, int] = field(default_factory=dict)
    """What the player can get into ("bed" -> its object): `get in bed`, `get up`."""
    vehicles: frozenset[int] = frozenset()
    """Furniture that carries the player: a compass move made in it moves it (with the player)
    along the room's exits."""
    rides: dict[str, int] = field(default_factory=dict)
    """Commands that carry the vehicle the player is in to a room ("city" -> its object)."""
    holder_exits: dict[int, dict[str, int]] = field(default_factory=dict)
    """Compass moves from inside a holder straight into another holder in the same room."""
    location_names_holder: bool = False
    """Whether global 0 names what the player is directly in (a vehicle, not its room)."""
    attributes: dict[int, frozenset[int]] = field(default_factory=dict)
    """Attribute flags (0 to 31) set on objects at the start."""
    speech: dict[str, str] = field(default_factory=dict)
    """What a character answers when talked to, asked or greeted, by its name; any other thing
    in the room is refused ("You can't talk to the door.")."""
    opening: str = ""
    """The title and welcome text printed before the first room."""
    location_global: bool = True
    """Whether global 0 holds the player's room (a version 3 game's status line needs it)."""

    @property
    def globals_address(self) -> int:
        """Where the globals table starts: after the property tables."""
        return self._layout()[1]

    def _layout(self) -> tuple[list[bytes], int]:
        names = [
            encode(self.objects[n][0]) if self.objects.get(n, ("", 0))[0] else b""
            for n in range(1, max(self.objects) + 1)
        ]
        properties = _HEADER + 62 + _ENTRY * len(names)
        end = properties + sum(1 + len(n) + 1 for n in names)
        return names, end

    def story_bytes(self) -> bytes:
        """The story file: header, object table, short names, globals (all dynamic memory)."""
        names, globals_at = self._layout()
        count = len(names)
        data = bytearray(globals_at + 2 * _GLOBALS)
        data[0] = 3
        data[0x0A:0x0C] = _HEADER.to_bytes(2, "big")
        data[0x0C:0x0E] = globals_at.to_bytes(2, "big")
        data[0x0E:0x10] = len(data).to_bytes(2, "big")  # static memory starts after it all
        entries = _HEADER + 62
        address = entries + _ENTRY * count
        for number in range(1, count + 1):
            entry = entries + _ENTRY * (number - 1)
            data[entry + 7 : entry + 9] = address.to_bytes(2, "big")
            encoded = names[number - 1]
            data[address] = len(encoded) // 2
            data[address + 1 : address + 1 + len(encoded)] = encoded
            address += 1 + len(encoded) + 1
        for number in sorted(self.objects):
            _move(data, number, self.objects[number][1])
        for number, flags in self.attributes.items():
            for flag in flags:
                data[_entry(number) + flag // 8] |= 0x80 >> flag % 8
        if self.location_global:
            _set_global(data, globals_at, self.location_of(bytes(data)))
        return bytes(data)

    def location_of(self, memory: bytes) -> int:
        """What global 0 holds: the room, or what the player is in (`location_names_holder`)."""
        if self.location_names_holder:
            return _link(memory, self.player, 0)
        return self.room_of(memory)

    def room_of(self, memory: bytes) -> int:
        """The place around the player in `memory` (0 when they are in none)."""
        current = _link(memory, self.player, 0)
        while current and current not in self.places:
            current = _link(memory, current, 0)
        return current


def _entry(number: int) -> int:
    return _HEADER + 62 + _ENTRY * (number - 1)


def _link(memory: bytes | bytearray, number: int, which: int) -> int:
    """Parent (0), sibling (1) or child (2) of object `number`."""
    return memory[_entry(number) + 4 + which]


def _set_link(memory: bytearray, number: int, which: int, value: int) -> None:
    memory[_entry(number) + 4 + which] = value


def _set_global(memory: bytearray, globals_at: int, value: int) -> None:
    memory[globals_at : globals_at + 2] = value.to_bytes(2, "big")


def _move(memory: bytearray, number: int, destination: int) -> None:
    """Move object `number` into `destination` (0: out of the tree), first in its children."""
    parent = _link(memory, number, 0)
    if parent:
        if _link(memory, parent, 2) == number:
            _set_link(memory, parent, 2, _link(memory, number, 1))
        else:
            before = _link(memory, parent, 2)
            while before and _link(memory, before, 1) != number:
                before = _link(memory, before, 1)
            if before:
                _set_link(memory, before, 1, _link(memory, number, 1))
    _set_link(memory, number, 0, destination)
    _set_link(memory, number, 1, _link(memory, destination, 2) if destination else 0)
    if destination:
        _set_link(memory, destination, 2, number)


class FakeFrotz:
    """The parts of Jericho's FrotzEnv that `JerichoGame` uses, playing a `FakeStory`."""

    is_fully_supported = True

    def __init__(self, story: FakeStory) -> None:
        """Load `story` (call `reset` to start)."""
        self.story = story
        self.player_obj_num = story.player
        self._memory = bytearray(story.story_bytes())
        self.moves = 0
        self.commands: list[str] = []
        """Every command this interpreter was sent, in order."""

    def reset(self) -> tuple[str, dict[str, Any]]:
        """Start again; the opening text, then the first room's `look`."""
        self._memory = bytearray(self.story.story_bytes())
        self.moves = 0
        return f"{self.story.opening}\n\n{self._look()}", {}

    def step(self, command: str) -> tuple[str, int, bool, dict[str, Any]]:
        """Play one command."""
        self.commands.append(command)
        words = command.lower().split()
        move = _MOVES.get(words[-1], words[-1]) if words else ""
        here = self.story.room_of(bytes(self._memory))
        holder = _link(self._memory, self.story.player, 0)
        if command.lower() == "look":
            text = self._look()
        elif (spoken := self._spoken(command)) is not None:
            text = spoken
        elif words[:2] == ["get", "in"] and words[-1] in self.story.furniture:
            self._put_player(self.story.furniture[words[-1]])
            text = f"You get into the {words[-1]}."
        elif command.lower() in ("get up", "stand up", "get out"):
            self._put_player(here)
            text = "You are on your feet again."
        elif command.lower() in self.story.rides and holder in self.story.vehicles:
            self._carry(holder, self.story.rides[command.lower()])
            text = self._look()
        elif move in self.story.holder_exits.get(holder, {}):
            self._put_player(self.story.holder_exits[holder][move])
            text = "You clamber across."
        elif move in self.story.places.get(here, FakePlace("")).exits:
            if holder in self.story.vehicles:
                self._carry(holder, self.story.places[here].exits[move])
                text = self._look()
            elif holder != here:
                text = "You'll have to get up first."
            else:
                self._put_player(self.story.places[here].exits[move])
                text = self._look()
        else:
            text = "You can't go that way." if move in _MOVES.values() else "Nothing happens."
        self.moves += 1
        return text, 0, False, {}

    def _spoken(self, command: str) -> str | None:
        """The answer to examining, talking to, asking or greeting a thing; None for another
        command."""
        lowered = command.lower().strip()
        found = (
            re.fullmatch(r"examine (.+)", lowered)
            or re.fullmatch(r"talk to (.+)", lowered)
            or re.fullmatch(r"ask (.+) about .+", lowered)
            or re.fullmatch(r"(.+), hello", lowered)
        )
        if found is None:
            return None
        here = self.story.room_of(bytes(self._memory))
        names = [
            name
            for number, (name, _parent) in self.story.objects.items()
            if name and _link(self._memory, number, 0) == here and number != self.story.player
        ]
        word = found.group(1).split()[-1]
        name = next((n for n in names if n.split()[-1] == word), None)
        if name is None:
            return "You can't see any such thing."
        if lowered.startswith("examine"):
            return f"You see nothing special about the {name}."
        return self.story.speech.get(name, f"You can't talk to the {name}.")

    def _put_player(self, destination: int) -> None:
        self._carry(self.story.player, destination)

    def _carry(self, thing: int, destination: int) -> None:
        """Move `thing` (the player, or the vehicle they are in) and update global 0."""
        _move(self._memory, thing, destination)
        if self.story.location_global:
            where = self.story.location_of(bytes(self._memory))
            _set_global(self._memory, self.story.globals_address, where)

    def _look(self) -> str:
        place = self.story.places[self.story.room_of(bytes(self._memory))]
        header = f"{place.header}\n" if place.header else ""
        return f"{header}{place.description}\n"

    def get_state(self) -> tuple[bytes, int]:
        """The dynamic memory (here the whole story) and the move counter."""
        return bytes(self._memory), self.moves

    def set_state(self, state: tuple[bytes, int]) -> None:
        """Return to a state from `get_state`."""
        self._memory = bytearray(state[0])
        self.moves = state[1]

    def get_moves(self) -> int:
        """Moves played."""
        return self.moves

    def get_score(self) -> int:
        """Nothing scores in these stories."""
        return 0

    def get_max_score(self) -> int:
        """Nothing scores in these stories."""
        return 0

    def victory(self) -> bool:
        """These stories are never won."""
        return False

    def game_over(self) -> bool:
        """These stories never end."""
        return False

    def close(self) -> None:
        """Nothing to release."""
