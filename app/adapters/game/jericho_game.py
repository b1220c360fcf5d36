"""JerichoGame: IGame over Jericho's FrotzEnv (Z-machine story files, TextWorld `tw-*` games).

- The object tree is read from the interpreter's memory (`ztree`): Jericho's own `get_object`
  stops at a per-game limit (some games keep most rooms above it) and does not expand
  abbreviations in names ("North Hall" for "North of the Hall").
- Location ids are the room around the player (`rooms.place_player`): vehicles, furniture and
  containers are climbed out of (a boat or a bed the player is in is never a location); what
  holds the player is `location_context` ("in the boat"). Rooms that all sit in one top-level
  object stay distinct once it is known to hold them (`rooms`: the game's location variable
  names its child, or a compass move on the second interpreter walks or drives between two of
  its children) and the played game has not shown otherwise (`room_evidence`: a room the
  player stood in holds no rooms, a vehicle boarded from beside is none; a contradicted guess
  is dropped). None when the game cannot say where the player is, and always for games
  Jericho does not fully support (no player object). An id is never invented.
- Names (`room_names`): the header that `look` prints in the room, read once per room id on a
  saved state that is restored (no move is spent), vehicle suffix removed; dark rooms fall back
  to the cleaned object-tree name until a real header is read; a room with neither (a game
  that prints no room names) is named from its description (`names.described_name`). No
  location, no name: "" (a parser reply is never a name). Unsupported games have no ids: a
  header in the turn's text names the room, else "".
- `objects`: the things directly in the room and in what holds the player, lower case, internal
  codes removed. Games whose tree has no names (TextWorld's, some others) get the runs of words of
  the room's `look` text that the game's dictionary knows ("oak chest"), read again whenever
  something in the room moves or changes state (an opened chest shows its key).
- Score and max score are None for games Jericho does not fully support (unknown, not 0), and
  `won` is then always False (unknown); such games' moves are counted here, one per step.
- Death and victory: for supported games, `victory()` (or, when the game ended, reaching the
  max score: a game may end with the max score and Jericho's `game_over()`), else `game_over()` is a
  death; for unsupported games only a death banner in the text ("*** You have died ***").
- Inventory is read from the object tree, internal codes removed ("Brick_1" -> "brick"); only
  when the tree's objects have no names (TextWorld) is the `inventory` command sent, on a saved
  state that is then restored, so it costs no move.
- `world_changed`: whether the command changed the world, from Jericho's cleaned object-tree
  diff read right after the step, the player's own attribute flags left out (parsers set them
  while reading any command), minus what `wait` changes from the state before the command on
  a second interpreter (loaded once, never the one played: a timed event is the world's, not
  the command's; `probes.command_changed`). The played interpreter never goes back in time:
  Jericho keeps some of a game's figures outside its saved state (the demo world's score
  lagged a turn when it did). None after a reset or a restore, and for games Jericho does not
  fully support.
- NPCs: the characters in sight and those the text names, found from the game itself
  (`cast`, `characters`: what the parser answers when the things in sight are talked to on
  the second interpreter, and the attribute that marks them); a per-game list of names
  (`game_npcs`, a scenario's `npcs`) overrides it.
- `get_valid_actions()` is never used (it needs a spaCy model that cannot be downloaded).
- Frotz ends the whole process on a malformed story file, so the file's Z-machine header is
  checked before Jericho sees it.
"""

from __future__ import annotations

import pickle
import warnings
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn.adapters.game.cast import Cast
from cairn.adapters.game.interpreter import MemoryReader, load_interpreter, load_second
from cairn.adapters.game.names import (
    clean_item_name,
    nouns_in_text,
    object_name,
    parse_inventory,
    read_look,
    room_header,
    strip_status_line,
)
from cairn.adapters.game.npcs import match_npcs
from cairn.adapters.game.probes import (
    answers_aside,
    asked,
    command_changed,
    ending,
    run_probe,
)
from cairn.adapters.game.room_evidence import RoomEvidence
from cairn.adapters.game.room_names import RoomNames
from cairn.adapters.game.rooms import (
    Placement,
    find_rooms_root,
    named_inside,
    place_player,
    room_state,
    root_from_location,
    visible_things,
)
from cairn.adapters.game.story_file import check_story_file, read_story_file
from cairn.adapters.game.ztree import ObjectTree, ZStory
from cairn.errors import GameError
from cairn.interfaces.game import GameObservation, IGame, Probe
from cairn.models.vocabulary import Vocabulary

__all__ = [
    "JerichoGame",
    "check_story_file",
    "parse_inventory",
    "room_header",
    "strip_status_line",
]

_KEPT_STATES = 24
"""States before the episode's last steps kept for `probe` (a claim's steps lie within them)."""


@dataclass
class _Saved:
    """What `save()` serialises: Jericho's state tuple and our own move counter."""

    state: tuple[Any, ...]
    steps: int


@dataclass(frozen=True)
class _View:
    """One observation's object tree and where it puts the player."""

    tree: ObjectTree
    placement: Placement


class JerichoGame(IGame):
    """One story file played through Jericho (see the module docstring)."""

    def __init__(
        self,
        path: Path | str,
        npc_names: list[str] | None = None,
        seed: int | None = None,
        load_timeout: float | None = None,
    ) -> None:
        """Load `path`; `seed` None means the walkthrough's seed (so walkthroughs replay); a
        load that takes over `load_timeout` seconds (default `load_probe.LOAD_TIMEOUT`) is a
        GameError. `npc_names` None: the characters are found from the game (`cast`); a list
        (a per-game override) is matched by name instead, and an empty one means none."""
        self._path = Path(path)
        check_story_file(self._path)
        self._seed = seed
        self._env: Any = load_interpreter(self._path, seed, load_timeout)
        self._shadow: Any = None
        """A second interpreter for what `wait` alone changes (see `world_changed`)."""
        self._supported = bool(getattr(self._env, "is_fully_supported", False))
        self._story = _story(self._path)
        self._npcs = list(npc_names) if npc_names is not None else None
        self._cast = Cast()
        self._names = RoomNames()
        self._player: int | None = None
        self._rooms = RoomEvidence()
        """The rooms-root guess and what the played game showed about it (`room_evidence`)."""
        self._vocabulary: tuple[frozenset[str], frozenset[str]] | None = None
        self._named: set[tuple[object, ...]] = set()
        """(room, holder, the holder's attributes, thing) for each thing inside another that a
        text named there: a holder that changes (a box closed) must show it again."""
        self._known: tuple[Vocabulary | None] | None = None
        """`vocabulary()`'s answer, once read."""
        self._text_objects: dict[tuple[object, ...], list[str]] = {}
        self._ram = MemoryReader(self._env)
        self._item_names: dict[str, str] = {}
        """Cleaned names by the tree's raw names (a turn reads the same few again)."""
        self._object_names: dict[str, str] = {}
        self._turn_look: str | None = None
        self._ended = False  # the last observation ended the game: `look` answers nothing
        self._steps = 0
        self._before: deque[tuple[Any, ...]] = deque(maxlen=_KEPT_STATES)
        """The interpreter's state before each of the episode's last steps (`probe`)."""

    @property
    def name(self) -> str:
        """The story file's stem ("mygame" for mygame.z5)."""
        return self._path.stem

    @property
    def fully_supported(self) -> bool:
        """Jericho's own verdict: it knows this game's score, moves and victory."""
        return self._supported

    def reset(self) -> GameObservation:
        """Start a new episode (room names are kept: they are knowledge, not state)."""
        try:
            text, _info = self._env.reset()
        except Exception as exc:
            raise GameError(f"{self.name}: the interpreter failed to reset: {exc}") from exc
        self._steps = 0
        self._before.clear()
        self._rooms.forget_last()
        return self._observe(text, done=False)

    def step(self, action: str) -> GameObservation:
        """Send one command."""
        before = self._env.get_state() if self._supported else None
        try:
            text, _reward, done, _info = self._env.step(action)
        except Exception as exc:
            raise GameError(f"{self.name}: the interpreter failed on {action!r}: {exc}") from exc
        self._steps += 1
        if before is not None:
            self._before.append(before)
        changed = command_changed(self._env, self._second, before)
        return self._observe(text, done=bool(done), world_changed=changed)

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
        self._before.clear()
        self._rooms.forget_last()
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

    def probe(self, back: int, commands: Sequence[str]) -> list[Probe] | None:
        """What `commands` do from the state before the `back`-th last step, on the second
        interpreter (the played one never goes back in time: see the module docstring)."""
        if self._player is None or self._story is None or not 0 < back <= len(self._before):
            return None
        try:
            return run_probe(self._second(), self._before[-back], commands, self._probe_of)
        except Exception:  # an interpreter that cannot follow: the game cannot be asked
            return None

    def _probe_of(
        self, shadow: Any, command: str, raw: str, done: bool, changed: bool | None
    ) -> Probe:
        """The probe of one command, read from the second interpreter's state."""
        assert self._story is not None and self._player is not None
        tree = self._story.tree(bytes(shadow.get_state()[0]))
        status = tree.global_variable(0) if self._story.version == 3 else 0
        room = place_player(tree, self._player, self._rooms.root, status, self._rooms.rooms).room
        items = list(tree.children(self._player))
        raw_names = [tree.name(i) for i in items]
        if items and not any(n.strip() for n in raw_names):
            inventory = parse_inventory(asked(shadow, "inventory")) if not done else []
        else:
            inventory = [
                n for n in self._cleaned(raw_names, self._item_names, clean_item_name) if n
            ]
        score = int(shadow.get_score()) if self._supported else None
        top = int(shadow.get_max_score()) if self._supported else None
        won, died = ending(shadow, strip_status_line(raw), done, self._supported, score, top)
        return Probe(
            command=command,
            text=strip_status_line(raw),
            location_id=room,
            score=score,
            inventory=inventory,
            died=died,
            won=won,
            world_changed=changed,
        )

    def vocabulary(self) -> Vocabulary | None:
        """The story file's dictionary; None when it has none Jericho can read. Read once."""
        if self._known is None:
            words, _nouns, resolution = self._words()
            lowered = frozenset(w.lower() for w in words)
            self._known = (Vocabulary(lowered, resolution) if words else None,)
        return self._known[0]

    def look(self) -> str | None:
        """`look` on a saved state, restored (no move; shared with the turn's names)."""
        if self._ended:
            return None
        text = strip_status_line(self._look()).strip()
        return text or None

    def close(self) -> None:
        """Release the interpreters."""
        self._env.close()
        if self._shadow is not None:
            self._shadow.close()

    # -- observation -------------------------------------------------------------------------

    def _observe(self, raw: str, done: bool, world_changed: bool | None = None) -> GameObservation:
        """Read everything the observation reports from the interpreter, after `raw` text."""
        text = strip_status_line(raw)
        self._turn_look = None
        self._ended = done
        view = self._view(done)
        room = view.placement.room if view is not None else None
        name, context = self._room_name(view, text, done)
        objects = self._objects(view, name, done, text)
        score, max_score = self._scores()
        won, died = ending(self._env, text, done, self._supported, score, max_score)
        present, mentioned = self._characters(view, objects, text, done)
        return GameObservation(
            text=text,
            location_id=room,
            location_name=name,
            location_context=context,
            objects=objects,
            inventory=self._inventory(view, done),
            score=score,
            max_score=max_score,
            moves=int(self._env.get_moves()) if self._supported else self._steps,
            done=done,
            died=died,
            won=won,
            npcs_present=present,
            npcs_mentioned=mentioned,
            world_changed=world_changed,
        )

    def _view(self, done: bool = False) -> _View | None:
        """The object tree and the player's room; None when the game cannot say (unsupported)."""
        if not self._supported or self._story is None:
            return None
        try:
            tree = self._story.tree(self._ram.read())
        except Exception:  # the interpreter's memory could not be read
            return None
        first = self._player is None
        player = self._player = (
            int(getattr(self._env, "player_obj_num", 0) or 0) if first else self._player or 0
        )
        if not 0 < player <= tree.count:
            return None
        chain = tree.ancestors(player)
        self._rooms.observe(chain)
        if first:
            self._rooms.propose(find_rooms_root(tree, player), *chain[-2:-1])
            self._cast.start(tree.attributes(player))
        if self._rooms.root is None:
            self._find_rooms_root(self._story, tree, chain, done)
        status = tree.global_variable(0) if self._story.version == 3 else 0
        placement = place_player(tree, player, self._rooms.root, status, self._rooms.rooms)
        return _View(tree, placement)

    def _find_rooms_root(
        self, story: ZStory, tree: ObjectTree, chain: list[int], done: bool
    ) -> None:
        """Propose the top of the player's `chain` as the rooms' container when the game's
        location variable names the object under it, or when compass moves tried on the
        second interpreter show it (`RoomEvidence.probe`); the played game's evidence may
        refuse it, or drop it later."""
        found = root_from_location(chain, tree.global_variable(0))
        if self._rooms.propose(found, *chain[-2:-1]) is not None or done:
            return
        player = self._player or 0
        try:
            state = self._env.get_state()
            second = self._second()

            def moved(move: str) -> list[int]:
                second.set_state(state)
                second.step(move)
                return story.tree(bytes(second.get_state()[0])).ancestors(player)

            self._rooms.probe(chain, moved)
        except Exception:  # a second interpreter that cannot follow: no evidence
            return

    def _characters(
        self, view: _View | None, objects: list[str], text: str, done: bool
    ) -> tuple[list[str], list[str]]:
        """(present, mentioned) NPC names: the characters found from the game (`cast`: the
        things in sight are asked aside, never once the game has ended), or the per-game
        list's names among the room's objects and in the text."""
        if self._npcs is not None:
            return match_npcs(self._npcs, objects, text)
        if view is None or view.placement.room is None or self._player is None:
            return [], self._cast.mentioned(text)
        tree = view.tree
        return self._cast.read(
            tree,
            visible_things(tree, view.placement, self._player),
            text,
            lambda number: self._clean_one(tree.name(number)),
            self._words(),
            None if done else lambda commands: answers_aside(self._second, self._env, commands),
        )

    def _second(self) -> Any:
        """The second interpreter (loaded once, never the one played; see `world_changed`)."""
        if self._shadow is None:
            self._shadow = load_second(self._env, self._path, self._seed)
            self._shadow.reset()
        return self._shadow

    def _look(self) -> str:
        """The answer to `look`, on a saved state that is restored (at most once a turn)."""
        if self._turn_look is None:
            self._turn_look = asked(self._env, "look")
        return self._turn_look

    def _room_name(self, view: _View | None, text: str, done: bool) -> tuple[str, str]:
        """(name, context) of the player's room; ("", "") when there is no location."""
        if view is None:
            return room_header(text) or "", ""
        room, holder = view.placement.room, view.placement.holder
        if room is None:
            return "", ""
        tree = view.tree
        if not done and self._names.needs_look(room, holder):
            reading = read_look(self._look(), tree.name(room), bool(holder))
            self._names.learn(room, holder, reading, tree.name(holder) if holder else "")
        name = self._names.name(room, tree.name(room))
        return name, self._names.context(room, holder, tree.name(holder) if holder else "")

    def _words(self) -> tuple[frozenset[str], frozenset[str], int]:
        """The game's dictionary, its nouns (no verb, preposition or direction flag), and how
        many letters of a word it keeps. Read once."""
        if self._vocabulary is None:
            try:
                entries = list(self._env.get_dictionary())
            except Exception:  # no dictionary: no word is known
                entries = []
            words = frozenset(str(w.word) for w in entries)
            nouns = frozenset(
                str(w.word)
                for w in entries
                if not (w.is_verb or w.is_prep or w.is_dir or w.is_meta)
            )
            self._vocabulary = words, nouns
        version = self._story.version if self._story is not None else 5
        return *self._vocabulary, 6 if version <= 3 else 9

    def _objects(self, view: _View | None, room_name: str, done: bool, text: str) -> list[str]:
        """Names of the things in the room (see the module docstring)."""
        if view is None or view.placement.room is None or self._player is None:
            return []
        _vocabulary, nouns, resolution = self._words()
        things = visible_things(view.tree, view.placement, self._player)
        raw = [view.tree.name(t) for t in things]
        if any(n.strip() for n in raw) or not things:
            inside = named_inside(
                view.tree, view.placement, self._player, things, text, self._named, self._clean_one
            )
            raw = [view.tree.name(t) for t in inside] + raw  # what a thing holds: seen first
            names = self._cleaned(raw, self._object_names, object_name)
            return list(dict.fromkeys(n for n in names if n))
        key = room_state(view.tree, view.placement, self._player)
        if key not in self._text_objects and not done:
            self._text_objects[key] = nouns_in_text(
                self._look(), nouns, resolution, skip=[room_name, *self._names.known_names()]
            )
        return list(self._text_objects.get(key, []))

    def _scores(self) -> tuple[int | None, int | None]:
        """(score, max score), both None when Jericho does not fully support the game."""
        if not self._supported:
            return None, None
        return int(self._env.get_score()), int(self._env.get_max_score())

    def _inventory(self, view: _View | None, done: bool) -> list[str]:
        """Names of what the player carries, from the object tree (see the module docstring)."""
        if view is None or self._player is None:
            return []
        items = list(view.tree.children(self._player))
        raw = [view.tree.name(i) for i in items]
        if items and not any(n.strip() for n in raw):
            return [] if done else parse_inventory(asked(self._env, "inventory"))
        return [n for n in self._cleaned(raw, self._item_names, clean_item_name) if n]

    def _clean_one(self, raw: str) -> str:
        [name] = self._cleaned([raw], self._object_names, object_name)
        return name

    def _cleaned(
        self,
        raw: list[str],
        known: dict[str, str],
        clean: Callable[[str, Collection[str] | None, int], str],
    ) -> list[str]:
        """`clean` of each raw tree name (with the game's words), kept in `known` by raw name:
        a turn reads the same few names again."""
        vocabulary, _nouns, resolution = self._words()
        for name in raw:
            if name not in known:
                known[name] = clean(name, vocabulary, resolution)
        return [known[name] for name in raw]


def _story(path: Path) -> ZStory | None:
    """The story file's tree layout, or None when it cannot be read (no ids then)."""
    try:
        return ZStory(read_story_file(path))
    except (GameError, ValueError, IndexError):
        return None
