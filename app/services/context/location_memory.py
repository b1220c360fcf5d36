"""The "Location Memory" section: a room's memories chosen by what each is for, under a budget."""

from __future__ import annotations

from cairn.interfaces.memory_service import IMemoryReader
from cairn.models.memory import MemoryCategory, MemoryEntry
from cairn.services.context.builders import ContextRequest, Section, SectionBuilder
from cairn.services.context.failure_fold import _ledger
from cairn.services.context.location_trim import (
    _brief,
    _Group,
    _SectionSize,
    _size,
    _tail_lines,
)
from cairn.services.context.memo import _Memo
from cairn.services.context.ranking import _by_importance_then_recency, is_visit_summary

FIRST_VISIT = "First visit - no prior experiences"
"""The text for a location with no memories that has not been visited before."""


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


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
        named: bool = True,
    ) -> None:
        super().__init__(priority=priority, title=title)
        self._memory = memory
        self.named = named
        """Whether the text opens with "Location Memory for {room}:" (the adventurer's does
        not: its room section names the room)."""
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
        head = [f"Location Memory for {where}:"] if self.named else []
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
