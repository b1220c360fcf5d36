"""FakeGame: a small scripted IGame for unit tests of play loops (no interpreter needed).

The world is plain data (`FakeWorld`): rooms with integer ids, exits by direction, takeable
items (some inside containers, some scoring, one that wins), locked doors that need a key, and
deadly rooms. The default world (`default_world()`):

Study (2)              the chest in the Study holds the brass key (+1 when taken)
  |  north/south
Hall (1) --east--> Vault (3)   the door is locked: "unlock door with key", "open door"
  |  west                      taking the crown in the Vault scores +2 and wins
Pit (4)                        walking into the Pit kills you

Commands: directions (`north`, `n`, `go north`), `look`, `inventory`, `open <container>`,
`take <item>` / `drop <item>` (the item's full name or its last word; an item's points are
given once), `unlock door with <key>`, `open door`; `climb <direction>` is the move, `jump` is
`down`. A `brief` world prints only a room's name when the player comes back to it; `look`
(the command, or `IGame.look` without a move) always gives the whole room. A world may kill the
player at a set move whatever is sent (`doom_at`, a clock). `probe` answers from a copy of an
earlier state. Every command after the game ended answers "The game is over." and spends no move.
Observations list the room's `objects` (its containers and the items in view); the player is
never inside anything, so `location_context` stays "".
Deterministic: the same commands always give the same observations.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from cairn.adapters.game.npcs import npcs_in_text
from cairn.interfaces.game import GameObservation, IGame, Probe

_ALIASES = {
    "n": "north",
    "s": "south",
    "e": "east",
    "w": "west",
    "u": "up",
    "d": "down",
    "l": "look",
    "i": "inventory",
}
_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


@dataclass(frozen=True)
class FakeRoom:
    """One room: its header, description, exits (direction -> room id) and NPCs standing here."""

    name: str
    description: str
    exits: dict[str, int] = field(default_factory=dict)
    deadly: bool = False
    npcs: tuple[str, ...] = ()


@dataclass(frozen=True)
class FakeItem:
    """A takeable item: where it lies (a room id), optionally inside a container there."""

    room: int
    container: str | None = None
    points: int = 0
    wins: bool = False


@dataclass(frozen=True)
class FakeDoor:
    """A locked door in `room` on the `direction` exit, opened by unlocking it with `key`."""

    room: int
    direction: str
    key: str


@dataclass(frozen=True)
class FakeWorld:
    """A whole fake game as data."""

    rooms: dict[int, FakeRoom]
    start: int
    items: dict[str, FakeItem] = field(default_factory=dict)
    containers: dict[str, int] = field(default_factory=dict)  # container name -> room id
    doors: tuple[FakeDoor, ...] = ()
    walkthrough: tuple[str, ...] = ()
    doom_at: int | None = None
    """The move at which the player dies whatever is sent (a clock), if any."""
    penalties: dict[str, int] = field(default_factory=dict)
    """Commands that cost points (command -> points lost), wherever they are sent."""
    toll_at: int | None = None
    """The move at which a point is lost whatever is sent (a toll), if any."""
    brief: bool = False
    """Revisits print only the room's name (as Infocom games do); `look` gives it all."""

    @property
    def max_score(self) -> int:
        """The sum of all items' points."""
        return sum(item.points for item in self.items.values())


def default_world() -> FakeWorld:
    """The four-room world of the module docstring (max score 3)."""
    hall = "A bare hall. A heavy door stands shut to the east. A study lies north."
    return FakeWorld(
        rooms={
            1: FakeRoom("Hall", hall, {"north": 2, "east": 3, "west": 4}),
            2: FakeRoom("Study", "A dusty study. An old chest stands here.", {"south": 1}),
            3: FakeRoom("Vault", "A vault. A silver crown rests on a plinth.", {"west": 1}),
            4: FakeRoom("Pit", "You fall into a pit.", deadly=True),
        },
        start=1,
        items={
            "brass key": FakeItem(room=2, container="chest", points=1),
            "silver crown": FakeItem(room=3, points=2, wins=True),
        },
        containers={"chest": 2},
        doors=(FakeDoor(room=1, direction="east", key="brass key"),),
        walkthrough=(
            "north",
            "open chest",
            "take key",
            "south",
            "unlock door with key",
            "open door",
            "east",
            "take crown",
        ),
    )


@dataclass
class _State:
    """Everything that changes while playing (what save/restore carry)."""

    room: int
    inventory: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)  # containers
    unlocked: list[int] = field(default_factory=list)  # door indexes
    door_open: list[int] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)  # item -> the room it was put down in
    scored: list[str] = field(default_factory=list)  # items whose points were given
    score: int = 0
    moves: int = 0
    done: bool = False
    died: bool = False
    won: bool = False
    seen: list[int] = field(default_factory=list)  # rooms entered this episode (`brief`)


class FakeGame(IGame):
    """A deterministic game over a `FakeWorld` (see the module docstring).

    `supported=False` reports score and max score as None and never reports a win (like a game
    Jericho does not fully support); `lose_location_at_end=True` reports location None once the
    game has ended (like Jericho after some endings). `actions` records every command sent.
    """

    def __init__(
        self,
        *,
        supported: bool = True,
        lose_location_at_end: bool = False,
        world: FakeWorld | None = None,
    ) -> None:
        self._world = world or default_world()
        self._supported = supported
        self._lose_location = lose_location_at_end
        self._s = _State(room=self._world.start)
        self.actions: list[str] = []
        self._before: list[bytes] = []
        """The state before each step of the episode (`probe`)."""

    @property
    def name(self) -> str:
        """Always "fake"."""
        return "fake"

    @property
    def fully_supported(self) -> bool:
        """As given to the constructor."""
        return self._supported

    def reset(self) -> GameObservation:
        """Back to the start room with nothing carried."""
        self._s = _State(room=self._world.start, seen=[self._world.start])
        self._before.clear()
        return self._observe(self._room_text(self._s.room))

    def step(self, action: str) -> GameObservation:
        """Send one command (recorded in `actions`)."""
        self.actions.append(action)
        self._before.append(self.save())
        return self._step(action)

    def probe(self, back: int, commands: Sequence[str]) -> list[Probe] | None:
        """What `commands` do from the state before the `back`-th last step; the game played
        is left as it was (its state, its recorded actions)."""
        if not 0 < back <= len(self._before):
            return None
        now = self._s
        self._s = _State(**json.loads(self._before[-back]))
        found: list[Probe] = []
        try:
            for command in commands:
                seen = self._step(command)
                found.append(
                    Probe(
                        command=command,
                        text=seen.text,
                        location_id=seen.location_id,
                        score=seen.score,
                        inventory=seen.inventory,
                        died=seen.died,
                        won=seen.won,
                    )
                )
                if seen.done:
                    break
        finally:
            self._s = now
        return found

    def look(self) -> str | None:
        """The room's whole text, without a move; None once the game has ended."""
        return None if self._s.done else self._room_text(self._s.room)

    def _step(self, action: str) -> GameObservation:
        if self._s.done:
            return self._observe("The game is over.")
        self._s.moves += 1
        command = " ".join(action.lower().split())
        command = _ALIASES.get(command, command).removeprefix("go ").removeprefix("climb ")
        if command == "jump":
            command = "down"  # (over the edge, where there is one)
        answer = self._respond(command)
        if command in self._world.penalties:
            self._s.score -= self._world.penalties[command]
            answer = "Ouch. That cost you."
        if self._world.toll_at is not None and self._s.moves == self._world.toll_at:
            self._s.score -= 1
            answer += " A toll is taken from you."
        doom = self._world.doom_at
        if doom is not None and self._s.moves >= doom and not self._s.done:
            self._s.done = self._s.died = True
            answer += " The ceiling collapses on you. *** You have died ***"
        return self._observe(answer)

    def save(self) -> bytes:
        """The state as JSON bytes."""
        return json.dumps(asdict(self._s)).encode()

    def restore(self, state: bytes) -> GameObservation:
        """Back to a saved state; the observation's text is empty."""
        self._s = _State(**json.loads(state))
        self._before.clear()
        return self._observe("")

    def walkthrough(self) -> list[str]:
        """The world's winning command list."""
        return list(self._world.walkthrough)

    def close(self) -> None:
        """Nothing to release."""

    # -- rules --------------------------------------------------------------------------------

    def _respond(self, command: str) -> str:
        room = self._world.rooms[self._s.room]
        if command in room.exits or _is_direction(command):
            return self._go(command)
        if command == "look":
            return self._room_text(self._s.room)
        if command == "inventory":
            return _inventory_text(self._s.inventory)
        verb, _, rest = command.partition(" ")
        if verb == "open" and rest == "door":
            return self._open_door()
        if verb == "open":
            return self._open_container(rest)
        if verb == "take":
            return self._take(rest)
        if verb == "drop":
            return self._drop(rest)
        if verb == "unlock" and rest.startswith("door with "):
            return self._unlock(rest.removeprefix("door with "))
        return "You can't do that here."

    def _go(self, direction: str) -> str:
        s = self._s
        target = self._world.rooms[s.room].exits.get(direction)
        if target is None:
            return "You can't go that way."
        door = self._door(s.room, direction)
        if door is not None and door not in s.door_open:
            return "The door is closed."
        s.room = target
        if self._world.rooms[target].deadly:
            s.done = s.died = True
            return f"{self._room_text(target)} *** You have died ***"
        if self._world.brief and target in s.seen:
            return self._world.rooms[target].name
        s.seen.append(target)
        return self._room_text(target)

    def _open_container(self, name: str) -> str:
        s = self._s
        if self._world.containers.get(name) != s.room:
            return "You can't do that here."
        if name not in s.opened:
            s.opened.append(name)
        inside = [i for i, item in self._world.items.items() if item.container == name]
        found = [i for i in inside if i not in s.inventory]
        what = f", revealing a {' and a '.join(found)}" if found else ""
        return f"You open the {name}{what}."

    def _take(self, word: str) -> str:
        s = self._s
        found = self._item_here(word)
        if found is None:
            return "You can't do that here."
        name, item = found
        s.inventory.append(name)
        s.dropped.pop(name, None)
        if name in s.scored:
            return "Taken."
        s.scored.append(name)
        s.score += item.points
        if item.wins:
            s.done = s.won = True
            return "Taken. You have won!"
        if item.points:
            number = _NUMBERS.get(item.points, str(item.points))
            plural = "" if item.points == 1 else "s"
            return f"Taken. Your score has gone up by {number} point{plural}."
        return "Taken."

    def _drop(self, word: str) -> str:
        s = self._s
        for name in s.inventory:
            if word in (name, name.split()[-1]):
                s.inventory.remove(name)
                s.dropped[name] = s.room
                return "Dropped."
        return "You don't have that."

    def _item_here(self, word: str) -> tuple[str, FakeItem] | None:
        """The item called `word` (full name or last word) that can be taken right here."""
        s = self._s
        for name, item in self._world.items.items():
            if word not in (name, name.split()[-1]) or name in s.inventory:
                continue
            if name in s.dropped:
                if s.dropped[name] == s.room:
                    return name, item
                continue
            if item.room == s.room and (item.container is None or item.container in s.opened):
                return name, item
        return None

    def _unlock(self, key_word: str) -> str:
        s = self._s
        for index, door in enumerate(self._world.doors):
            if door.room != s.room or key_word not in (door.key, door.key.split()[-1]):
                continue
            if door.key in s.inventory:
                if index not in s.unlocked:
                    s.unlocked.append(index)
                return "You unlock the door."
        return "You can't do that here."

    def _open_door(self) -> str:
        s = self._s
        here = [i for i, d in enumerate(self._world.doors) if d.room == s.room]
        if not here:
            return "You can't do that here."
        if not all(i in s.unlocked for i in here):
            return "You can't, it is locked."
        s.door_open.extend(i for i in here if i not in s.door_open)
        return "You open the door."

    def _door(self, room: int, direction: str) -> int | None:
        for index, door in enumerate(self._world.doors):
            if door.room == room and door.direction == direction:
                return index
        return None

    # -- observation --------------------------------------------------------------------------

    def _room_text(self, room_id: int) -> str:
        room = self._world.rooms[room_id]
        return f"{room.name}\n{room.description}"

    def _observe(self, text: str) -> GameObservation:
        s = self._s
        location = None if (s.done and self._lose_location) else s.room
        room = self._world.rooms[s.room]
        npcs = list(room.npcs) if location is not None else []
        return GameObservation(
            text=text,
            location_id=location,
            location_name=room.name if location is not None else "",
            objects=self._objects_here() if location is not None else [],
            inventory=list(s.inventory),
            score=s.score if self._supported else None,
            max_score=self._world.max_score if self._supported else None,
            moves=s.moves,
            done=s.done,
            died=s.died,
            won=s.won and self._supported,
            npcs_present=npcs,
            npcs_mentioned=npcs_in_text([*self._all_npcs()], text),
        )

    def _objects_here(self) -> list[str]:
        """The containers of the room and the items in view there (not carried, not shut in)."""
        s = self._s
        containers = [c for c, room in self._world.containers.items() if room == s.room]
        items = [
            name
            for name, item in self._world.items.items()
            if name not in s.inventory
            and (
                s.dropped.get(name) == s.room
                if name in s.dropped
                else item.room == s.room and (item.container is None or item.container in s.opened)
            )
        ]
        return [*containers, *items]

    def _all_npcs(self) -> list[str]:
        return [npc for room in self._world.rooms.values() for npc in room.npcs]


def _is_direction(command: str) -> bool:
    return command in (
        *("north", "south", "east", "west", "up", "down"),
        *("northeast", "northwest", "southeast", "southwest"),
    )


def _inventory_text(items: list[str]) -> str:
    if not items:
        return "You are empty-handed."
    return "You are carrying: " + ", ".join(f"a {i}" for i in items) + "."
