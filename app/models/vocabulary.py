"""Vocabulary: the words a game's parser knows (its dictionary)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Vocabulary:
    """The game's dictionary, lower case. The parser keeps only a word's first `resolution`
    letters (6 in the oldest story files, 9 later), so a longer word is known when its cut is
    ("kitchenette" by "kitchenet")."""

    words: frozenset[str]
    resolution: int = 9

    def knows(self, word: str) -> bool:
        """Whether the parser would read `word` as one of its words."""
        lowered = word.lower()
        cut = lowered[: self.resolution]
        return lowered in self.words or (len(lowered) > self.resolution and cut in self.words)
