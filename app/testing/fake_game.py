"""FakeGame: a tiny scripted IGame for unit tests of play loops (no interpreter needed).

Study (2)              the chest in the Study holds the key (+1 when taken)
  |  north/south
Hall (1) --east--> Vault (3)   the Vault door is locked: unlock door with key, open door
  |  west                      taking the crown in the Vault scores +2 and wins
Pit (4)                        walking into the Pit kills you
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from app.interfaces.game import GameObservation, IGame

_ROOMS = {
    1: ("Hall", "A bare hall. A heavy door stands shut to the east. A study lies north."),
    2: ("Study", "A dusty study. An old chest stands here."),
    3: ("Vault", "A vault. A silver crown rests on a plinth."),
    4: ("Pit", "You fall into a pit."),
}
_EXITS = {1: {"north": 2, "east": 3, "west": 4}, 2: {"south": 1}, 3: {"west": 1}, 4: {}}
_ALIASES = {"n": "north", "s": "south", "e": "east", "w": "west"}


@dataclass
class _State:
    room: int = 1
    inventory: list[str] = field(default_factory=list)
    chest_open: bool = False
    unlocked: bool = False
    door_open: bool = False
    score: int = 0
    moves: int = 0
    done: bool = False
    died: bool = False
    won: bool = False


class FakeGame(IGame):
    """Deterministic four-room game (see the module docstring). Max score 3."""

    def __init__(self, *, supported: bool = True, lose_location_at_end: bool = False) -> None:
        self._supported = supported
        self._lose_location = lose_location_at_end
        self._s = _State()
        self.actions: list[str] = []

    @property
    def name(self) -> str:
        return "fake"

    @property
    def fully_supported(self) -> bool:
        return self._supported

    def reset(self) -> GameObservation:
        self._s = _State()
        return self._observe(f"{_ROOMS[1][0]}\n{_ROOMS[1][1]}")

    def step(self, action: str) -> GameObservation:
        self.actions.append(action)
        s = self._s
        if s.done:
            return self._observe("The game is over.")
        s.moves += 1
        command = " ".join(action.lower().split())
        command = _ALIASES.get(command, command).removeprefix("go ")
        return self._observe(self._respond(command))

    def _respond(self, command: str) -> str:
        s = self._s
        if command in ("north", "south", "east", "west"):
            target = _EXITS[s.room].get(command)
            if target is None:
                return "You can't go that way."
            if target == 3 and not s.door_open:
                return "The door is closed."
            s.room = target
            if target == 4:
                s.done = s.died = True
                return f"{_ROOMS[4][0]}\n{_ROOMS[4][1]} *** You have died ***"
            return f"{_ROOMS[target][0]}\n{_ROOMS[target][1]}"
        return self._interact(command)

    def _interact(self, command: str) -> str:
        s = self._s
        if s.room == 2 and command == "open chest":
            s.chest_open = True
            return "You open the chest, revealing a brass key."
        if (
            s.room == 2
            and command == "take key"
            and s.chest_open
            and "brass key" not in s.inventory
        ):
            s.inventory.append("brass key")
            s.score += 1
            return "Taken. Your score has gone up by one point."
        if s.room == 1 and command == "unlock door with key" and "brass key" in s.inventory:
            s.unlocked = True
            return "You unlock the door."
        if s.room == 1 and command == "open door":
            if not s.unlocked:
                return "You can't, it is locked."
            s.door_open = True
            return "You open the door."
        if s.room == 3 and command == "take crown":
            s.inventory.append("silver crown")
            s.score += 2
            s.done = s.won = True
            return "Taken. You have won!"
        return "You can't do that here."

    def _observe(self, text: str) -> GameObservation:
        s = self._s
        location = None if (s.done and self._lose_location) else s.room
        return GameObservation(
            text=text,
            location_id=location,
            location_name=_ROOMS[s.room][0] if location is not None else "",
            inventory=list(s.inventory),
            score=s.score if self._supported else None,
            max_score=3 if self._supported else None,
            moves=s.moves,
            done=s.done,
            died=s.died,
            won=s.won and self._supported,
        )

    def save(self) -> bytes:
        return json.dumps(self._s.__dict__).encode()

    def restore(self, state: bytes) -> GameObservation:
        self._s = _State(**json.loads(state))
        return self._observe("")

    def walkthrough(self) -> list[str]:
        return [
            "north",
            "open chest",
            "take key",
            "south",
            "unlock door with key",
            "open door",
            "east",
            "take crown",
        ]

    def close(self) -> None:
        """Nothing to release."""
