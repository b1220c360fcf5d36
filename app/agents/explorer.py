"""ExplorerAgent: the offline, deterministic player. HEURISTICS, not a model.

Per turn, in this order, it takes the first command it has not tried at this location in
this episode and that memory does not mark as a failure or a danger:
1. remembered procedures here (SUCCESS memories: the quoted commands and their "Steps first");
2. the next step of the route the session gives it (to an objective, else to the nearest room
   with an unexplored exit);
3. the objects it sees in the room text (`take`, `open`, `unlock ... with <key>`);
4. unexplored exits the map knows here, then compass directions in a seeded order;
5. when everything here has been tried, a direction that worked before (a seeded choice).

Commands are read out of memory text by quoting convention (`'open window'`), which the offline
synthesizer always uses and LLM memories often do. With `--no-memory` the session passes no
memories, so only the episode's own history steers it: that is the baseline.
"""

from __future__ import annotations

import random
import re

from app.interfaces.agent import AgentDecision, AgentView, IAgent
from app.models.memory import MemoryCategory, MemoryEntry
from app.services.map_graph import DIRECTIONS as MAP_DIRECTIONS

DIRECTIONS = tuple(d for d in MAP_DIRECTIONS if d not in ("in", "out"))
_QUOTED = re.compile(r"'([a-z][a-z0-9 \-]{1,40})'")
_STEPS = re.compile(r"Steps first: (.*?)\.?$")
_STEP = re.compile(r"\(\d+\) ([^,]+)")
_GOT = re.compile(r"^Got (.+)$")
_ARTICLE_PHRASE = re.compile(
    r"\b(?:an?|the|some)\s+((?:[a-z\-]+\s+){0,3}?[a-z\-]+)"
    r"(?=\s*(?:[.,;:!?)]|\s(?:here|on|in|is|are|lies|lying|sits|sitting|with|which|that|"
    r"leading|to|by|and|of|from|hangs|rests|stands|stand|opens)\b))",
    re.IGNORECASE,
)
_SCENERY = frozenset(
    [
        "way",
        "path",
        "forest",
        "house",
        "room",
        "wall",
        "walls",
        "floor",
        "ground",
        "ceiling",
        "sky",
        "exit",
        "exits",
        "passage",
        "trees",
        "tree",
        "clearing",
        "corridor",
        "hall",
        "area",
        "north",
        "south",
        "east",
        "west",
        "up",
        "down",
        "side",
        "direction",
        "distance",
        "moment",
        "time",
        "rest",
        "end",
        "middle",
        "top",
        "bottom",
        "kind",
        "sort",
        "lot",
        "bit",
        "game",
        "score",
        "adventure",
        "sunlight",
        "light",
        "darkness",
        "dark",
        "place",
        "world",
        "entrance",
        "opening",
        "out",
    ]
)
_FIXED_VERBS = frozenset(["take", "get", "eat", "read"])
"""Verbs whose failure a change to the thing does not undo (a fixed door stays fixed)."""
_LOCKABLE = frozenset(["door", "gate", "chest", "box", "cabinet", "safe", "grate", "hatch"])
_ADJECTIVE_WORDS = frozenset(
    ["closed", "open", "locked", "unlocked", "small", "large", "big", "old", "new"]
)


def quoted_commands(text: str) -> list[str]:
    """Commands quoted in a memory text, in order (`'open window'` -> "open window")."""
    return [m.group(1).strip() for m in _QUOTED.finditer(text)]


def procedure_steps(text: str) -> list[str]:
    """The numbered `Steps first: (1) a, (2) b.` of a memory text."""
    found = _STEPS.search(text)
    return [s.strip() for s in _STEP.findall(found.group(1))] if found else []


def remembered_procedures(memories: list[MemoryEntry], inventory: list[str]) -> list[str]:
    """Commands worth repeating here, most important memory first: steps, then the action."""
    commands: list[str] = []
    for memory in sorted(memories, key=lambda m: -m.importance):
        if memory.category is not MemoryCategory.SUCCESS:
            continue
        got = _GOT.match(memory.title)
        if got:
            missing = [i for i in got.group(1).split(", ") if i not in inventory]
            commands.extend(f"take {item}" for item in missing)
            continue
        quoted = quoted_commands(memory.text)
        if quoted and ((memory.score_delta or 0) > 0 or procedure_steps(memory.text)):
            commands.extend([*procedure_steps(memory.text), quoted[0]])
    return list(dict.fromkeys(commands))


def remembered_bad(memories: list[MemoryEntry]) -> set[str]:
    """Commands memory marks as failing or dangerous here."""
    bad: set[str] = set()
    for memory in memories:
        if memory.category in (MemoryCategory.FAILURE, MemoryCategory.DANGER) or (
            "note" in memory.tags and "does not work" in memory.text
        ):
            quoted = quoted_commands(memory.title + " " + memory.text)
            bad.update(quoted[:1])
    return bad


def tool_of(command: str) -> str | None:
    """The item a command uses (`unlock door with key` -> key), if any."""
    found = re.search(r"\bwith (?:the )?([a-z\-]+)$", command)
    return found.group(1) if found else None


def _noun(command: str) -> str | None:
    words = command.split()
    return words[1] if len(words) > 1 and words[0] not in DIRECTIONS else None


def holding(item: str, inventory: list[str]) -> bool:
    """Whether an inventory item's name contains the word `item`."""
    return any(item in name.lower().split() for name in inventory)


_UNKNOWN_WORD = re.compile(r"""I don't know the word ["'](\w+)["']""", re.IGNORECASE)
_UNKNOWN_NOTE = re.compile(r"does not know the word '(\w+)'")


def unknown_words(world_notes: list[MemoryEntry]) -> set[str]:
    """Words the game said it does not know, from world notes."""
    return {m.group(1) for n in world_notes if (m := _UNKNOWN_NOTE.search(n.text))}


def visible_objects(text: str) -> list[str]:
    """Nouns of the things a room text mentions (`There is a small mailbox here` -> mailbox)."""
    nouns: list[str] = []
    for match in _ARTICLE_PHRASE.finditer(text):
        words = [w.lower() for w in match.group(1).split()]
        noun = words[-1]
        if noun in _SCENERY or noun in _ADJECTIVE_WORDS or len(noun) < 3:
            continue
        nouns.append(noun)
    return list(dict.fromkeys(nouns))


def object_commands(text: str, inventory: list[str]) -> list[str]:
    """Commands to try on what the room text shows."""
    commands: list[str] = []
    keys = [item for item in inventory if "key" in item.lower().split()]
    lowered = text.lower()
    for noun in visible_objects(text):
        lockable = noun in _LOCKABLE or re.search(rf"\blocked\b[^.]*\b{re.escape(noun)}\b", lowered)
        if keys and lockable:
            commands.append(f"unlock {noun} with {keys[0].lower().split()[-1]}")
        commands.extend((f"open {noun}", f"take {noun}"))
    return commands


class ExplorerAgent(IAgent):
    """The offline player (see the module docstring). Deterministic for a given seed."""

    def __init__(self, seed: int = 0) -> None:
        self._seed = seed
        self._rng = random.Random(seed)
        self._noted: set[tuple[int | None, str]] = set()
        self._used: dict[tuple[int | None, str], int] = {}
        self._unknown_now: set[str] = set()

    def new_episode(self, episode: int) -> None:
        self._rng = random.Random(self._seed * 1000 + episode)
        self._used = {}
        self._unknown_now = set()

    def decide(self, view: AgentView) -> AgentDecision:
        tried = view.tried_here
        obs = view.observation
        # A remembered failure may be stale: it may have been for lack of an item we now hold,
        # or about a thing something has just worked on (`open door` after `unlock door`).
        changed = {
            _noun(c)
            for c, failed in tried.items()
            if not failed and c.split()[0] not in _FIXED_VERBS
        } - {None}
        bad = {
            c
            for c in remembered_bad(view.memories)
            if not ((tool := tool_of(c)) and holding(tool, obs.inventory))
            and (_noun(c) not in changed or c.split()[0] in _FIXED_VERBS)
        }
        avoid = {a for a, failed in tried.items() if failed} | bad
        said = _UNKNOWN_WORD.search(obs.text)
        if said:
            self._unknown_now.add(said.group(1).lower())
        note = self._failure_note(view)

        unknown = unknown_words(view.world_notes) | self._unknown_now

        def fresh(command: str) -> bool:
            if unknown & set(command.split()):
                return False
            tool = tool_of(command)
            if tool is not None and not holding(tool, obs.inventory):
                return False
            return command not in tried and command not in avoid

        candidates: list[tuple[str, str]] = [
            *(
                (c, "a procedure memory recorded here")
                for c in remembered_procedures(view.memories, obs.inventory)
            ),
            *((c, "the route to my objective") for c in view.route_to_target[:1]),
            *(
                (c, "something I can see here")
                for c in object_commands(f"{view.room_text}\n{obs.text}", obs.inventory)
            ),
            *((d, "an exit I have not explored") for d in view.unexplored_exits),
            *(
                (c, "the route to the nearest unexplored exit")
                for c in view.route_to_unexplored[:1]
            ),
        ]
        for command, why in candidates:
            if fresh(command) or (why.startswith("the route") and command not in avoid):
                return self._decision(command, f"Trying {command!r}: {why}.", note)
        directions = list(DIRECTIONS)
        self._rng.shuffle(directions)
        mentioned = f"{view.room_text}\n{obs.text}".lower()
        directions.sort(key=lambda d: re.search(rf"\b{d}\b", mentioned) is None)
        for direction in directions:
            if fresh(direction):
                return self._decision(direction, f"Trying {direction}: untried here.", note)
        worked = [a for a, failed in tried.items() if not failed and a in DIRECTIONS]
        if not worked:
            return self._decision("look", "Nothing here works; looking again.", note)
        here = obs.location_id
        command = min(worked, key=lambda d: (self._used.get((here, d), 0), directions.index(d)))
        self._used[(here, command)] = self._used.get((here, command), 0) + 1
        return self._decision(
            command, "Everything here has been tried; the least-used way out.", note
        )

    def _failure_note(self, view: AgentView) -> tuple[str, int, bool] | None:
        """A note for the newest failure here that is not remembered yet.

        "I don't know the word X" is true everywhere: that note goes to the world scope.
        """
        unknown = _UNKNOWN_WORD.search(view.observation.text)
        if unknown and unknown.group(1).lower() not in unknown_words(view.world_notes):
            word = unknown.group(1).lower()
            if (None, word) not in self._noted:
                self._noted.add((None, word))
                return (f"The game does not know the word '{word}'.", 400, True)
        known = remembered_bad(view.memories)
        for command, failed in reversed(view.tried_here.items()):
            key = (view.observation.location_id, command)
            if failed and command not in known and key not in self._noted:
                self._noted.add(key)
                return (f"'{command}' does not work here.", 300, False)
        return None

    @staticmethod
    def _decision(
        command: str, reasoning: str, note: tuple[str, int, bool] | None
    ) -> AgentDecision:
        return AgentDecision(
            action=command,
            reasoning=reasoning,
            remember=note[0] if note else None,
            importance=note[1] if note else 500,
            remember_everywhere=note[2] if note else False,
        )
