"""ListMemo: an answer kept for a list of the very same objects.

Play reads the same store lists turn after turn: a store hands out copies of its cached lists,
holding the same memory objects until one of them changes (a change is a new object). A
computation over such a list (which of them are over, which are notes of unknown words) gives
the same answer for a list of the same objects in the same order, so it is kept and handed
back after a check of identity alone, without reading the memories again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from operator import is_
from typing import Generic, TypeVar

A = TypeVar("A")


class ListMemo(Generic[A]):
    """Answers by list, for at most `kept` lists (the least recently used go first)."""

    def __init__(self, kept: int = 64) -> None:
        self._kept = kept
        self._answers: OrderedDict[tuple[int, int], tuple[Hashable, list[object], A]] = (
            OrderedDict()
        )

    def get(self, items: Sequence[object], context: Hashable = None) -> tuple[bool, A | None]:
        """(True, the answer) kept for a list of these very objects and this `context`."""
        if not items:
            return False, None
        key = (id(items[0]), len(items))
        kept = self._answers.get(key)
        if kept is None or kept[0] != context or not all(map(is_, kept[1], items)):
            return False, None
        self._answers.move_to_end(key)
        return True, kept[2]

    def put(self, items: Sequence[object], answer: A, context: Hashable = None) -> None:
        """Keep `answer` for `items` (a copy of the list is kept, holding its objects)."""
        if not items:
            return
        self._answers[(id(items[0]), len(items))] = (context, list(items), answer)
        while len(self._answers) > self._kept:
            self._answers.popitem(last=False)
