"""The demo world: a small old house authored with TextWorld's GameMaker, compiled offline.

The world is built with ``textworld.GameMaker`` and compiled with the Inform 7 compiler bundled in
the textworld wheel into the Z-machine story file ``tw-cairn-demo-<seed>.z8`` (the ``tw-`` prefix
is what makes Jericho detect score, moves and the player). Nothing is downloaded: the first call
of :func:`build_demo_world` compiles (about a second, plus a second to import textworld), later
calls reuse the cached file. Under Jericho, ``get_player_location().name`` is empty for TextWorld
games: room names come from the headers TextWorld prints (``-= Entrance Hall =-``).

Map (the same for every seed; ``#`` is the locked iron door)::

                     Library ------ Study
                        |
    Sinkhole --- Garden --- Entrance Hall --- Kitchen
                    |           #                |
               Greenhouse    Gallery           Larder
                                |
                             Treasury

Rooms (10): Entrance Hall (start), Library, Study, Kitchen, Larder, Garden, Greenhouse, Sinkhole,
Gallery, Treasury. Every passage works both ways (north/south, east/west).

Things:

- the **iron door** between the Entrance Hall (its south side) and the Gallery starts *locked*;
  ``open iron door`` answers "You have to unlock the iron door with the iron key first.";
- the **oak chest** (a closed container) holds the **iron key**. Which room it stands in depends
  on the seed, cycling through Study (seed 1, 4, ...), Greenhouse (seed 2, 5, ...) and Library
  (seed 3, 6, ...), see :func:`demo_chest_room`; everything else is the same for every seed;
- a **grey mushroom** lies on the **kitchen table** (Kitchen): eating it kills you;
- a harmless **red apple** lies in the Greenhouse (eating it is fine, a contrast to the mushroom);
- the **silver crown** lies on the **stone pedestal** in the Treasury.

The procedure: find the chest, ``open oak chest``, ``take iron key``, go back to the Entrance
Hall, ``unlock iron door with iron key``, ``open iron door``, ``go south`` twice, ``take silver
crown``.

Dangers (both end the game with "*** You lost! ***", no victory):

- walking ``west`` from the Garden into the **Sinkhole** (the Garden's description warns of it);
- ``eat grey mushroom``.

Dead ends: the **Larder** (south of the Kitchen: empty shelves, nothing to do) is the designated
dead end; Study and Greenhouse are single-exit rooms too.

Scoring (max score 4): taking the iron key +1, opening the iron door +1, taking the silver crown
+2, which also wins the game ("*** The End ***"). Each is a TextWorld quest whose event is a set
of conditions (no ``new_event_using_commands``, which would compile the game once per event);
each scores once.

NPCs: none; TextWorld has no notion of non-player characters, so :data:`DEMO_NPCS` is empty.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from cairn.adapters.files import atomic_write_text
from cairn.errors import GameError

DEMO_NPCS: list[str] = []
"""Names of the demo world's non-player characters: none (TextWorld cannot make NPCs)."""

DEMO_MAX_SCORE = 4
"""The demo world's maximum score (key +1, door +1, crown +2)."""

START_ROOM = "Entrance Hall"
DEADLY_ROOM = "Sinkhole"
DEAD_END_ROOM = "Larder"
LOCKED_ROOMS = ("Gallery", "Treasury")
"""Rooms behind the locked iron door."""

CHEST_ROOMS = ("Study", "Greenhouse", "Library")
"""The rooms the oak chest (holding the iron key) may stand in; the seed picks one."""

DOOR = "iron door"
KEY = "iron key"
CHEST = "oak chest"
CROWN = "silver crown"
POISON = "grey mushroom"

COMPILE_LOCK_TIMEOUT_S = 300.0
"""How long a caller waits for another process that is compiling the same world."""

_TEXTWORLD_LOCK = threading.Lock()
"""TextWorld's generator is not known to be thread-safe (its parsers are not): one at a time."""

_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}

_PASSAGES: tuple[tuple[str, str, str], ...] = (
    ("Entrance Hall", "north", "Library"),
    ("Library", "east", "Study"),
    ("Entrance Hall", "east", "Kitchen"),
    ("Kitchen", "south", "Larder"),
    ("Entrance Hall", "west", "Garden"),
    ("Garden", "west", "Sinkhole"),
    ("Garden", "south", "Greenhouse"),
    ("Entrance Hall", "south", "Gallery"),  # through the locked iron door
    ("Gallery", "south", "Treasury"),
)
"""Each passage once, as (room, direction, room reached going that way)."""

_DOOR_PASSAGE = ("Entrance Hall", "south", "Gallery")

# Room and thing names should not start with a capital "P" or "I": TextWorld 1.7's text grammar
# takes such a name for a placeholder (its check is `re.match("([a-z]_[0-9]+|P|I)", name)`) and
# silently replaces it ("Pantry" became "Cookhouse"). `_assemble` skips that grammar, but keep the
# rule in case it comes back; the tests check every header.
_ROOM_DESCRIPTIONS = {
    "Entrance Hall": (
        "A draughty hall with a cracked flagstone floor. In the south wall a heavy iron door "
        "stands [if {door} is open]open[otherwise]shut[end if]. Archways lead north to a library "
        "and east to a kitchen, and a doorway opens west onto a garden."
    ),
    "Library": (
        "Tall shelves of mouldering books. The way back to the hall is south, and a narrow "
        "passage leads east."
    ),
    "Study": "A cramped study that smells of ink and dust. The only way out is west.",
    "Kitchen": (
        "A cold kitchen with a soot-blackened hearth. A kitchen table stands in the middle."
        "[if there is something on the {table}] On the kitchen table you see "
        "[a list of things on the {table}].[end if] "
        "The hall is west, and a low door leads south into a larder."
    ),
    "Larder": (
        "Empty shelves, cobwebs and nothing else. This larder is a dead end: the only way out "
        "is north, back to the kitchen."
    ),
    "Garden": (
        "An overgrown garden. To the west the lawn sags around a dark, crumbling hole in the "
        "ground. The hall is east, and a glass greenhouse lies to the south."
    ),
    "Greenhouse": "A greenhouse full of dead plants and broken panes. The garden is north.",
    "Sinkhole": (
        "The soft earth gives way under your feet and you tumble into a deep, dark sinkhole. "
        "There is no climbing out of here."
    ),
    "Gallery": (
        "A long gallery of faded portraits. The iron door to the hall is north and "
        "[if {door} is open]open[otherwise]shut[end if]; an arch leads south."
    ),
    "Treasury": (
        "A small vaulted treasury. A stone pedestal stands in the middle."
        "[if there is something on the {pedestal}] On the stone pedestal you see "
        "[a list of things on the {pedestal}].[end if] The gallery is north."
    ),
}

_CHEST_SENTENCE = (
    " An old oak chest stands against the wall[if {chest} is open]; its lid is up[end if]."
    "[if {chest} is open and there is something in the {chest}] The oak chest holds "
    "[a list of things in the {chest}].[end if]"
)

_THING_DESCRIPTIONS = {
    DOOR: "A heavy door of black iron with a large keyhole.",
    KEY: "A long iron key, cold and heavy.",
    CHEST: "An old chest of dark oak, bound with iron bands.",
    POISON: "A grey mushroom with sickly purple spots. It smells of rot and looks poisonous.",
    "red apple": "A shiny red apple. It looks perfectly wholesome.",
    CROWN: "A crown of tarnished silver set with a single blue stone.",
    "kitchen table": "A scrubbed wooden kitchen table.",
    "stone pedestal": "A waist-high pedestal of grey stone.",
}

_OBJECTIVE = (
    "Legend says the silver crown of this old house lies somewhere behind its locked iron door. "
    "Find it and take it, and watch your step."
)


@dataclass(frozen=True)
class _Layout:
    """The seed-dependent part of the world."""

    chest_room: str


def _layout(seed: int) -> _Layout:
    """Where the seed puts things (deterministic: same seed, same layout)."""
    return _Layout(chest_room=CHEST_ROOMS[(seed - 1) % len(CHEST_ROOMS)])


def demo_world_filename(seed: int = 1) -> str:
    """The story file's name for `seed` (``tw-`` so that Jericho treats it as TextWorld)."""
    return f"tw-cairn-demo-{seed}.z8"


def demo_chest_room(seed: int = 1) -> str:
    """The room where the oak chest holding the iron key stands for `seed`."""
    return _layout(seed).chest_room


def demo_exits() -> dict[str, dict[str, str]]:
    """Every room's exits, ``{room: {direction: room}}`` (the iron door's passage included)."""
    exits: dict[str, dict[str, str]] = {}
    for here, direction, there in _PASSAGES:
        exits.setdefault(here, {})[direction] = there
        exits.setdefault(there, {})[_OPPOSITE[direction]] = here
    return exits


def demo_room_names() -> list[str]:
    """All room names, as TextWorld prints them in headers (``-= Name =-``)."""
    return list(_ROOM_DESCRIPTIONS)


# --------------------------------------------------------------------------- command sequences


def _route(start: str, goal: str, avoid: frozenset[str] = frozenset()) -> list[str]:
    """The shortest list of ``go <direction>`` commands from `start` to `goal` avoiding rooms."""
    exits = demo_exits()
    previous: dict[str, tuple[str, str]] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        room = queue.popleft()
        if room == goal:
            break
        for direction, there in exits[room].items():
            if there not in seen and there not in avoid:
                seen.add(there)
                previous[there] = (room, direction)
                queue.append(there)
    if goal not in seen:
        raise ValueError(f"no route from {start} to {goal}")
    commands: list[str] = []
    room = goal
    while room != start:
        room, direction = previous[room]
        commands.append(f"go {direction}")
    return commands[::-1]


def demo_walkthrough(seed: int = 1) -> list[str]:
    """A winning command sequence for the world of `seed` (score 4 of 4, ends in victory)."""
    chest_room = demo_chest_room(seed)
    safe = frozenset({DEADLY_ROOM, *LOCKED_ROOMS})
    return [
        *_route(START_ROOM, chest_room, safe),
        f"open {CHEST}",
        f"take {KEY}",
        *_route(chest_room, START_ROOM, safe),
        f"unlock {DOOR} with {KEY}",
        f"open {DOOR}",
        *_route(START_ROOM, "Treasury", frozenset({DEADLY_ROOM})),
        f"take {CROWN}",
    ]


def demo_death_commands(seed: int = 1) -> list[str]:
    """A command sequence that kills the player (walking into the Sinkhole) for `seed`."""
    del seed  # the Sinkhole is in the same place for every seed
    return _route(START_ROOM, DEADLY_ROOM)


def demo_poison_commands(seed: int = 1) -> list[str]:
    """The other deadly sequence: take and eat the grey mushroom in the Kitchen."""
    del seed  # the mushroom is in the same place for every seed
    return [*_route(START_ROOM, "Kitchen"), f"take {POISON}", f"eat {POISON}"]


# --------------------------------------------------------------------------- authoring


def _add_rooms(gm: Any) -> dict[str, Any]:
    """Create the rooms (descriptions filled in later, once the door and chest ids are known)."""
    return {name: gm.new_room(name) for name in _ROOM_DESCRIPTIONS}


def _connect_rooms(gm: Any, rooms: dict[str, Any]) -> Any:
    """Connect the rooms along `_PASSAGES`; returns the locked iron door."""
    door = None
    for here, direction, there in _PASSAGES:
        exit_here = getattr(rooms[here], direction)
        exit_there = getattr(rooms[there], _OPPOSITE[direction])
        path = gm.connect(exit_here, exit_there)
        if (here, direction, there) == _DOOR_PASSAGE:
            door = gm.new_door(path, name=DOOR, desc=_THING_DESCRIPTIONS[DOOR])
            door.add_property("locked")
    return door


def _describe_rooms(rooms: dict[str, Any], layout: _Layout, ids: dict[str, str]) -> None:
    """Give every room its hand-written description.

    `ids` maps the placeholders ``door``, ``chest``, ``table`` and ``pedestal`` to TextWorld ids,
    so that the Inform 7 text shows the live state (door open or shut, what lies where).
    """
    for name, room in rooms.items():
        text = _ROOM_DESCRIPTIONS[name]
        if name == layout.chest_room:
            text += _CHEST_SENTENCE
        room.infos.desc = text.format(**ids)


def _add_things(gm: Any, rooms: dict[str, Any], layout: _Layout, door: Any) -> dict[str, Any]:
    """Create and place every thing except the door; returns them by name."""
    things = {
        name: gm.new(kind, name=name, desc=_THING_DESCRIPTIONS[name])
        for name, kind in (
            (CHEST, "c"),
            (KEY, "k"),
            ("kitchen table", "s"),
            (POISON, "f"),
            ("red apple", "f"),
            ("stone pedestal", "s"),
            (CROWN, "o"),
        )
    }
    things[CHEST].add_property("closed")
    rooms[layout.chest_room].add(things[CHEST])
    things[CHEST].add(things[KEY])
    gm.add_fact("match", things[KEY], door)
    rooms["Kitchen"].add(things["kitchen table"])
    things["kitchen table"].add(things[POISON])
    rooms["Greenhouse"].add(things["red apple"])
    rooms["Treasury"].add(things["stone pedestal"])
    things["stone pedestal"].add(things[CROWN])
    return things


def _quests(gm: Any, things: dict[str, Any], door: Any, pit: Any) -> list[Any]:
    """The scoring quests (+1 key, +1 door, +2 crown = win) and the deadly one (no reward)."""
    from textworld.generator.game import Event, Quest

    def event(*fact: Any) -> Any:
        return Event(conditions={gm.new_fact(*fact)})

    return [
        Quest(win_events=[event("in", things[KEY], gm.inventory)], reward=1, optional=True),
        Quest(win_events=[event("open", door)], reward=1, optional=True),
        Quest(win_events=[event("in", things[CROWN], gm.inventory)], reward=2),
        Quest(fail_events=[event("at", gm.player, pit), event("eaten", things[POISON])]),
    ]


def _assemble(gm: Any, entities: list[Any], kb: Any) -> Any:
    """What ``GameMaker.build()`` does, minus its text grammar.

    Every name and description here is hand-written, so the grammar would only cost time (parsing
    it takes seconds) and rename things (see the note above `_ROOM_DESCRIPTIONS`).
    """
    from textworld.generator.game import Game
    from textworld.generator.world import World

    gm.validate()
    game = Game(World.from_facts(gm.facts, kb=kb), quests=gm.quests)
    for entity in entities:
        game.infos[entity.id] = entity.infos
    game.objective = _OBJECTIVE
    return game


def _make_game(seed: int) -> Any:
    """Author the world for `seed` with GameMaker and return it as a ``textworld.Game``."""
    import textworld
    from textworld.generator.data import KnowledgeBase

    options = textworld.GameOptions()
    options.kb = KnowledgeBase.default()  # the shared, already parsed one (a new one costs time)
    gm = textworld.GameMaker(options)
    layout = _layout(seed)
    rooms = _add_rooms(gm)
    door = _connect_rooms(gm, rooms)
    things = _add_things(gm, rooms, layout, door)
    ids = {"door": door.id, "chest": things[CHEST].id}
    ids |= {"table": things["kitchen table"].id, "pedestal": things["stone pedestal"].id}
    _describe_rooms(rooms, layout, ids)
    gm.set_player(rooms[START_ROOM])
    gm.quests = _quests(gm, things, door, rooms[DEADLY_ROOM])
    entities = [gm.player, gm.inventory, *rooms.values(), door, *things.values()]
    return _assemble(gm, entities, options.kb)


def demo_inform_source(seed: int = 1) -> str:
    """The Inform 7 source of the world for `seed` (deterministic)."""
    from textworld.generator.inform7 import generate_inform7_source

    with _TEXTWORLD_LOCK:
        return str(generate_inform7_source(_make_game(seed)))


# --------------------------------------------------------------------------- compiling


def _fingerprint(seed: int) -> str:
    """What a compiled file must have been made from to be reused: this module, textworld, seed.

    Computed without importing textworld (which takes a second), so a cache hit stays cheap.
    """
    digest = hashlib.sha256(f"seed={seed}\ntextworld={version('textworld')}\n".encode())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()


def _stamp_path(story: Path) -> Path:
    """The file beside the story file that records the fingerprint it was compiled for."""
    return story.with_name(story.name + ".sha256")


def _is_current(story: Path, fingerprint: str) -> bool:
    """Whether `story` exists and was compiled for `fingerprint`."""
    stamp = _stamp_path(story)
    if not (story.is_file() and stamp.is_file()):
        return False
    return stamp.read_text(encoding="utf-8").strip() == fingerprint


def _compile(source: str, story: Path) -> None:
    """Compile `source` into `story` via a temporary folder beside it and an atomic rename."""
    from textworld.generator.inform7 import CouldNotCompileGameError, compile_inform7_game

    work = Path(tempfile.mkdtemp(prefix=f".{story.stem}.", dir=story.parent))
    try:
        scratch = work / story.name
        try:
            compile_inform7_game(source, str(scratch))
        except CouldNotCompileGameError as exc:
            raise GameError(
                f"could not compile the demo world {story.name}: {_failure_reason(str(exc), work)}"
            ) from exc
        except (OSError, subprocess.SubprocessError) as exc:
            raise GameError(
                f"could not run the Inform 7 compiler for {story.name}:"
                f" {_failure_reason(str(exc), work)}"
            ) from exc
        if not scratch.is_file():
            raise GameError(f"the Inform 7 compiler produced no story file for {story.name}")
        os.replace(scratch, story)
    finally:
        shutil.rmtree(work, ignore_errors=True)


_SPACE_NEEDED = 20 * 1024 * 1024
"""Free bytes below which a failed compile is put down to a full disk (it writes ~10 MB)."""


def _failure_reason(output: str, work: Path) -> str:
    """Why a compile failed, in one line: a full disk (the compiler's own messages do not say
    so), else the compiler's first error line."""
    for folder in (work.parent, Path(tempfile.gettempdir())):
        try:
            free = shutil.disk_usage(folder).free
        except OSError:
            continue
        if free < _SPACE_NEEDED:
            return (
                f"only {free // 1024} KB free in {folder.resolve()} (the disk is full or nearly:"
                f" the compiler needs about {_SPACE_NEEDED // (1024 * 1024)} MB)"
            )
    lines = [
        line.strip()
        for line in output.splitlines()
        if line.strip() and not line.lstrip().startswith(("-=", "=", "*", "FAIL:"))
    ]
    errors = [line for line in lines if "error" in line.lower() or "problem" in line.lower()]
    return (errors or lines[-1:] or ["no message"])[0]


def build_demo_world(cache_dir: Path, seed: int = 1) -> Path:
    """Return the path of the compiled demo world for `seed`, compiling it into `cache_dir` once.

    The compiled file is reused while a ``.sha256`` file beside it matches this module's source,
    the textworld version and the seed (so editing this module recompiles). Concurrent callers are
    safe: one compiles under a file lock into a temporary folder and renames the story file into
    place; the others wait and reuse it. Raises `GameError` with the compiler's message when
    compiling fails.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    story = cache_dir / demo_world_filename(seed)
    fingerprint = _fingerprint(seed)
    if _is_current(story, fingerprint):
        return story
    try:
        with FileLock(str(story) + ".lock", timeout=COMPILE_LOCK_TIMEOUT_S):
            if not _is_current(story, fingerprint):
                _compile(demo_inform_source(seed), story)
                atomic_write_text(_stamp_path(story), fingerprint + "\n")
    except Timeout as exc:
        raise GameError(f"timed out waiting for another process compiling {story}") from exc
    return story
