"""Builders that read memories through IMemoryReader: location, adjacent, NPC, world, top."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Generic, TypeVar

from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.memory import LocationRecord, MemoryCategory, MemoryEntry, MemorySource
from cairn.services.context.builders import (
    ContextRequest,
    Section,
    SectionBuilder,
    dated_bullet,
    entry_block,
    one_line,
)
from cairn.services.context.tokens import estimate_from_counts
from cairn.services.map import normalize_direction
from cairn.services.outcomes import Command, failed_commands

_UNKNOWN_NOTE = re.compile(r"does not know the word '([\w-]+)'")
"""An agent note that the game does not know a word (folded into one line)."""

FIRST_VISIT = "First visit - no prior experiences"
"""The text for a location with no memories that has not been visited before."""

_Ranked = tuple[int, MemoryEntry]
"""A memory with its position in the oldest-first query answer (higher = newer)."""
_T = TypeVar("_T")


@lru_cache(maxsize=4096)
def _unknown_word(text: str) -> str | None:
    """The word an agent note says the game does not know (kept per text)."""
    found = _UNKNOWN_NOTE.search(text)
    return found.group(1) if found else None


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _by_importance_then_recency(item: _Ranked) -> tuple[int, int]:
    return (item[1].importance, item[0])


def is_visit_summary(entry: MemoryEntry) -> bool:
    """A "Visit to ..." summary of the messages at a location (not an action's memory)."""
    return entry.source is MemorySource.VISIT


class _Group:
    """One kind of memory in a location block, with its cap. Failure ledgers (one memory per
    room and object) are folded into one block listing every command that failed here
    (`_folded`): the cap counts that block once, the token limit still counts each command."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.entries: list[_Ranked] = []
        self.brief: set[int] = set()
        """The entries (by rank) shown shortened (`_brief`) to make room."""

    def render(self) -> list[str]:
        blocks: list[str] = []
        ledgers = [e for _, e in self.entries if _ledger(e)]
        for rank, entry in self.entries:
            if not _ledger(entry):
                blocks.append(_short_block(entry) if rank in self.brief else _block(entry))
            elif entry is ledgers[0]:
                blocks.append(_folded(ledgers))
        return blocks

    def capped(self) -> None:
        """Keep the most important (then newest) blocks up to the cap, in their order: the
        ledgers count as the one block they are folded into."""
        best = sorted(self.entries, key=_by_importance_then_recency, reverse=True)
        kept: list[_Ranked] = []
        blocks = 0
        folded = False
        for ranked in best:
            if _ledger(ranked[1]):
                if not folded:
                    if blocks >= self.cap:
                        continue
                    blocks, folded = blocks + 1, True
            elif blocks >= self.cap:
                continue
            else:
                blocks += 1
            kept.append(ranked)
        self.entries = sorted(kept)


_FOLD_TITLE = "[FAILURE] Did not work here"
_FOLD_LEAD = "Tried here, did not work:"


def _ledger(entry: MemoryEntry) -> list[str]:
    """The commands of a failure ledger (`outcomes.failure_text`), [] for any other memory."""
    if entry.category is not MemoryCategory.FAILURE:
        return []
    return _ledger_commands(entry.text)


@lru_cache(maxsize=4096)
def _ledger_commands(text: str) -> list[str]:
    return failed_commands(text)


def _piece(entry: MemoryEntry) -> str:
    """A ledger's commands as the folded block lists them, the verbs on one thing together:
    `take/push/pull drawer`, `north/up`, `unlock door with key`."""
    return _commands_piece(tuple(_ledger(entry)))


@lru_cache(maxsize=4096)
def _commands_piece(commands: tuple[str, ...]) -> str:
    if all(normalize_direction(c) is not None for c in commands):
        return "/".join(commands)
    parsed = [Command.parse(c) for c in commands]
    thing = parsed[0].object if parsed else ""
    if thing and all(p.object == thing and f"{p.verb} {thing}" == c for p, c in zip(
        parsed, commands, strict=True
    )):
        return f"{'/'.join(p.verb for p in parsed)} {thing}"
    return "; ".join(commands)


def _episodes(entries: list[MemoryEntry]) -> str:
    """`(Ep1-3)` for the episodes of `entries`, "" when none is known."""
    found = sorted({e.episode for e in entries if e.episode is not None})
    if not found:
        return ""
    span = f"{found[0]}" if found[0] == found[-1] else f"{found[0]}-{found[-1]}"
    return f" (Ep{span})"


def _fold_head(entries: list[MemoryEntry]) -> str:
    return f"{_FOLD_TITLE}{_episodes(entries)}\n{_FOLD_LEAD} ."


def _folded(ledgers: list[MemoryEntry]) -> str:
    """Every failure ledger of a room as one block: one heading, then every command."""
    commands = "; ".join(_piece(e) for e in ledgers)
    return f"{_FOLD_TITLE}{_episodes(ledgers)}\n{_FOLD_LEAD} {commands}."


class _Memo(Generic[_T]):
    """Sections (or choices) already made, by what they were made from: memory entries are
    replaced, never changed, so the ids of the entry objects (kept alive here with the value)
    name what a section shows. A turn in a room whose memories did not change builds
    nothing again."""

    def __init__(self, kept: int = 256) -> None:
        self._kept = kept
        self._values: dict[tuple[object, ...], tuple[object, _T]] = {}

    def get(self, key: tuple[object, ...]) -> _T | None:
        hit = self._values.get(key)
        return hit[1] if hit is not None else None

    def put(self, key: tuple[object, ...], alive: object, value: _T) -> _T:
        if len(self._values) >= self._kept:
            self._values.clear()
        self._values[key] = (alive, value)
        return value


_RENDERED: dict[int, tuple[MemoryEntry, str]] = {}
"""Blocks (`entry_block`) by entry object (entries are replaced, never changed): a prompt
re-renders only the memories that changed since the last one."""
_RENDERED_KEPT = 4096


class _SectionSize:
    """What a location section would cost (`estimate_tokens` of its rendered text), kept in
    step as memories are dropped from it, without rendering it: blocks are joined by blank
    lines, so characters and words add up."""

    def __init__(self, head: list[str], groups: list[_Group]) -> None:
        ledgers = [e for g in groups for _, e in g.entries if _ledger(e)]
        blocks = [
            *head,
            *([_fold_head(ledgers)] if ledgers else []),
            *(_sized_block(e) for g in groups for _, e in g.entries),
        ]
        sizes = [_size(b) for b in blocks]
        self._head = len(head)
        self._count = len(sizes)
        self._chars = sum(c for c, _ in sizes)
        self._words = sum(w for _, w in sizes)

    def drop(self, entry: MemoryEntry, brief: bool = False) -> None:
        chars, words = _size(_short_block(entry) if brief else _sized_block(entry))
        self._count -= 1
        self._chars -= chars
        self._words -= words

    def shorten(self, entry: MemoryEntry) -> None:
        """`entry` is shown shortened (`_brief`) instead of whole."""
        (chars, words), (short_chars, short_words) = (
            _size(_block(entry)),
            _size(_short_block(entry)),
        )
        self._chars += short_chars - chars
        self._words += short_words - words

    def tokens(self, hidden: int) -> int:
        tail = [_size(b) for b in _tail_lines(self._count > self._head, hidden)]
        count = self._count + len(tail)
        chars = self._chars + sum(c for c, _ in tail) + 2 * (count - 1)
        return estimate_from_counts(chars, self._words + sum(w for _, w in tail))


def _tail_lines(any_shown: bool, hidden: int) -> list[str]:
    """The lines after a location's memories: none shown, and how many are not."""
    tail = [] if any_shown else ["No memories to show for this location."]
    if hidden:
        tail.append(f"(+{hidden} more memories not shown)")
    return tail


_SIZES: dict[str, tuple[int, int]] = {}
_SIZES_KEPT = 4096


def _size(block: str) -> tuple[int, int]:
    """A block's characters and words (kept per block text)."""
    hit = _SIZES.get(block)
    if hit is None:
        if len(_SIZES) >= _SIZES_KEPT:
            _SIZES.clear()
        hit = _SIZES[block] = (len(block), len(block.split()))
    return hit


def _sized_block(entry: MemoryEntry) -> str:
    """What an entry adds to a location section: its block, or a ledger's commands."""
    return _piece(entry) if _ledger(entry) else _block(entry)


def _block(entry: MemoryEntry) -> str:
    """`entry_block(entry)`, kept per entry object."""
    hit = _RENDERED.get(id(entry))
    if hit is not None and hit[0] is entry:
        return hit[1]
    if len(_RENDERED) >= _RENDERED_KEPT:
        _RENDERED.clear()
    text = entry_block(entry)
    _RENDERED[id(entry)] = (entry, text)
    return text


def _short_block(entry: MemoryEntry) -> str:
    """`entry`'s block with a long text shortened (`_brief`)."""
    return entry_block(_brief(entry))


_BRIEF_CHARS = 240
"""A location memory longer than this is shown as its start and what an agent acts on."""
_ACTIONABLE = re.compile(
    r"Needs held: .+?\.(?=\s|$)|Later, [^:]{1,60}: [^(]{1,60} \(Ep\d+, T\d+(?:: \"[^\"]*\")?\)\.|"
    r"'[^']{1,60}' had failed here before(?: \(Ep\d+\))?\.|Steps first: .*$"
)
"""The sentences a procedure's memory adds for whoever replays it (`preconditions`,
`outcomes.later_note`, `outcomes.with_steps`): kept whole when a long memory is shortened."""


def _brief(entry: MemoryEntry) -> MemoryEntry:
    """`entry` with a long text (a room's whole description quoted in a score's memory) cut to
    its start and the sentences an agent acts on: what had to be held, what later differed,
    the steps. The store keeps the whole text; the prompt's room for failures does not go to
    a quoted description."""
    text = " ".join(entry.text.split())
    if len(text) <= _BRIEF_CHARS:
        return entry
    kept = [m.group(0) for m in _ACTIONABLE.finditer(text)]
    head = _ACTIONABLE.sub(" ", text)
    head = " ".join(head.split())
    room = max(80, _BRIEF_CHARS - sum(len(k) + 1 for k in kept))
    if len(head) > room:
        head = head[: room - 3].rstrip() + "..."
    return entry.model_copy(update={"text": " ".join([head, *kept])})


class LocationMemoryBuilder(SectionBuilder):
    """The "Location Memory" blocks, chosen by what each memory is for, not by recency.

    Kinds, in this order: dangers (with their cause), procedures that worked (with their
    prerequisite steps), what was tried and did not work (every failure ledger of the room
    folded into one block listing every failed command, without the game's answers), open leads
    (discoveries, then notes), and at most the latest visit summary.
    Each kind keeps its most important (then newest) memories up to its cap, shown oldest first.
    While the text is over ``max_tokens``, memories are dropped least useful kind first: visit
    summaries, then notes, discoveries; then long memories still shown are shortened to their
    start and the sentences an agent acts on (`_brief`); then failures, successes, dangers go;
    inside a kind the least important (then oldest). Everything left out is counted in a closing
    ``(+K more memories not shown)`` line.
    """

    default_name = "location_memory"
    default_title = "Location Memory"
    default_priority = 10

    def __init__(
        self,
        memory: IMemoryReader,
        *,
        max_successes: int = 5,
        max_failures: int = 12,
        max_other: int = 3,
        max_tokens: int = 500,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._memory = memory
        self._max_successes = max_successes
        self._max_failures = max_failures
        self._max_other = max_other
        self.max_tokens = max_tokens
        self._built: _Memo[Section] = _Memo()
        self._chosen: _Memo[tuple[list[_Group], int]] = _Memo()

    def build(self, request: ContextRequest) -> Section | None:
        loc_id = request.location_id
        if loc_id is None:
            return None
        record = self._memory.location_record(loc_id)
        entries = [e for e in self._memory.location_memories(loc_id) if e.visible]
        if not entries and (record is None or record.visits <= 1):
            return self.section(FIRST_VISIT)
        name = request.location_name or (record.name if record else "")
        visits = record.visits if record is not None else 0
        episodes = len(set(record.episodes)) if record is not None else 0
        where = f"{name} (Location {loc_id})" if name else f"Location {loc_id}"
        head = [f"Location Memory for {where}:"]
        if visits > 0:
            head.append(
                f"You've been here {_plural(visits, 'time')} "
                f"across {_plural(episodes, 'episode')}."
            )
        key = (self.max_tokens, *head, *map(id, entries))
        built = self._built.get(key)
        if built is None:
            # which memories fit depends on the head only through its size: a new visit count
            # of the same length keeps the choice (made again only when the memories change)
            sizes = [_size(line) for line in head]
            chars, words = sum(c for c, _ in sizes), sum(w for _, w in sizes)
            size_key = (self.max_tokens, len(head), chars, words, *map(id, entries))
            chosen = self._chosen.get(size_key) or self._chosen.put(
                size_key, entries, self._choose(head, entries)
            )
            groups, hidden = chosen
            text = self._render(head, groups, hidden)
            ids = [e.id for g in groups for _, e in g.entries]
            built = self._built.put(key, entries, self.section(text, ids))
        return built

    def _choose(self, head: list[str], entries: list[MemoryEntry]) -> tuple[list[_Group], int]:
        """The memories shown, by kind, and how many are not, under `max_tokens`."""
        groups = self._grouped(entries)
        hidden = len(entries) - sum(len(g.entries) for g in groups)
        # the least useful kind goes first: visits, notes, discoveries, successes, failures, ...
        # and in a kind the least important, then the oldest (sized from each block's
        # characters and words: what the rendered text would cost)
        size = _SectionSize(head, groups)
        failures = groups[2]
        for group in reversed(groups):
            if group is failures and size.tokens(hidden) > self.max_tokens:
                # before a failure goes, long memories still shown are shortened to their start
                # and what an agent acts on (a score's memory quoting a whole room)
                for kept in groups:
                    for rank, entry in kept.entries:
                        if not _ledger(entry) and _brief(entry) is not entry:
                            size.shorten(entry)
                            kept.brief.add(rank)
            dropped: set[int] = set()
            for victim in sorted(group.entries, key=_by_importance_then_recency):
                if size.tokens(hidden) <= self.max_tokens:
                    break
                dropped.add(victim[0])
                size.drop(victim[1], victim[0] in group.brief)
                hidden += 1
            if dropped:
                group.entries = [r for r in group.entries if r[0] not in dropped]
        return groups, hidden

    def _grouped(self, entries: list[MemoryEntry]) -> list[_Group]:
        dangers = _Group(self._max_other)
        worked = _Group(self._max_successes)
        failed = _Group(self._max_failures)
        found = _Group(self._max_other)
        notes = _Group(self._max_other)
        visits = _Group(1)
        for ranked in enumerate(entries):
            entry = ranked[1]
            if is_visit_summary(entry):
                visits.entries.append(ranked)
            elif entry.category is MemoryCategory.DANGER:
                dangers.entries.append(ranked)
            elif entry.category is MemoryCategory.SUCCESS:
                worked.entries.append(ranked)
            elif entry.category is MemoryCategory.FAILURE:
                failed.entries.append(ranked)
            elif entry.category is MemoryCategory.DISCOVERY:
                found.entries.append(ranked)
            else:
                notes.entries.append(ranked)
        groups = [dangers, worked, failed, found, notes, visits]  # `_choose` reads failed as [2]
        for group in groups:
            if group is visits:
                group.entries = group.entries[-1:]
                continue
            group.capped()
        return groups

    @classmethod
    def _render(cls, head: list[str], groups: list[_Group], hidden: int) -> str:
        blocks = [*head, *(block for g in groups for block in g.render())]
        return "\n\n".join([*blocks, *_tail_lines(any(g.entries for g in groups), hidden)])


class AdjacentMemoryBuilder(SectionBuilder):
    """Adjacent memories: up to ``max_rooms`` neighbours with memories, by id, each with
    its ``per_room`` most important (then newest) memories."""

    default_name = "adjacent_memory"
    default_title = "Memories for Adjacent Locations"
    default_priority = 40

    def __init__(
        self,
        memory: IMemoryReader,
        *,
        max_rooms: int = 5,
        per_room: int = 3,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._memory = memory
        self.max_rooms = max_rooms
        self.per_room = per_room
        self._rooms: _Memo[Section] = _Memo()

    def build(self, request: ContextRequest) -> Section | None:
        loc_id = request.location_id
        if loc_id is None or self.max_rooms <= 0 or self.per_room <= 0:
            return None
        blocks: list[str] = []
        shown: list[str] = []
        for adj_id, entries in sorted(self._memory.adjacent_memories(loc_id).items()):
            if len(blocks) >= self.max_rooms:
                break
            if adj_id == loc_id or not any(e.visible for e in entries):
                continue
            name = self._room_name(self._memory.location_record(adj_id), entries)
            key = (self.per_room, adj_id, name, *map(id, entries))
            room = self._rooms.get(key) or self._rooms.put(
                key, entries, self._room(adj_id, name, entries)
            )
            blocks.append(room.text)
            shown.extend(room.memory_ids)
        return self.section("\n\n".join(blocks), shown) if blocks else None

    def _room(self, adj_id: int, name: str, entries: list[MemoryEntry]) -> Section:
        """One neighbour's block (a section's text and memory ids, joined into the real one)."""
        ranked = [r for r in enumerate(entries) if r[1].visible]
        # a visit summary only stands for a room that has nothing better
        actions = [r for r in ranked if not is_visit_summary(r[1])]
        top = sorted(actions or ranked, key=_by_importance_then_recency, reverse=True)
        top = top[: self.per_room if actions else 1]
        label = f"Location {adj_id} ({name})" if name else f"Location {adj_id}"
        lines = [f"**{label}:**", *(entry_block(e) for _, e in top)]
        return self.section("\n".join(lines), [e.id for _, e in top])

    @staticmethod
    def _room_name(record: LocationRecord | None, entries: list[MemoryEntry]) -> str:
        if record is not None and record.name:
            return record.name
        names = [e.location_name for e in entries if e.location_name]
        return names[-1] if names else ""


class _LastEntriesBuilder(SectionBuilder):
    """Shared shape of the narrative builders: last N entries as dated bullets."""

    def __init__(
        self,
        memory: IMemoryReader,
        *,
        last_n: int = 3,
        max_chars: int = 200,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._memory = memory
        self.last_n = last_n
        self.max_chars = max_chars

    def _bullets(self, entries: list[MemoryEntry], shown: list[str] | None = None) -> list[str]:
        """Bullets of the last N visible entries; their ids are appended to `shown`."""
        if self.last_n <= 0:
            return []
        picked = [e for e in entries if e.visible][-self.last_n :]
        if shown is not None:
            shown.extend(e.id for e in picked)
        return [dated_bullet(e, self.max_chars) for e in picked]


class NarrativeLocationMemoryBuilder(_LastEntriesBuilder):
    """The "Recent Location Memory" section: the last N memories of the current location."""

    default_name = "recent_location_memory"
    default_title = "Recent Location Memory"
    default_priority = 10

    def build(self, request: ContextRequest) -> Section | None:
        loc_id = request.location_id
        if loc_id is None:
            return None
        shown: list[str] = []
        bullets = self._bullets(self._memory.location_memories(loc_id), shown)
        return self.section("\n".join(bullets), shown) if bullets else None


class NpcMemoryBuilder(_LastEntriesBuilder):
    """The "NPC Memory" section: for each NPC present, its last N memories under its name."""

    default_name = "npc_memory"
    default_title = "NPC Memory"
    default_priority = 20

    def build(self, request: ContextRequest) -> Section | None:
        blocks: list[str] = []
        shown: list[str] = []
        for npc_id in dict.fromkeys(request.npc_ids_present):
            bullets = self._bullets(self._memory.npc_memories(npc_id), shown)
            if not bullets:
                continue
            npc = request.game_state.npcs.get(npc_id)
            name = npc.name if npc is not None and npc.name else npc_id
            label = f"{name} ({npc_id})" if name != npc_id else npc_id
            blocks.append("\n".join([f"{label}:", *bullets]))
        return self.section("\n\n".join(blocks), shown) if blocks else None


class WorldMemoryBuilder(_LastEntriesBuilder):
    """The "World Memory" section: the last N world memories."""

    default_name = "world_memory"
    default_title = "World Memory"
    default_priority = 30

    def build(self, request: ContextRequest) -> Section | None:
        shown: list[str] = []
        bullets = self._bullets(self._memory.world_memories(), shown)
        return self.section("\n".join(bullets), shown) if bullets else None


class TopNotesBuilder(SectionBuilder):
    """The N most important memories of any scope: ``- [importance] title: text``."""

    default_name = "top_notes"
    default_title = "Most Important Memories"
    default_priority = 50

    def __init__(
        self,
        memory: IMemoryReader,
        *,
        limit: int = 5,
        max_chars: int = 200,
        priority: int | None = None,
        title: str | None = None,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._memory = memory
        self.limit = limit
        self.max_chars = max_chars

    def build(self, request: ContextRequest) -> Section | None:
        if self.limit <= 0:
            return None
        words = [
            (e, word) for e in self._memory.world_memories() if (word := _unknown_word(e.text))
        ]
        folded = {e.id for e, _ in words}
        top = [
            e
            for e in self._memory.top_memories(limit=self.limit * 3 + len(folded))
            if e.visible and not is_visit_summary(e) and e.id not in folded
        ][: self.limit]
        lines = []
        for e in top:
            text = one_line(e.text, self.max_chars)
            title = one_line(e.title)
            lines.append(f"- [{e.importance}] {title}: {text}".removesuffix(": "))
        if words:
            # one line for every word the game said it does not know, however many there are
            unknown = ", ".join(f"'{w}'" for w in dict.fromkeys(w for _, w in words))
            lines.append(f"- Words the game does not know: {unknown}")
        shown = [*(e.id for e in top), *(e.id for e, _ in words)]
        return self.section("\n".join(lines), shown) if lines else None
