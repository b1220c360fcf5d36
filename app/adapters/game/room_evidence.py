"""What the player's own moves show about the objects around them, for the rooms-root guess.

`rooms.place_player` needs to know whether the top of the player's chain is a room (Inform,
TextWorld) or a container of rooms (Infocom's `rooms`, a region an author moved the rooms into).
The rules that propose a container (`rooms` module: an unnamed top at the start, the location
variable, a compass move between two of its children) read one moment of the tree; a vehicle
or a piece of furniture the player sits in has the same shape as a room inside a container
([vehicle, room] against [room, container]). What the played game has shown settles it:

- a top-level object the player stood directly in is a room (the player never stands directly
  in a container of rooms), so it never holds rooms;
- an object the player got into from beside it (their parent before, its parent now) or got
  out of into its parent is a holder (a vehicle, a bed, a box), never a room, so it is no
  witness that the object around it holds rooms.

A guess is kept with its witnesses (the children it was read from) and dropped as soon as the
evidence contradicts it: its container turns out to be a room, or a witness a holder. Nothing
here reads names or text, and nothing is keyed to a game.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cairn.adapters.game.rooms import PROBE_MOVES, root_from_move


class RoomEvidence:
    """The evidence of one game (kept across episodes: it is about the game, not a state), and
    the current rooms-root guess with the children it was read from."""

    def __init__(self) -> None:
        """Start with no evidence and no guess."""
        self.rooms: set[int] = set()
        """Top-level objects the player stood directly in."""
        self.holders: set[int] = set()
        """Objects the player got into from beside them, or out of into their parent."""
        self.root: int | None = None
        """The object believed to hold the rooms (None: rooms are the tops)."""
        self._witnesses: tuple[int, ...] = ()
        self._last: tuple[int, ...] | None = None
        self._probed: set[tuple[int, int]] = set()
        """(top's child, top) pairs whose moves were tried (`probe`)."""

    def observe(self, chain: Sequence[int]) -> None:
        """Learn from the player's chain (parent first, top last) after a step; drop the guess
        when what is now known contradicts it."""
        now = tuple(chain)
        if len(now) == 1:
            self.rooms.add(now[0])
        last = self._last
        if last is not None and now != last:
            if len(now) == len(last) + 1 and now[1:] == last:
                self.holders.add(now[0])  # got into something standing beside them
            elif len(last) == len(now) + 1 and last[1:] == now:
                self.holders.add(last[0])  # got out of it, into what held it
        self._last = now
        if self.root is not None and not self.allows(self.root, *self._witnesses):
            self.root, self._witnesses = None, ()

    def forget_last(self) -> None:
        """The next chain does not follow from the last one by a move (a reset, a restore)."""
        self._last = None

    def allows(self, root: int, *witnesses: int) -> bool:
        """Whether `root` may hold rooms, read from `witnesses` (its children in the chains the
        rule looked at): it is no room the player stood in, and no witness is a holder."""
        return root not in self.rooms and not any(w in self.holders for w in witnesses)

    def propose(self, root: int | None, *witnesses: int) -> int | None:
        """Take `root` as the guess when the evidence allows it; the guess after that."""
        if root is not None and self.allows(root, *witnesses):
            self.root, self._witnesses = root, witnesses
        return self.root

    def probe(self, chain: Sequence[int], moved: Callable[[str], Sequence[int]]) -> None:
        """Try the compass moves from where `chain` puts the player, once per (top's child,
        top): `moved(move)` is the player's chain after `move` tried aside (on a second
        interpreter: the played game never moves); the first move that walks or drives the
        player from one of the top's children into another proposes the top."""
        if len(chain) < 2 or (chain[-2], chain[-1]) in self._probed:
            return
        self._probed.add((chain[-2], chain[-1]))
        for move in PROBE_MOVES:
            after = moved(move)
            if self.propose(root_from_move(chain, after), chain[-2], *after[-2:-1]) is not None:
                return
