"""JerichoGame: IGame over Jericho's FrotzEnv (Z-machine story files, TextWorld `tw-*` games).

- Location ids are `get_player_location().num` (ints). None when Jericho cannot say: it returns
  None in some states, and for games it does not fully support it has no player object at all
  (its `get_player_location()` then raises). An id is never invented. When the player is inside
  a vehicle or container (Zork's magic boat, 9:05's bed) the id is that object's, as Jericho says.
- Display names come from the room header in the game text (`West of House`, TextWorld's
  `-= Kitchen =-`); object-tree names are abbreviated ("West House", "Living ") or empty
  (TextWorld), so they are only the fallback. Headers are cached per location id; Inform's
  "Darkness" (any unlit room) is not a room's name and is never cached.
- Score and max score are None for games Jericho does not fully support (unknown, not 0), and
  `won` is then always False (unknown); such games' moves are counted here, one per step.
- Death and victory: for supported games, `victory()` (or, when the game ended, reaching the
  max score: 9:05 ends with the max score and Jericho's `game_over()`), else `game_over()` is a
  death; for unsupported games only a death banner in the text ("*** You have died ***").
- Inventory is read from the object tree; only when the tree's objects have no names
  (TextWorld) is the `inventory` command sent, on a saved state that is then restored, so it
  costs no move.
- `get_valid_actions()` is never used (it needs a spaCy model that cannot be downloaded).
- Frotz ends the whole process on a malformed story file, so the file's Z-machine header is
  checked before Jericho sees it.
"""

from __future__ import annotations

import pickle
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.adapters.game.npcs import match_npcs
from app.errors import GameError
from app.interfaces.game import GameObservation, IGame

_TW_HEADER = re.compile(r"^-= (.+?) =-\s*$", re.MULTILINE)
# A room header: a short unindented line, first word capitalised, no sentence punctuation;
# an optional parenthesised note ("Bedroom (in bed)").
_TITLE = re.compile(r"^[A-Z][\w'\-]*(?: [\w'\-]+){0,5}(?: \([^()\n]{1,30}\))?$")
_MAX_TITLE = 50
# Inform prints this header in any unlit room: it names no room, so it is never cached.
_DARK_HEADERS = frozenset(["darkness", "in the dark"])
# Unsupported games get the stale status line ("> West of House    Score: 0  Moves: 0").
_STATUS_LINE = re.compile(r"\A>[^\n]*? {8,}[^\n]*(?:\n|\Z)")
_DEATH = re.compile(r"\*+\s*you (?:have )?(?:died|lost)\s*\*+|\byou have died\b", re.I)
_ARTICLE = re.compile(r"^(?:an?|the|some)\s+", re.I)
_Z_HEADER = 64
_LENGTH_SCALE = {1: 2, 2: 2, 3: 2, 4: 4, 5: 4, 6: 8, 7: 8, 8: 8}


def parse_inventory(text: str) -> list[str]:
    """Item names from an `inventory` answer ("You are carrying: an iron key, a lamp.")."""
    if "carrying" not in text.lower() or "nothing" in text.lower():
        return []
    body = text.split(":", 1)[1] if ":" in text else text
    parts = re.split(r",\s*|\s+and\s+|\n", body.strip().rstrip("."))
    return [_ARTICLE.sub("", p.strip()).strip() for p in parts if p.strip()]


def _is_title(line: str) -> bool:
    """Whether `line` looks like a room header (see `_TITLE`)."""
    return len(line) <= _MAX_TITLE and _TITLE.match(line) is not None


def room_header(text: str, anywhere: bool = True) -> str | None:
    """The room name a game printed at the top of a room description, if any.

    TextWorld's `-= Name =-` is taken wherever it is. Otherwise, with `anywhere`, the first
    title-like line (after an intro, "You have moved into a dark place.", a death...); without
    it, only a title-like first line that a description follows (a "look" where the player
    already was; a lone short line there is more likely an answer than a header).
    """
    found = _TW_HEADER.search(text)
    if found:
        return found.group(1).strip()
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if anywhere:
        return next((line for line in lines if _is_title(line)), None)
    if len(lines) >= 2 and _is_title(lines[0]):
        return lines[0]
    return None


def strip_status_line(text: str) -> str:
    """`text` without a leading status line (unsupported games print a stale one first)."""
    return _STATUS_LINE.sub("", text, count=1)


def check_story_file(path: Path) -> None:
    """Raise GameError unless `path` is a readable Z-machine story file Frotz will load.

    Frotz calls exit() on a bad story file, which would end the whole process.
    """
    if not path.is_file():
        raise GameError(f"{path}: no such story file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GameError(f"{path}: cannot read the story file: {exc}") from exc
    if len(data) < _Z_HEADER or data[0] not in _LENGTH_SCALE:
        raise GameError(f"{path}: not a Z-machine story file")
    declared = int.from_bytes(data[0x1A:0x1C], "big") * _LENGTH_SCALE[data[0]]
    if declared > len(data):
        raise GameError(f"{path}: truncated story file ({len(data)} of {declared} bytes)")


@dataclass
class _Saved:
    """What `save()` serialises: Jericho's state tuple and our own move counter."""

    state: tuple[Any, ...]
    steps: int


class JerichoGame(IGame):
    """One story file played through Jericho (see the module docstring)."""

    def __init__(
        self, path: Path | str, npc_names: list[str] | None = None, seed: int | None = None
    ) -> None:
        """Load `path`; `seed` None means the walkthrough's seed (so walkthroughs replay)."""
        self._path = Path(path)
        check_story_file(self._path)
        self._env: Any = _load(self._path, seed)
        self._supported = bool(getattr(self._env, "is_fully_supported", False))
        self._npcs = list(npc_names or [])
        self._headers: dict[int, str] = {}
        self._last_id: int | None = None
        self._steps = 0

    @property
    def name(self) -> str:
        """The story file's stem ("zork1")."""
        return self._path.stem

    @property
    def fully_supported(self) -> bool:
        """Jericho's own verdict: it knows this game's score, moves and victory."""
        return self._supported

    def reset(self) -> GameObservation:
        """Start a new episode (the header cache is kept: it is knowledge, not state)."""
        try:
            text, _info = self._env.reset()
        except Exception as exc:
            raise GameError(f"{self.name}: the interpreter failed to reset: {exc}") from exc
        self._steps = 0
        self._last_id = None
        return self._observe(text, done=False)

    def step(self, action: str) -> GameObservation:
        """Send one command."""
        try:
            text, _reward, done, _info = self._env.step(action)
        except Exception as exc:
            raise GameError(f"{self.name}: the interpreter failed on {action!r}: {exc}") from exc
        self._steps += 1
        return self._observe(text, done=bool(done))

    def save(self) -> bytes:
        """The interpreter's full state, pickled."""
        return pickle.dumps(_Saved(self._env.get_state(), self._steps))

    def restore(self, state: bytes) -> GameObservation:
        """Return to a state from `save()` (only ever give it those bytes: they are unpickled)."""
        try:
            saved = pickle.loads(state)
            if not isinstance(saved, _Saved):
                raise TypeError(type(saved).__name__)
            self._env.set_state(saved.state)
        except Exception as exc:
            raise GameError(f"{self.name}: not a state saved by this game: {exc}") from exc
        self._steps = saved.steps
        self._last_id = None
        return self._observe("", done=False)

    def walkthrough(self) -> list[str]:
        """Jericho's walkthrough for supported games, else an empty list."""
        if not self._supported:
            return []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return [str(a) for a in self._env.get_walkthrough()]
            except Exception:  # no bindings for this game
                return []

    def close(self) -> None:
        """Release the interpreter."""
        self._env.close()

    # -- observation -------------------------------------------------------------------------

    def _observe(self, raw: str, done: bool) -> GameObservation:
        """Read everything the observation reports from the interpreter, after `raw` text."""
        text = strip_status_line(raw)
        location = self._location()
        loc_id: int | None = int(location.num) if location is not None else None
        name = self._display_name(loc_id, location, text)
        self._last_id = loc_id
        score, max_score = self._scores()
        won, died = self._outcome(text, done, score, max_score)
        present, mentioned = match_npcs(self._npcs, self._room_objects(location), text)
        return GameObservation(
            text=text,
            location_id=loc_id,
            location_name=name,
            inventory=self._inventory(done),
            score=score,
            max_score=max_score,
            moves=int(self._env.get_moves()) if self._supported else self._steps,
            done=done,
            died=died,
            won=won,
            npcs_present=present,
            npcs_mentioned=mentioned,
        )

    def _location(self) -> Any | None:
        """The player's parent object, or None when Jericho cannot say."""
        try:
            location = self._env.get_player_location()
        except Exception:  # no player object (unsupported games): Jericho raises
            return None
        if location is None or int(location.num) <= 0:
            return None
        return location

    def _display_name(self, loc_id: int | None, location: Any | None, text: str) -> str:
        """The header for `loc_id`: from this text, else cached, else the object-tree name."""
        if loc_id is None:
            return room_header(text) or ""
        moved = loc_id != self._last_id or loc_id not in self._headers
        header = room_header(text, anywhere=moved)
        if header and header.lower() not in _DARK_HEADERS:
            self._headers[loc_id] = header
        fallback = str(location.name).strip() if location is not None else ""
        return self._headers.get(loc_id) or fallback

    def _scores(self) -> tuple[int | None, int | None]:
        """(score, max score), both None when Jericho does not fully support the game."""
        if not self._supported:
            return None, None
        return int(self._env.get_score()), int(self._env.get_max_score())

    def _outcome(
        self, text: str, done: bool, score: int | None, max_score: int | None
    ) -> tuple[bool, bool]:
        """(won, died). A death banner without `done` (a resurrection) is still a death."""
        banner = _DEATH.search(text) is not None
        if not done:
            return False, banner
        if not self._supported:
            return False, banner
        full = score is not None and max_score is not None and 0 < max_score <= score
        won = bool(self._env.victory()) or full
        return won, not won and (bool(self._env.game_over()) or banner)

    def _room_objects(self, location: Any | None) -> list[str]:
        """Names of the objects directly in the player's location."""
        if location is None or not self._npcs:
            return []
        names: list[str] = []
        child = int(location.child)
        seen: set[int] = set()
        while child > 0 and child not in seen:
            seen.add(child)
            obj = self._env.get_object(child)
            if obj is None:
                break
            names.append(str(obj.name))
            child = int(obj.sibling)
        return names

    def _inventory(self, done: bool) -> list[str]:
        """Names of what the player carries, from the object tree (see the module docstring)."""
        try:
            objects = list(self._env.get_inventory())
        except Exception:  # no player object (unsupported games)
            return []
        names = [name for o in objects if (name := str(o.name).strip())]
        if objects and not names and not done:
            return self._inventory_by_command()
        return names

    def _inventory_by_command(self) -> list[str]:
        """Ask the game (TextWorld's object tree has no names) and undo the question."""
        state = self._env.get_state()
        try:
            text, _r, _d, _i = self._env.step("inventory")
        finally:
            self._env.set_state(state)
        return parse_inventory(text)


def _load(path: Path, seed: int | None) -> Any:
    """A FrotzEnv for `path`; Jericho's "not fully supported" warning is expected, not shown."""
    from jericho import FrotzEnv

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return FrotzEnv(str(path), seed=seed)
    except Exception as exc:  # the interpreter reports any problem as a plain exception
        raise GameError(f"{path}: Jericho cannot load it: {exc}") from exc
