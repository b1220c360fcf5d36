"""Where the player is: the room around them, climbing out of vehicles, furniture and containers.

The rule, checked on all 18 games of the suite (see `tests/integration/test_jericho_rooms.py`)
and on games whose rooms sit in one container (`tests/integration/test_unusual_trees.py`):

- Walk up the object tree from the player: parent, grandparent... to an object whose parent
  is 0 (the top).
- Some games keep every room inside one top-level container (the rooms root): Infocom's
  `rooms` object, a game that moves its rooms into a region. The room is then the ancestor
  just under that container, also when the player sits in a vehicle or on furniture in that
  room. Distinct rooms that share the
  container stay distinct.
- Other games (Inform, TextWorld) keep rooms at the top: the room is the top of the chain
  (a bedroom around the bed the player lies in; rooms whose objects have no names still are
  the top).
- The top is known to be a rooms root, never by its name or a game's words, when:
  1. at the start it has no name and the object under it has one;
  2. the game's own location variable (global 0: the status line's location in version 3,
     Z-machine standard §8.2.2, and the first global of the Inform and ZIL libraries) names the
     object just under it (a rooms object may have a name of its own);
  3. one compass move takes the player from one of its children straight into another, or
     carries them in a vehicle from one into another (`root_from_move`): a room holds
     furniture, never a room one walks into. The adapter tries the moves on a second
     interpreter, so the played game never moves.
  Until one of these holds the top is the room. A vehicle or a bed has the shape of a room
  in a container ([boat, river] against [room, rooms]): `room_evidence.RoomEvidence` keeps
  what the played game showed (tops the player stood in are rooms; what the player got into
  from beside it is a holder) and refuses, or later drops, a guess that contradicts it.
- What lies between the player and the room (boat, bed, chair, dumbwaiter) is context, never a
  location.
- A game may put the player in a bed that lives in an unnamed object of globals, outside
  every room: the chain never reaches `rooms`. Version 3 story files keep the location in global
  variable 0: it is used when it names a room. Otherwise the location is unknown (None), never
  invented.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from cairn.adapters.game.ztree import ObjectTree
from cairn.models.directions import DIRECTIONS

_MAX_STATE = 2000  # objects x 2: a bound on a malformed (cyclic) tree

PROBE_MOVES = tuple(d for d in DIRECTIONS if d not in ("in", "out"))
"""The moves tried to tell a rooms root from a room (`in` and `out` enter and leave furniture)."""


@dataclass(frozen=True)
class Placement:
    """The room around the player (None when the tree says none) and what holds them there.

    `holders` runs from the object the player is directly in outwards (bed, then nothing).
    """

    room: int | None
    holders: tuple[int, ...] = ()

    @property
    def holder(self) -> int:
        """The object the player is directly in, 0 when they stand in the room itself."""
        return self.holders[0] if self.holders else 0


def find_rooms_root(tree: ObjectTree, player: int) -> int | None:
    """The Infocom `rooms` pseudo-object, from the player's start: None for Inform/TextWorld.

    It is the top of the player's chain when that top has no name and the object under it
    (the start room) has one.
    """
    chain = tree.ancestors(player)
    if len(chain) >= 2 and not tree.name(chain[-1]).strip() and tree.name(chain[-2]).strip():
        return chain[-1]
    return None


def root_from_location(chain: Sequence[int], location: int) -> int | None:
    """The top of the player's `chain` when the game's location variable (`location`) names
    the object just under it: that top holds rooms. None otherwise."""
    if len(chain) >= 2 and location == chain[-2]:
        return chain[-1]
    return None


def root_from_move(before: Sequence[int], after: Sequence[int]) -> int | None:
    """The top of the tree when a compass move took the player from under one of its children
    (`before`, the chain before the move) straight into another (`after` is [child, top]), or
    carried them, in the same vehicle, from one of its children into another (`after` is
    [vehicle..., child, top] with the vehicle's part of `before`): that top holds rooms. None
    otherwise. (A move that shows the same shape between two holders in one room is ruled
    out by `RoomEvidence`, which knows the holders.)"""
    if len(before) < 2 or len(after) < 2:
        return None
    if len(after) != 2 and tuple(after[:-2]) != tuple(before[:-2]):
        return None
    if before[-1] != after[-1] or before[-2] == after[-2]:
        return None
    return after[-1]


def place_player(
    tree: ObjectTree,
    player: int,
    rooms_root: int | None,
    status_room: int = 0,
    rooms: Collection[int] = (),
) -> Placement:
    """The room around `player` (see the module docstring for the rule).

    `status_room` is a version 3 game's location global (0 when there is none): it is only used
    when the chain does not reach the rooms object and it names a room. `rooms` are top-level
    objects known to be rooms (the player stood in them): a chain that ends in one outside the
    rooms object is in that room.
    """
    chain = tree.ancestors(player)
    if not chain:
        return Placement(None)
    if rooms_root is None or (chain[-1] != rooms_root and chain[-1] in rooms):
        return Placement(chain[-1], tuple(chain[:-1]))
    for index, ancestor in enumerate(chain):
        if tree.parent(ancestor) == rooms_root:
            return Placement(ancestor, tuple(chain[:index]))
    named = []
    for ancestor in chain:  # the bed, not the unnamed pseudo-objects that hold it
        if not tree.name(ancestor).strip():
            break
        named.append(ancestor)
    if status_room and tree.parent(status_room) == rooms_root:
        return Placement(status_room, tuple(named))
    return Placement(None, tuple(named))


def visible_things(tree: ObjectTree, placement: Placement, player: int) -> list[int]:
    """The objects directly in the room and in what holds the player, the player left out."""
    if placement.room is None:
        return []
    found: list[int] = []
    for container in (placement.room, *reversed(placement.holders)):
        for child in tree.children(container):
            if child != player and child not in found:
                found.append(child)
    return found


_TEXT_WORD = re.compile(r"[a-z][a-z\-]*")


def named_inside(
    tree: ObjectTree,
    placement: Placement,
    player: int,
    things: list[int],
    text: str,
    named: set[tuple[object, ...]],
    name_of: Callable[[str], str],
) -> list[int]:
    """The things inside `things` (an egg in a nest, a bottle on a table) that the game's text
    has named while they were there: in sight, as a look shows them. Kept (in `named`: room,
    holder, the holder's attributes, thing) while they stay where they were named and their
    holder stays as it was (a box closed hides them again); what a text never named (a closed
    box's contents) is left out. `name_of` cleans a tree name."""
    room = placement.room
    words: set[str] | None = None  # the text's words, read when a thing is first checked
    found: list[int] = []
    for parent in things:
        for child in tree.children(parent):
            if child == player or child in things:
                continue
            seen = (room, parent, tree.attributes(parent), child)
            if seen not in named:
                name = name_of(tree.name(child))
                noun = name.split()[-1] if name else ""
                if words is None:
                    words = set(_TEXT_WORD.findall(text.lower()))
                if len(noun) < 3 or noun not in words:
                    continue
                named.add(seen)
            found.append(child)
    return found


def room_state(tree: ObjectTree, placement: Placement, player: int) -> tuple[object, ...]:
    """What changes when something in the room moves or changes state (a chest is opened): the
    objects inside the room, at any depth, with their attribute flags (the player's own
    belongings left out)."""
    if placement.room is None:
        return ()
    state: list[object] = [placement.room, placement.holder]
    pending = [placement.room]
    while pending and len(state) < _MAX_STATE:
        for child in tree.children(pending.pop()):
            if child != player:
                state += [child, tree.attributes(child)]
                pending.append(child)
    return tuple(state)
