"""The characters in the player's room and in the game's text, for the NPC scope.

`Cast` asks each thing in sight what `characters.Characters` needs (its words typed as the
parser knows them, on a second interpreter, never the game played): a probe whose verb the
parser does not know at all (Inform's "talk to": "That's not a verb I recognise.", the answer
to an unknown verb) is dropped for the game after one try, and the control is asked only when
a reply is one no two objects gave before. It names the characters found: the thing's cleaned
name without what follows a comma and without quotes ("madame sosostris, famous clairvoyante"
-> "madame sosostris"). A character is mentioned when the text holds its name or one of its
head words as whole words: the name's last word and the last word before "of"/"with" ("number
of ghosts" -> "ghosts", "number"; "huge ogre with a club" -> "club", "ogre"). A game with a
per-game list (`game_npcs`, a scenario's `npcs`) is matched by that list instead
(`npcs.match_npcs`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence

from cairn.adapters.game.characters import CONTROL, PROBES, Characters, flags, template
from cairn.adapters.game.ztree import ObjectTree

Asker = Callable[[Sequence[str]], Sequence[str] | None]
"""Answers to commands, each asked from the current state on a second interpreter (None: the
game cannot be asked now)."""

_CONNECTOR = re.compile(r"\s+(?:of|with|in|on|from|and)\s+|[,(]")
_ARTICLE = re.compile(r"^(?:the|a|an|some)\s+")
_SKIP = frozenset(["the", "a", "an", "some", "of", "with", "and", "in", "on", "from"])


def character_name(name: str) -> str:
    """The name a character is known by: before a comma or parenthesis, no quotes or article."""
    head = re.split(r"[,(]", name, maxsplit=1)[0].replace('"', " ")
    return _ARTICLE.sub("", " ".join(head.split()).strip(" '-.")).strip()


def head_words(name: str) -> list[str]:
    """The words that name the character on their own (see the module docstring)."""
    parts = [p.split() for p in _CONNECTOR.split(name) if p.strip()]
    found = [name.split()[-1]] if name.split() else []
    found += [p[-1] for p in parts[:-1]]
    return [w for w in dict.fromkeys(found) if len(w) >= 3 and w not in _SKIP]


def typed_words(name: str, vocabulary: Collection[str] | None, resolution: int) -> str:
    """How to refer to a thing called `name`: its noun (the last word the game's dictionary
    knows, before any "of"/"with"), with the adjective before it when the dictionary knows it
    too ("blue button"); "" when the dictionary knows none of its words. With no dictionary
    (None or empty: none could be read) every word is taken as known."""

    def known(word: str) -> bool:
        return not vocabulary or word in vocabulary or word[:resolution] in vocabulary

    head = [w.strip("'\"") for w in _CONNECTOR.split(name)[0].split()]
    nouns = [w for w in reversed(head) if len(w) > 1 and known(w)]
    if not nouns:
        every = [w.strip("'\"") for w in name.split()]
        nouns = [w for w in reversed(every) if len(w) > 2 and w not in _SKIP and known(w)]
        return nouns[0] if nouns else ""
    noun = nouns[0]
    at = head.index(noun)
    before = head[at - 1] if at > 0 else ""
    return f"{before} {noun}" if before and before not in _SKIP and known(before) else noun


Words = tuple[Collection[str], Collection[str], int]
"""The game's dictionary: every word, the nouns, and how many letters of a word it keeps."""


def _unknown_word(vocabulary: Collection[str], resolution: int) -> str:
    """A word the game's dictionary does not hold (the first of a few no language uses)."""
    words = ("zqxv", "qzjx", "xjqz", "jxzq", "vzqj")
    return next((w for w in words if w[:resolution] not in vocabulary), words[0])


class Cast:
    """The characters of one game (kept across episodes: it is about the game)."""

    def __init__(self) -> None:
        """Know nothing until the player object is read (`start`)."""
        self._characters: Characters | None = None
        self._names: dict[int, str] = {}
        """The name each object asked would have as a character."""
        self._patterns: dict[str, re.Pattern[str]] = {}
        self._probes: list[int] | None = None
        """The `PROBES` this game's parser knows the verb of (None: not tried yet)."""

    def start(self, player_attributes: bytes) -> None:
        """Begin with the player object's attributes (tried first for the animate one)."""
        if self._characters is None:
            self._characters = Characters(flags(player_attributes))

    def read(
        self,
        tree: ObjectTree,
        things: Iterable[int],
        text: str,
        name_of: Callable[[int], str],
        words: Words,
        ask: Asker | None,
    ) -> tuple[list[str], list[str]]:
        """(present, mentioned): the characters among `things` (the objects in sight), and the
        characters ever found that `text` names. `name_of` is an object's cleaned name;
        `ask` answers commands aside (None: no new object is asked this time, as when the
        game has ended)."""
        found = self._characters
        if found is None:
            return [], []
        seen = [(n, flags(tree.attributes(n))) for n in things]
        for number, attributes in seen:
            if ask is None or not found.wants(number, attributes):
                continue
            name = name_of(number)
            typed = typed_words(name, words[0], words[2])
            if typed and self._hear(found, number, typed, attributes, ask, words):
                self._names[number] = character_name(name)
        present = [self._names.get(n, "") for n in found.among(seen)]
        return list(dict.fromkeys(n for n in present if n)), self.mentioned(text)

    def mentioned(self, text: str) -> list[str]:
        """The characters found so far that `text` names (see the module docstring)."""
        if self._characters is None:
            return []
        names = dict.fromkeys(self._names.get(n, "") for n in self._characters.known())
        return [n for n in names if n and self._pattern(n).search(text)]

    def _pattern(self, name: str) -> re.Pattern[str]:
        """The name or one of its head words as whole words, any case (compiled once)."""
        found = self._patterns.get(name)
        if found is None:
            phrases = [r"\s+".join(map(re.escape, p.split())) for p in (name, *head_words(name))]
            found = self._patterns[name] = re.compile(
                rf"(?<!\w)(?:{'|'.join(phrases)})(?!\w)", re.IGNORECASE
            )
        return found

    def _hear(
        self,
        found: Characters,
        number: int,
        typed: str,
        attributes: frozenset[int],
        ask: Asker,
        words: Words,
    ) -> bool:
        """Ask the object the probes (the control too when a reply is new); False when the
        game could not be asked."""
        if self._probes is None:
            self._probes = _known_verbs(ask, words)
        asked = ask([PROBES[i].format(typed, typed) for i in self._probes])
        if asked is None:
            return False
        answers: list[str | None] = [None] * len(PROBES)
        for i, answer in zip(self._probes, asked, strict=True):
            answers[i] = answer
        control = None
        if not found.familiar(typed, answers):
            checked = ask([CONTROL.format(typed)])
            if checked is None:
                return False
            control = checked[0]
        found.hear(number, typed, attributes, answers, control)
        return True


def _known_verbs(ask: Asker, words: Words) -> list[int]:
    """The probes whose verb the parser knows: asked of a noun of the game's dictionary, a
    probe the parser answers as it answers an unknown verb ("That's not a verb I recognise.")
    can never tell a character from a thing, so it is not asked again. All of them when the
    game has no noun or cannot be asked."""
    vocabulary, nouns, resolution = words
    noun = next((n for n in sorted(nouns) if len(n) > 3 and n.isalpha()), "")
    if not noun:
        return list(range(len(PROBES)))
    unknown = _unknown_word(vocabulary, resolution)
    commands = [p.format(noun, noun) for p in PROBES] + [f"{unknown} {noun}"]
    answers = ask(commands)
    if answers is None:
        return list(range(len(PROBES)))
    *replies, refused = [template(a, f"{noun} {unknown}") for a in answers]
    return [i for i, reply in enumerate(replies) if reply != refused]
