"""Which objects are characters, learned from the game's own parser and object tree.

No list of names and no game's words: each object seen in the player's room is asked, on a
second interpreter from the current state (no move spent), "talk to X", "ask X about X" and
"X, hello", with "examine X" as the control. Two things are learned from the answers:

- The game's refusals: what the parser says to talking to a thing ("You can't talk to the
  door!", "You can only do that to something animate."). With the object's own words replaced
  by X, a refusal is one template that at least two objects answer; a character's answer is
  its own ("The ogre isn't much of a conversationalist.", "'Beans! Get your magic beans!'").
  A reply equal to the control's (the parser did not find the object: "You can't see any such
  thing", "It's too dark to see!") or that asks back ("Which button do you mean...?") tells
  nothing. Only a reply's first line is read: what follows is the world going on (a daemon's
  "The bulldozer rumbles slowly toward your home.").
- The animate attribute: Infocom's ACTORBIT, Inform's `animate`, at a number that differs from
  game to game. It is the attribute whose holders answer unlike the refusals while the other
  objects refuse: the score of an attribute is the share of its holders that answered as
  characters minus the share of the others (both smoothed, so one object proves little). The
  player is animate in most games, so the player's own attributes are tried first (score at
  least `PLAYER_SCORE`); when none qualifies, every attribute seen is tried with a stricter
  bar (`ANY_SCORE`, and at least two holders answering), as in a game whose player object
  carries no such flag. Nothing is decided before `MIN_PLAIN` objects without the attribute
  have answered (the refusals are not known before).

A character is an object that has the animate attribute now (an ogre that dies loses it) and
answered as a character. An object is asked again when its attributes change (a robot switched
on), at most `MAX_HEARINGS` times. Measured on the walkthroughs of the 18 games of the suite
(PLAN.md): 90 characters on 13 games, no furniture, door or button taken for one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

PROBES = ("talk to {}", "ask {} about {}", "{}, hello")
"""What is asked of each object ({} is the object's words)."""
CONTROL = "examine {}"
"""The control: a reply equal to its answer is the parser's, not the object's."""
PLAYER_SCORE = 0.3
ANY_SCORE = 0.5
MIN_PLAIN = 5
MAX_HEARINGS = 3
_SIMILAR = 0.75
"""Token overlap (Jaccard) above which a reply is the same template as a refusal."""
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*|[!?.]")
_NAME_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")

Template = tuple[str, ...]


def flags(attributes: bytes) -> frozenset[int]:
    """The numbers of the attribute flags set in `attributes` (attribute 0 is the top bit)."""
    return frozenset(
        8 * i + bit for i, byte in enumerate(attributes) for bit in range(8) if byte & 0x80 >> bit
    )


def template(answer: str, words: str) -> Template:
    """The first non-empty line of `answer`, lower case, as tokens, with the object's `words`
    replaced by X (a run of them by one X)."""
    line = next((part for part in answer.splitlines() if part.strip()), "")
    own = set(_NAME_WORD.findall(words.lower()))
    out: list[str] = []
    for token in _TOKEN.findall(line.lower()):
        token = "X" if token in own else token
        if not (token == "X" and out and out[-1] == "X"):
            out.append(token)
    return tuple(out)


def _similar(one: Template, other: Template) -> bool:
    a, b = set(one), set(other)
    return len(a & b) >= _SIMILAR * len(a | b)


@dataclass
class _Object:
    """What one object answered, and its attributes then."""

    replies: dict[int, Template]
    """Probe index -> the reply's template, for the replies that tell something."""
    attributes: frozenset[int]
    hearings: int = 1


@dataclass
class _Verdict:
    """The animate attribute (None: not known yet) and the objects that answered as characters."""

    attribute: int | None = None
    speakers: frozenset[int] = field(default_factory=frozenset)


class Characters:
    """The evidence of one game, and what it says (see the module docstring)."""

    def __init__(self, player_attributes: Iterable[int] = ()) -> None:
        """`player_attributes`: the player object's attribute numbers, tried first."""
        self._player = sorted(set(player_attributes))
        self._objects: dict[int, _Object] = {}
        self._givers: list[dict[Template, set[int]]] = [{} for _ in PROBES]
        self._alike: list[dict[Template, set[Template]]] = [{} for _ in PROBES]
        self._verdict: _Verdict | None = None

    def wants(self, number: int, attributes: Iterable[int]) -> bool:
        """Whether the object should be asked: never yet, or one of the attributes that may
        mark characters (the player's, the animate one once known) changed since."""
        known = self._objects.get(number)
        if known is None:
            return True
        watched = set(self._player)
        if self._verdict is not None and self._verdict.attribute is not None:
            watched.add(self._verdict.attribute)
        changed = known.attributes ^ frozenset(attributes)
        return bool(changed & watched) and known.hearings < MAX_HEARINGS

    def familiar(self, words: str, answers: Sequence[str | None]) -> bool:
        """Whether every answer is a reply two objects or more gave already (a refusal, most
        likely): the control then tells nothing more and need not be asked."""
        return all(
            a is None or len(self._givers[i].get(template(a, words), ())) >= 2
            for i, a in enumerate(answers)
        )

    def hear(
        self,
        number: int,
        words: str,
        attributes: Iterable[int],
        answers: Sequence[str | None],
        control: str | None = None,
    ) -> None:
        """Keep what the object answered: `answers` to `PROBES` (None for a probe not asked),
        asked with `words` (its name as typed), and `control`, the answer to `CONTROL` (None
        when not asked: the answers are `familiar`)."""
        checked = template(control, words) if control is not None else None
        replies = [template(a, words) if a is not None else () for a in answers]
        told = {i: t for i, t in enumerate(replies) if t and t != checked and t[-1] != "?"}
        previous = self._objects.get(number)
        if previous is not None:
            for i, t in previous.replies.items():
                self._givers[i][t].discard(number)
        hearings = previous.hearings + 1 if previous is not None else 1
        self._objects[number] = _Object(told, frozenset(attributes), hearings)
        for i, t in told.items():
            if t not in self._givers[i]:
                self._alike[i][t] = {u for u in self._givers[i] if _similar(t, u)} | {t}
                for u in self._alike[i][t]:
                    self._alike[i][u].add(t)
            self._givers[i].setdefault(t, set()).add(number)
        self._verdict = None

    @property
    def animate(self) -> int | None:
        """The attribute that marks characters in this game (None while unknown)."""
        return self._decide().attribute

    def among(self, things: Iterable[tuple[int, Iterable[int]]]) -> list[int]:
        """The characters among `things` ((object, its attributes now) pairs), in order."""
        verdict = self._decide()
        if verdict.attribute is None:
            return []
        return [n for n, a in things if n in verdict.speakers and verdict.attribute in set(a)]

    def known(self) -> list[int]:
        """Every object found a character, by its attributes when it last answered."""
        verdict = self._decide()
        return [
            n
            for n in verdict.speakers
            if verdict.attribute is not None and verdict.attribute in self._objects[n].attributes
        ]

    # -- the decision ---------------------------------------------------------------------

    def _decide(self) -> _Verdict:
        """The verdict, computed again only after an object answered."""
        if self._verdict is None:
            everything = sorted({a for o in self._objects.values() for a in o.attributes})
            speech = self._speech(frozenset(everything) | frozenset(self._player))
            self._verdict = (
                self._best(self._player, PLAYER_SCORE, 1, speech)
                or self._best(everything, ANY_SCORE, 2, speech)
                or _Verdict()
            )
        return self._verdict

    def _best(
        self, candidates: Sequence[int], bar: float, least: int, speech: dict[int, frozenset[int]]
    ) -> _Verdict | None:
        """The candidate attribute with the best score over `bar`, with at least `least`
        holders that answered as characters (`speech`: see `_speech`)."""
        best: _Verdict | None = None
        top = bar
        heard = [o for o in self._objects.values() if o.replies]
        for attribute in candidates:
            if sum(1 for o in heard if attribute not in o.attributes) < MIN_PLAIN:
                continue
            speakers = frozenset(n for n, said in speech.items() if attribute in said)
            holders = [n for n, o in self._objects.items() if attribute in o.attributes]
            spoke = sum(1 for n in holders if n in speakers)
            if spoke < least:
                continue
            others = len(self._objects) - len(holders)
            score = spoke / (len(holders) + 1) - (len(speakers) - spoke + 1) / (others + 2)
            if score > top:
                top, best = score, _Verdict(attribute, speakers)
        return best

    def _speech(self, every: frozenset[int]) -> dict[int, frozenset[int]]:
        """For each object, the attributes A under which it answered as a character.

        Read with A, a probe's refusals are the templates two objects or more answered, one of
        them without A (characters share "There is no reply." among themselves only): a
        template t is one unless A is in `common(t)`, the attributes all its givers share.
        A reply is a refusal when it is like one of them, and an object answered as a
        character when one of its replies is like none of its probe's refusals (a probe with
        no refusal tells nothing). Computed for every A at once with sets."""
        shared: list[dict[Template, frozenset[int]]] = []
        silent: list[frozenset[int]] = []  # per probe: the A under which it has no refusal
        for givers in self._givers:
            common = {
                t: frozenset.intersection(*(self._objects[n].attributes for n in who))
                for t, who in givers.items()
                if len(who) >= 2
            }
            shared.append(common)
            silent.append(frozenset.intersection(every, *common.values()))
        speech: dict[int, frozenset[int]] = {}
        for number, heard in self._objects.items():
            said: set[int] = set()
            for i, t in heard.replies.items():
                like = [shared[i][u] for u in self._alike[i][t] if u in shared[i]]
                said |= frozenset.intersection(every, *like) - silent[i]
            if said:
                speech[number] = frozenset(said)
        return speech
