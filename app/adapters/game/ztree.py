"""The Z-machine object tree, read straight from a story file and the interpreter's memory.

Jericho's `get_object(n)` only serves objects up to a per-game limit and hides a few on
purpose: some games keep most rooms above the limit (the player's parent is then "None"),
and a game's `rooms` pseudo-object may be hidden. The Z-machine standard (§12, §3)
fixes the layout of the object table and of the Z-encoded short names, so the whole tree is
read here from the dynamic memory (`FrotzEnv.get_state()[0]`) with the static rest of the
story file behind it. Versions 3 to 8 are read (the suite has 3, 5 and 8).
"""

from __future__ import annotations

from collections.abc import Iterator

_A0 = "abcdefghijklmnopqrstuvwxyz"
_A1 = _A0.upper()
# Z-char 6 of A2 is the ZSCII escape and 7 a new line (the "^" is never printed).
_A2 = "^\n0123456789.,!?_#'\"/\\-:()"
_MAX_DEPTH = 64


def _word(memory: bytes, address: int) -> int:
    """The big-endian 16-bit word at `address`."""
    return (memory[address] << 8) | memory[address + 1]


class ZStory:
    """The fixed facts of one story file: version, table addresses, alphabets, object count."""

    def __init__(self, story: bytes) -> None:
        """Read the header of `story` (a whole story file's bytes)."""
        self.story = story
        self.version = story[0]
        if self.version < 3:
            raise ValueError(f"Z-machine version {self.version} is not read (3 to 8 are)")
        wide = self.version >= 4
        self.entry_size = 14 if wide else 9
        self.object_table = _word(story, 0x0A)
        self.first_entry = self.object_table + (126 if wide else 62)
        self.abbreviations = _word(story, 0x18)
        self.globals = _word(story, 0x0C)
        self.alphabets = self._alphabets()
        self.count = self._count()
        self.names: dict[bytes, str] = {}
        """Short names decoded, by their encoded bytes (a turn reads the same few again)."""

    def _alphabets(self) -> tuple[str, str, str]:
        """The three alphabet rows: the standard ones or the game's own table (v5+)."""
        table = _word(self.story, 0x34) if self.version >= 5 else 0
        if not table:
            return _A0, _A1, _A2
        rows = [
            "".join(chr(b) for b in self.story[table + 26 * r : table + 26 * (r + 1)])
            for r in range(3)
        ]
        return rows[0], rows[1], "^\n" + rows[2][2:]

    def _count(self) -> int:
        """The number of objects: entries run until the lowest property table begins."""
        lowest = len(self.story)
        number = 0
        while True:
            address = self.first_entry + number * self.entry_size
            if address + self.entry_size > min(lowest, len(self.story)):
                return number
            lowest = min(lowest, _word(self.story, address + self.entry_size - 2))
            number += 1

    def tree(self, ram: bytes) -> ObjectTree:
        """The object tree as it stands in `ram` (the interpreter's dynamic memory)."""
        return ObjectTree(self, bytes(ram) + self.story[len(ram) :])


class ObjectTree:
    """A snapshot of the object tree: parent, sibling, child and short name of each object."""

    def __init__(self, story: ZStory, memory: bytes) -> None:
        """`memory` is the whole address space (dynamic memory then the static story file)."""
        self._story = story
        self._memory = memory

    @property
    def count(self) -> int:
        """Objects are numbered 1..count; 0 means "no object"."""
        return self._story.count

    def global_variable(self, index: int) -> int:
        """Global variable `index` (0 is the status line's location in version 3 games)."""
        return _word(self._memory, self._story.globals + 2 * index)

    def _entry(self, number: int) -> int:
        if not 1 <= number <= self._story.count:
            raise IndexError(f"no object {number}")
        return self._story.first_entry + (number - 1) * self._story.entry_size

    def _link(self, number: int, which: int) -> int:
        """Parent (0), sibling (1) or child (2) of `number`; 0 for no object or a bad number."""
        if not 1 <= number <= self._story.count:
            return 0
        address = self._entry(number)
        if self._story.version >= 4:
            return _word(self._memory, address + 6 + 2 * which)
        return self._memory[address + 4 + which]

    def parent(self, number: int) -> int:
        """The object `number` is in, 0 when none."""
        return self._link(number, 0)

    def sibling(self, number: int) -> int:
        """The next object in the same parent, 0 when none."""
        return self._link(number, 1)

    def child(self, number: int) -> int:
        """The first object inside `number`, 0 when none."""
        return self._link(number, 2)

    def attributes(self, number: int) -> bytes:
        """The object's attribute flags as stored (4 bytes, 6 from version 4): open, lit..."""
        if not 1 <= number <= self._story.count:
            return b""
        address = self._entry(number)
        return bytes(self._memory[address : address + (6 if self._story.version >= 4 else 4)])

    def children(self, number: int) -> Iterator[int]:
        """The objects directly inside `number`, in the tree's order (cycles are cut)."""
        seen: set[int] = set()
        child = self.child(number)
        while child and child not in seen:
            seen.add(child)
            yield child
            child = self.sibling(child)

    def ancestors(self, number: int) -> list[int]:
        """`number`'s parent, its parent's parent... up to the top (cycles are cut)."""
        chain: list[int] = []
        current = self.parent(number)
        while current and current not in chain and len(chain) < _MAX_DEPTH:
            chain.append(current)
            current = self.parent(current)
        return chain

    def name(self, number: int) -> str:
        """The object's short name as the game stores it (may be abbreviated or empty)."""
        if not 1 <= number <= self._story.count:
            return ""
        properties = _word(self._memory, self._entry(number) + self._story.entry_size - 2)
        try:
            words = self._memory[properties]
            if words == 0:
                return ""
            encoded = self._memory[properties + 1 : properties + 1 + 2 * words]
            if len(encoded) < 2 or not encoded[-2] & 0x80:  # does not end where it says
                return self._decode(properties + 1)
            names = self._story.names
            name = names.get(encoded)
            if name is None:
                name = names[encoded] = self._decode(properties + 1)
            return name
        except IndexError:
            return ""

    def _decode(self, address: int, expand: bool = True) -> str:
        """The Z-encoded string at `address` (§3): shifts, abbreviations, ZSCII escapes."""
        zchars: list[int] = []
        while True:
            word = _word(self._memory, address)
            address += 2
            zchars += [(word >> 10) & 31, (word >> 5) & 31, word & 31]
            if word & 0x8000:
                break
        out: list[str] = []
        shift = 0
        i = 0
        while i < len(zchars):
            z = zchars[i]
            if z == 0:
                out.append(" ")
            elif z in (1, 2, 3):
                if expand and i + 1 < len(zchars):
                    entry = self._story.abbreviations + 2 * (32 * (z - 1) + zchars[i + 1])
                    out.append(self._decode(2 * _word(self._memory, entry), expand=False))
                i += 1
            elif z in (4, 5):
                shift = z - 3
                i += 1
                continue
            elif shift == 2 and z == 6:
                if i + 2 < len(zchars):
                    code = (zchars[i + 1] << 5) | zchars[i + 2]
                    out.append(chr(code) if 32 <= code < 127 else "")
                i += 2
            else:
                out.append(self._story.alphabets[shift][z - 6])
            shift = 0
            i += 1
        return "".join(out)
