"""Endings read by rules: the game's own ending text, and whether the last command caused a death.

A death is blamed on the last command only when the death follows that command's own answer
(`jump` -> "You jump... You have died"). A death that comes after the command's ordinary answer
("Taken." then "The bomb goes off"), after a command that does nothing to the world (`wait`,
`look`), or whose text names hunger, thirst, air or time, is an ending of the world (clock,
hunger, air or plot), never a danger of the command.

`death_cause` reads the words alone; `causes.diagnose` reads the episode's turns too (a room last
described as dark, a light that went out, an attacker, a fall) and says where the cause lies.
"""

from __future__ import annotations

import re
from enum import StrEnum

from cairn.services.outcomes import NEVER_FAIL_VERBS, READING_VERBS, Command, is_failure


class DeathCause(StrEnum):
    """Why an episode ended in death."""

    COMMAND = "command"
    """The command's own effect (`jump` off a cliff)."""
    TRAP = "trap"
    """A trap or a fall the command set off (a move into a pit): the command is the danger."""
    DARKNESS = "darkness"
    """Acting in a room last described as dark, with no light lit since: the room is the cause."""
    LIGHT = "light"
    """A light ran out, and the dark that followed killed (a timer)."""
    CLOCK = "clock"
    HUNGER = "hunger"
    AIR = "air"
    COMBAT = "combat"
    """An attacker named in the death text."""
    PLOT = "plot"


CAUSE_WORDS = {
    DeathCause.COMMAND: "by a command",
    DeathCause.TRAP: "a trap or a fall",
    DeathCause.DARKNESS: "in the dark without a light",
    DeathCause.LIGHT: "a light ran out",
    DeathCause.CLOCK: "time ran out",
    DeathCause.HUNGER: "hunger or thirst",
    DeathCause.AIR: "out of air",
    DeathCause.COMBAT: "an attacker",
    DeathCause.PLOT: "an event",
}
BLAMES_COMMAND = frozenset([DeathCause.COMMAND, DeathCause.TRAP])
"""Causes that make the last command a danger where it was taken."""

_BANNER = re.compile(r"\*{2,}[^*\n]*\*{2,}")
_DEATH_BANNER = re.compile(r"\*+\s*you (?:have )?(?:died|lost|are dead)\s*\*+", re.IGNORECASE)
_PROMPT_LINE = re.compile(
    r"^\s*(?:would you like to|do you want to|please (?:type|answer|enter)|\[?(?:hit|press) "
    r"any key|>).*$|^.*\b(?-i:RESTART|RESTORE|QUIT|UNDO)\b.*$",
    re.IGNORECASE | re.MULTILINE,
)
_CAUSE_PATTERNS = (
    (DeathCause.HUNGER, re.compile(r"\b(starv\w*|hunger|hungry|thirst\w*|dehydrat\w*)\b", re.I)),
    (
        DeathCause.AIR,
        re.compile(
            r"\b(suffocat\w*|asphyxia\w*|oxygen|out of air|no air|breath\w*|drown\w*)\b", re.I
        ),
    ),
    (
        DeathCause.CLOCK,
        re.compile(
            r"\b(time (?:is up|has run out|runs out|ran out)|too late|clock strikes|"
            r"out of time|deadline|countdown)\b",
            re.I,
        ),
    ),
)
_PASSIVE = NEVER_FAIL_VERBS | READING_VERBS | frozenset(["think", "again", "g"])
"""Commands that do nothing to the world: a death after one is the world's (`outcomes`)."""
_SHORT_ANSWER = 40


def ending_text(response: str) -> str:
    """The game's own ending words: its response without the RESTART/RESTORE prompts.

    A death the game recovers from (a resurrection elsewhere) ends at the death banner, so the
    ending is not mixed with the room the player wakes up in.
    """
    banner = _DEATH_BANNER.search(response)
    text = response[: banner.end()] if banner else response
    text = _PROMPT_LINE.sub("", text)
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return "\n".join(p for p in paragraphs if p).strip()


def death_cause(action: str, response: str) -> DeathCause:
    """Whether `action` caused the death its `response` reports, or the world did (see above)."""
    words = ending_text(response)
    for cause, pattern in _CAUSE_PATTERNS:
        if pattern.search(words):
            return cause
    if Command.parse(action).verb in _PASSIVE:
        return DeathCause.PLOT
    banner = _BANNER.search(response)
    lead = response[: banner.start()] if banner else response
    before_death = [p.strip() for p in re.split(r"\n\s*\n", lead) if p.strip()]
    if len(before_death) == 1:
        # older games end each message with a single line break ("The cell door is locked.\n
        # The ship rocks from the force of multiple explosions."): the lines are the messages
        before_death = [line.strip() for line in before_death[0].splitlines() if line.strip()]
    if len(before_death) >= 2:
        answer = " ".join(before_death[0].split())
        if len(answer) <= _SHORT_ANSWER or is_failure(answer):
            return DeathCause.PLOT
    return DeathCause.COMMAND
