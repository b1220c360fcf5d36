"""JerichoGame: IGame over Jericho's FrotzEnv (Z-machine story files, TextWorld `tw-*` games).

- Location ids are `get_player_location().num` (ints); None when Jericho cannot say (it returns
  None in some states and after the game ended): never invented.
- Display names come from the room header in the game text (`West of House`, TextWorld's
  `-= Kitchen =-`); object-tree names are abbreviated ("West House") or empty (TextWorld), so
  they are only a fallback.
- Score and max score are None for games Jericho does not fully support (unknown, not 0).
- Inventory is read from the object tree; when the tree has no names (TextWorld), the
  `inventory` command is sent on a saved state that is then restored, so it costs no move.
- `get_valid_actions()` is never used (it needs a spaCy model that cannot be downloaded).
"""

from __future__ import annotations

import pickle
import re
import warnings
from pathlib import Path
from typing import Any

from app.adapters.game.npcs import match_npcs
from app.errors import GameError
from app.interfaces.game import GameObservation, IGame

_TW_HEADER = re.compile(r"^-= (.+?) =-\s*$", re.MULTILINE)
_HEADER_WORDS = re.compile(r"^[A-Z][A-Za-z'\- ]{1,40}$")
_SENTENCE_END = (".", "!", "?", ":", ",", ";", '"')
_DEATH = re.compile(r"\*\*\*\s*you (have died|lost|died)|you have died|you are dead", re.I)
_ARTICLE = re.compile(r"^(?:an?|the|some)\s+", re.I)


def parse_inventory(text: str) -> list[str]:
    """Item names from an `inventory` answer ("You are carrying: an iron key, a lamp.")."""
    if "carrying" not in text.lower() or "nothing" in text.lower():
        return []
    body = text.split(":", 1)[1] if ":" in text else text
    parts = re.split(r",\s*|\s+and\s+|\n", body.strip().rstrip("."))
    return [_ARTICLE.sub("", p.strip()).strip() for p in parts if p.strip()]


def room_header(text: str) -> str | None:
    """The room name a game printed at the top of a room description, if any."""
    found = _TW_HEADER.search(text)
    if found:
        return found.group(1).strip()
    for line in text.splitlines():
        line = line.strip()
        if _HEADER_WORDS.match(line) and not line.endswith(_SENTENCE_END):
            words = line.split()
            if len(words) <= 6 and all(w[0].isupper() or w in _SMALL for w in words):
                return line
    return None


_SMALL = frozenset(["of", "the", "a", "an", "in", "on", "to", "and", "at", "by", "with"])


class JerichoGame(IGame):
    """One story file played through Jericho (see the module docstring)."""

    def __init__(
        self, path: Path, npc_names: list[str] | None = None, seed: int | None = None
    ) -> None:
        from jericho import FrotzEnv

        self._path = Path(path)
        if not self._path.is_file():
            raise GameError(f"{self._path}: no such story file")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:  # no seed: the walkthrough's seed, so walkthroughs replay exactly
                    self._env: Any = FrotzEnv(str(self._path), seed=seed or None)
                except AttributeError:  # a game with no bindings has no walkthrough seed
                    self._env = FrotzEnv(str(self._path), seed=seed or 1)
        except Exception as exc:  # the interpreter reports any problem as a plain exception
            raise GameError(f"{self._path}: Jericho cannot load it: {exc}") from exc
        self._supported = bool(getattr(self._env, "is_fully_supported", False))
        self._npcs = list(npc_names or [])
        self._names: dict[int, str] = {}
        self._tree_has_names = True

    @property
    def name(self) -> str:
        return self._path.stem

    @property
    def fully_supported(self) -> bool:
        return self._supported

    def reset(self) -> GameObservation:
        text, _info = self._env.reset()
        return self._observe(text, done=False)

    def step(self, action: str) -> GameObservation:
        try:
            text, _reward, done, _info = self._env.step(action)
        except Exception as exc:
            raise GameError(f"{self.name}: the interpreter failed on {action!r}: {exc}") from exc
        return self._observe(text, done=bool(done))

    def save(self) -> bytes:
        return pickle.dumps(self._env.get_state())

    def restore(self, state: bytes) -> GameObservation:
        self._env.set_state(pickle.loads(state))  # our own bytes from save()
        return self._observe("", done=False)

    def walkthrough(self) -> list[str]:
        try:
            return list(self._env.get_walkthrough())
        except Exception:  # no bindings for this game
            return []

    def close(self) -> None:
        self._env.close()

    # -- observation -------------------------------------------------------------------------

    def _observe(self, text: str, done: bool) -> GameObservation:
        location = self._env.get_player_location()
        loc_id: int | None = int(location.num) if location is not None else None
        name = ""
        if loc_id is not None:
            header = room_header(text)
            if header:
                self._names[loc_id] = header
            name = self._names.get(loc_id) or (location.name or "").strip()
        won = bool(self._supported and done and self._env.victory())
        died = bool(done and not won and (self._env.game_over() or _DEATH.search(text)))
        if not done and _DEATH.search(text):
            died = True  # e.g. Zork's resurrection: a death that does not end the game
        objects = self._room_objects(location)
        present, mentioned = match_npcs(self._npcs, objects, text)
        return GameObservation(
            text=text,
            location_id=loc_id,
            location_name=name,
            inventory=self._inventory(done),
            score=int(self._env.get_score()) if self._supported else None,
            max_score=int(self._env.get_max_score()) if self._supported else None,
            moves=int(self._env.get_moves()),
            done=done,
            died=died,
            won=won,
            npcs_present=present,
            npcs_mentioned=mentioned,
        )

    def _room_objects(self, location: Any) -> list[str]:
        if location is None or not self._npcs:
            return []
        names: list[str] = []
        child = location.child
        seen: set[int] = set()
        while child and child not in seen:
            seen.add(child)
            obj = self._env.get_object(child)
            if obj is None:
                break
            names.append(str(obj.name))
            child = obj.sibling
        return names

    def _inventory(self, done: bool) -> list[str]:
        if self._path.name.startswith("tw-") and not done:
            return self._inventory_by_command()
        return [name for o in self._env.get_inventory() if (name := str(o.name).strip())]

    def _inventory_by_command(self) -> list[str]:
        """Ask the game (TextWorld's object tree has no names) and undo the question."""
        state = self._env.get_state()
        try:
            text, _r, _d, _i = self._env.step("inventory")
        finally:
            self._env.set_state(state)
        return parse_inventory(text)
