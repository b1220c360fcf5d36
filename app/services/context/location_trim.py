"""The location section's blocks: kinds capped, sized without rendering, long ones shortened."""

from __future__ import annotations

import re

from cairn.models.memory import MemoryEntry
from cairn.services.context.builders import entry_block
from cairn.services.context.failure_fold import _fold_head, _folded, _ledger, _piece
from cairn.services.context.ranking import _by_importance_then_recency, _Ranked
from cairn.services.context.tokens import estimate_from_counts


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
