"""Lessons that are true: is what each memory's lesson claims what the game itself does?

Plays every story file in ../shared/roms (or `--games zork1,905`) with memory for `--episodes`
x `--turns` (default 5 x 200) once per seed of `--seeds` (default 1,2), each run offline in a
fresh workdir through cairn's command line (`python -m cairn play ... --fresh`, then `python -m
cairn memories export --format jsonl`). Nothing of cairn is imported: the claims are tested
independently of the code that wrote them. For every memory with a `lesson`, the run's
transcript is replayed in a fresh Jericho interpreter (same story file, same seed) to the state
before the lesson's turn, and each claim is tested against the game from there:

- effect (every lesson): the action is stepped; `scored N`: the score rises by N; `moved`: the
  player's place changes (into `room_id` when given: that object is the player's location or
  one of its ancestors); `changed`: the world diff (the player's own attribute flags left out)
  holds a change that stepping `wait` from the same state does not make; `died`: the game ends
  without victory or prints a death banner; `won`: victory; `lost N`: the score falls by N;
  `refused`: no score, no move, and no change beyond what `wait` changes.
- needs_held (one per item): `drop ITEM` first (its last word when the name is not
  understood); still held: undecided; else the action: the effect still happens: false.
- steps_first (one per step): the transcript's turns from the step's first turn in the lesson's
  room to the action are replayed with every occurrence of the step in that room left out (a
  step done twice is still done when only its last occurrence is skipped; `--steps-skip last`
  skips only the last, and the line under the table counts the claims the other way would
  judge otherwise); the effect still happens: false; the step is not in the transcript:
  undecided.
- death_cause: by "action": `look` in the action's place keeps the player alive; by "event":
  `look`, `wait`, `wait` in its place, the player dies within them. "unknown" is no claim.
- fatal_too (one per command): the command in the action's place kills.
- danger: a DANGER memory with no lesson, or whose lesson's effect is no death, is true only
  when the transcript shows a death or a loss of points played from that memory's room
  (`location_before` of a turn that died or scored less) in an episode up to the memory's own.

The replay must reproduce the run: stepping the transcript's actions from `reset()` must give
its recorded score and death at every turn up to the lesson's; a lesson at or after a turn that
does not is undecided ("replay diverged"). Claims branch from states kept on the way
(`get_state` / `set_state`), so the lesson's action stepped from its kept state must give the
turn's recorded score and death too, else its claims are undecided ("branch ... diverged").
Jericho answers TextWorld games' score from outside the saved state (it lags a `set_state`
until the next step), so each kept state carries its own score. The needs_held and
steps_first claims of a lesson whose effect did not happen even as played are undecided too
(nothing to take away from). The game's replies are compared too: "text diff" counts the
turns whose reply differed while score and death agreed (a hint, no verdict).

It prints, per seed and overall, a table per claim kind of the claims kept in play (memories
ACTIVE or TENTATIVE): decided, true, false, undecided, the share true of decided; the same for
the SUPERSEDED memories' claims on a line of their own; why claims were undecided; the goal
line (">= 95% of decided claims true with >= 20 decided claims per seed": met or missed);
true share by evidence (tested / observed / claimed); up to `--examples` (15) false claims
(game, memory title, claim, what the game did); one line per game and seed (lessons, decided,
true, replay figures: turns replayed, episodes that diverged, turns whose text differed); and
the wall time.

Games nobody tuned for: `--textworld N` (default 0) TextWorld games made by tw-make
(bench/textworld_games.py, from `--textworld-seed`, cached in `$CAIRN_CACHE_DIR/lessons-games/`
like the lessons bench's), played and audited the same way in a block of their own.

`--keep DIR` keeps every run's folder (DIR/GAME-sSEED/: the workdir `w/` and `export.jsonl`);
`--reuse DIR` audits the folders an earlier `--keep` left (or hand-made ones laid out the same
way) instead of playing. `--llm` is cairn play's (default offline). It asserts nothing
and exits 0; `--strict` exits 1 when the goal is missed. `--json PATH` writes every figure and
claim. One game and seed per worker process, `--workers` of them (default 2).

    .venv/bin/python bench/truth_bench.py [--games zork1,905] [--episodes 5] [--turns 200]
        [--seeds 1,2] [--workers 2] [--examples 15] [--keep DIR | --reuse DIR]
        [--steps-skip all|last] [--llm offline] [--textworld 0] [--textworld-seed 1]
        [--json out.json] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import textworld_games  # noqa: E402  (stdlib only at import; cairn is never imported here)

ROMS = ROOT.parent / "shared" / "roms"
STORY_SUFFIXES = (".z3", ".z5", ".z8")
KINDS = ("effect", "needs_held", "steps_first", "death_cause", "fatal_too", "danger")
IN_PLAY = frozenset({"ACTIVE", "TENTATIVE"})
SUPERSEDED = "SUPERSEDED"
GOAL_SHARE = 0.95
GOAL_DECIDED = 20
HARMLESS = "look"
EVENT_COMMANDS = ("look", "wait", "wait")
IDLE = "wait"
SAVE, RESTORE = "save", "restore"
"""What cairn's session keeps for itself: no game turn (its own saved state)."""
TRUE, FALSE, UNDECIDED = "true", "false", "undecided"
DIVERGED = "replay diverged"
BRANCH_DIVERGED = "branch from the kept state diverged"
PLAY_TIMEOUT_S = 3 * 3600
EXPORT_TIMEOUT_S = 600
REPLY_CHARS = 100
SHARED = "shared"
UNTUNED = "textworld"
_DEATH = re.compile(r"\*+\s*you (?:have )?(?:died|lost)\s*\*+|\byou have died\b", re.IGNORECASE)
"""A death banner ("*** You have died ***"): games that resurrect print one without ending."""


# -- the object tree ----------------------------------------------------------------------------


def _word(memory: bytes, address: int) -> int:
    return (memory[address] << 8) | memory[address + 1]


class ObjectTable:
    """The Z-machine object table (standard §12) read from the interpreter's dynamic memory:
    Jericho's own `get_object` stops at a per-game limit (Curses, Theatre, Gold keep objects
    above it), so parents and children are read here."""

    MAX_DEPTH = 64

    def __init__(self, story: bytes) -> None:
        wide = story[0] >= 4
        self.entry_size = 14 if wide else 9
        self.wide = wide
        self.first_entry = _word(story, 0x0A) + (126 if wide else 62)

    def _links(self, ram: bytes, obj: int) -> tuple[int, int, int]:
        """(parent, sibling, child) of `obj`; zeros for an object outside the memory."""
        if obj <= 0:
            return 0, 0, 0
        at = self.first_entry + (obj - 1) * self.entry_size
        if at + self.entry_size > len(ram):
            return 0, 0, 0
        if self.wide:
            return _word(ram, at + 6), _word(ram, at + 8), _word(ram, at + 10)
        return ram[at + 4], ram[at + 5], ram[at + 6]

    def ancestors(self, ram: bytes, obj: int) -> tuple[int, ...]:
        """`obj`'s parent, grandparent... up to the top."""
        chain: list[int] = []
        parent = self._links(ram, obj)[0]
        while parent and parent not in chain and len(chain) < self.MAX_DEPTH:
            chain.append(parent)
            parent = self._links(ram, parent)[0]
        return tuple(chain)

    def descendants(self, ram: bytes, obj: int) -> frozenset[int]:
        """Everything inside `obj`, however deep (what the player holds, for the player)."""
        found: set[int] = set()
        todo = [self._links(ram, obj)[2]]
        while todo:
            child = todo.pop()
            while child and child not in found and len(found) < 4096:
                found.add(child)
                _parent, sibling, inner = self._links(ram, child)
                todo.append(inner)
                child = sibling
        return frozenset(found)


# -- the inputs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One transcript turn."""

    episode: int
    turn: int
    action: str
    score: int | None
    died: bool
    location_before: int | None
    response: str


def same_command(a: str, b: str) -> bool:
    """Commands compared without case or extra spaces."""
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def read_transcript(path: Path) -> list[Row]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        score = raw.get("score")
        before = raw.get("location_before")
        rows.append(
            Row(
                episode=int(raw["episode"]),
                turn=int(raw["turn"]),
                action=str(raw.get("action") or ""),
                score=int(score) if isinstance(score, int | float) else None,
                died=bool(raw.get("died")),
                location_before=int(before) if isinstance(before, int) else None,
                response=str(raw.get("response") or ""),
            )
        )
    return rows


def read_export(path: Path) -> list[dict[str, Any]]:
    """The memories of an export (`{"memory": {...}}` lines); other lines are skipped."""
    memories = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        if isinstance(raw, dict) and isinstance(raw.get("memory"), dict):
            memories.append(raw["memory"])
    return memories


@dataclass(frozen=True)
class Lesson:
    """A memory's lesson, read defensively from the export (see `lesson_of`)."""

    action: str
    kind: str
    points: int | None
    room_id: int | None
    room: str | None
    needs_held: tuple[str, ...]
    steps_first: tuple[str, ...]
    death_by: str | None
    death_action: str | None
    evidence: str
    episode: int | None
    turn: int | None
    fatal_too: tuple[str, ...] = ()


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def lesson_of(memory: dict[str, Any]) -> Lesson | str | None:
    """The memory's lesson; None when it has none (an export from before lessons has no key);
    a string saying what is wrong with one that cannot be read."""
    raw = memory.get("lesson")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        return f"lesson is a {type(raw).__name__}"
    effect = raw.get("effect")
    action = raw.get("action")
    if not isinstance(action, str) or not isinstance(effect, dict):
        return "lesson without an action or an effect"
    kind = effect.get("kind")
    if kind not in ("scored", "moved", "changed", "died", "won", "lost", "refused"):
        return f"effect kind {kind!r}"
    cause = raw.get("death_cause")
    cause = cause if isinstance(cause, dict) else {}
    return Lesson(
        action=action,
        kind=str(kind),
        points=_int_or_none(effect.get("points")),
        room_id=_int_or_none(effect.get("room_id")),
        room=effect.get("room") if isinstance(effect.get("room"), str) else None,
        needs_held=tuple(str(i) for i in raw.get("needs_held") or [] if str(i).strip()),
        steps_first=tuple(str(s) for s in raw.get("steps_first") or [] if str(s).strip()),
        death_by=str(cause["by"]) if cause.get("by") else None,
        death_action=str(cause["action"]) if cause.get("action") else None,
        evidence=str(raw.get("evidence") or "observed"),
        fatal_too=tuple(str(c) for c in raw.get("fatal_too") or [] if str(c).strip()),
        episode=_int_or_none(raw.get("episode")),
        turn=_int_or_none(raw.get("turn")),
    )


# -- the replay ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one stepped command did."""

    text: str
    score_delta: int | None
    died: bool
    won: bool
    place_before: tuple[int, ...] | None
    place_after: tuple[int, ...] | None
    changes: frozenset[tuple[int, int, int]] | None
    """The world diff without the player's own flags; None when the game cannot say."""

    @property
    def moved(self) -> bool | None:
        if self.place_before is None or self.place_after is None:
            return None
        return self.place_before != self.place_after


@dataclass(frozen=True)
class Snapshot:
    """An interpreter state and the score that goes with it."""

    state: Any
    score: int | None


@dataclass
class ReplayFigures:
    """How well the replay reproduced a run."""

    episodes: int = 0
    turns: int = 0
    diverged: dict[int, int] = field(default_factory=dict)
    """Episode: the first turn whose score or death the replay did not reproduce."""
    text_differs: int = 0
    """Turns whose reply text differed (score and death the same): a hint, no verdict."""


def _reply(text: str) -> str:
    """A reply's lines, joined and shortened, for the examples."""
    joined = " ".join(" ".join(text.split()).split("> ")).strip()
    return joined if len(joined) <= REPLY_CHARS else joined[: REPLY_CHARS - 3] + "..."


class Replay:
    """One fresh interpreter replaying one run's transcript (see the module docstring)."""

    def __init__(self, story: Path, seed: int, rows: list[Row]) -> None:
        from jericho import FrotzEnv

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.env: Any = FrotzEnv(str(story), seed=seed)
        self.supported = bool(getattr(self.env, "is_fully_supported", False))
        self.player = int(getattr(self.env, "player_obj_num", 0) or 0) if self.supported else 0
        self.table = ObjectTable(story.read_bytes())
        self.max_score = int(self.env.get_max_score()) if self.supported else 0
        self.episodes: dict[int, list[Row]] = {}
        for row in sorted(rows, key=lambda r: (r.episode, r.turn)):
            self.episodes.setdefault(row.episode, []).append(row)
        self.states: dict[tuple[int, int], Snapshot] = {}
        self.figures = ReplayFigures()
        self._loaded: Snapshot | None = None

    def close(self) -> None:
        self.env.close()

    # the interpreter

    def _ram(self) -> bytes:
        return bytes(self.env.get_state()[0])

    def place(self) -> tuple[int, ...] | None:
        """The player's parent and its ancestors (None when the game knows no player)."""
        if not self.player:
            return None
        return self.table.ancestors(self._ram(), self.player)

    def held(self) -> frozenset[int]:
        return self.table.descendants(self._ram(), self.player) if self.player else frozenset()

    def score(self) -> int | None:
        if self._loaded is not None:
            return self._loaded.score
        return int(self.env.get_score()) if self.supported else None

    def snapshot(self) -> Snapshot:
        return Snapshot(self.env.get_state(), self.score())

    def load(self, snapshot: Snapshot) -> None:
        """Go back to `snapshot` (its score is the snapshot's until the next step: Jericho
        answers the score of TextWorld games from outside the saved state, so it lags the
        state just set until a command is stepped)."""
        if self.env._emulator_halted():
            self.env.reset()
        self.env.set_state(snapshot.state)
        self._loaded = snapshot

    def _changes(self) -> frozenset[tuple[int, int, int]] | None:
        if not self.supported:
            return None
        try:
            diff = self.env._get_world_diff()
        except Exception:  # an interpreter without the diff: the game cannot say
            return None
        found = set()
        for kind, pairs in enumerate(diff):
            for first, second in pairs:
                if not (kind in (1, 2) and int(first) == self.player):
                    found.add((kind, int(first), int(second)))
        return frozenset(found)

    def step(self, action: str) -> Outcome:
        """Send `action` and read what it did."""
        place, score = self.place(), self.score()
        text, _reward, done, _info = self.env.step(action)
        self._loaded = None
        after = self.score()
        full = after is not None and 0 < self.max_score <= after
        won = bool(done) and self.supported and (bool(self.env.victory()) or full)
        banner = _DEATH.search(text) is not None
        died = not won and (banner or (bool(done) and bool(self.env.game_over())))
        return Outcome(
            text=str(text),
            score_delta=None if after is None or score is None else after - score,
            died=died,
            won=won,
            place_before=place,
            place_after=self.place(),
            changes=self._changes(),
        )

    def waiting(self, state: Snapshot) -> frozenset[tuple[int, int, int]] | None:
        """What `wait` from `state` changes (a timed event is not the action's change)."""
        self.load(state)
        return self.step(IDLE).changes

    # the transcript

    def prepare(self, needed: set[tuple[int, int]]) -> None:
        """Replay every episode from `reset()`, keeping the state before each turn in
        `needed` and noting the first turn whose score or death differs from the record."""
        for episode, rows in self.episodes.items():
            self.env.reset()
            self._loaded = None
            self.figures.episodes += 1
            saved: Snapshot | None = None
            for row in rows:
                if (episode, row.turn) in needed:
                    self.states[(episode, row.turn)] = self.snapshot()
                word = row.action.strip().lower()
                if word == SAVE:
                    saved = self.snapshot()
                    continue
                if word == RESTORE:
                    if saved is not None:
                        self.load(saved)
                    continue
                out = self.step(row.action)
                self.figures.turns += 1
                score = self.score()
                same = out.died == row.died and (
                    score is None or row.score is None or score == row.score
                )
                if not same and episode not in self.figures.diverged:
                    self.figures.diverged[episode] = row.turn
                elif same and not _same_text(out.text, row.response):
                    self.figures.text_differs += 1

    def reproduces(self, episode: int, turn: int) -> bool:
        first = self.figures.diverged.get(episode)
        return first is None or first > turn

    def rows(self, episode: int) -> list[Row]:
        return self.episodes.get(episode, [])


def _same_text(replayed: str, recorded: str) -> bool:
    a, b = " ".join(replayed.split()), " ".join(recorded.split())
    return a == b or (bool(b) and a.endswith(b))


# -- the claims ---------------------------------------------------------------------------------


@dataclass
class Claim:
    """One claim and its verdict."""

    game: str
    seed: int
    kind: str
    memory_id: str
    title: str
    status: str
    category: str
    evidence: str
    claim: str
    verdict: str
    why: str = ""
    """What the game did (true, false), or why it could not be decided."""
    episode: int | None = None
    turn: int | None = None
    other_skip: str = ""
    """steps_first: the verdict the other `--steps-skip` gives, when it differs."""

    @property
    def in_play(self) -> bool:
        return self.status in IN_PLAY


def effect_text(lesson: Lesson) -> str:
    if lesson.kind == "scored":
        return f"scores {lesson.points}" if lesson.points is not None else "scores"
    if lesson.kind == "lost":
        return f"loses {lesson.points}" if lesson.points is not None else "loses points"
    if lesson.kind == "moved":
        if lesson.room_id is None:
            return "moves"
        named = f"{lesson.room} " if lesson.room else ""
        return f"moves to {named}(L{lesson.room_id})"
    return {"changed": "changes the world", "died": "kills", "won": "wins"}.get(
        lesson.kind, "is refused"
    )


def effect_holds(
    lesson: Lesson, out: Outcome, waiting: frozenset[tuple[int, int, int]] | None
) -> bool | None:
    """Whether `out` is the lesson's effect; None when the game cannot say."""
    kind = lesson.kind
    if kind == "scored":
        if out.score_delta is None:
            return None
        if lesson.points is None:
            return out.score_delta > 0
        return out.score_delta == lesson.points
    if kind == "lost":
        if out.score_delta is None:
            return None
        if lesson.points is None:
            return out.score_delta < 0
        return out.score_delta == -lesson.points
    if kind == "died":
        return out.died
    if kind == "won":
        return out.won
    if kind == "moved":
        if out.moved is None or out.place_after is None or out.place_before is None:
            return None
        if lesson.room_id is None:
            return out.moved
        return (
            out.moved
            and lesson.room_id in out.place_after
            and lesson.room_id not in out.place_before
        )
    if out.changes is None:
        return None
    own = out.changes - (waiting or frozenset())
    if kind == "changed":
        return bool(own)
    # refused
    if out.score_delta is None or out.moved is None:
        return None
    return out.score_delta == 0 and not out.moved and not own and not out.died


def what_happened(
    lesson: Lesson, out: Outcome, waiting: frozenset[tuple[int, int, int]] | None
) -> str:
    """What the game did, in the claim's terms, and the reply's start."""
    parts = []
    if out.score_delta is not None:
        parts.append(f"score {out.score_delta:+d}")
    if out.moved is not None:
        where = out.place_after[0] if out.place_after else "?"
        parts.append(f"moved to L{where}" if out.moved else "did not move")
    if out.changes is not None and lesson.kind in ("changed", "refused"):
        own = out.changes - (waiting or frozenset())
        parts.append(f"{len(own)} world change(s) beyond wait's")
    if out.died:
        parts.append("died")
    if out.won:
        parts.append("won")
    return f'{", ".join(parts)}: "{_reply(out.text)}"'


def needs_wait(lesson: Lesson) -> bool:
    return lesson.kind in ("changed", "refused")


class Auditor:
    """Tests the claims of one run's lessons on a `Replay`."""

    def __init__(self, replay: Replay, game: str, seed: int, skip_last_only: bool = False) -> None:
        self.replay = replay
        self.game = game
        self.seed = seed
        self.skip_last_only = skip_last_only

    def claim(self, memory: dict[str, Any], lesson: Lesson | None, kind: str, text: str) -> Claim:
        return Claim(
            game=self.game,
            seed=self.seed,
            kind=kind,
            memory_id=str(memory.get("id", "")),
            title=str(memory.get("title", "")),
            status=str(memory.get("status", "")),
            category=str(memory.get("category", "")),
            evidence=lesson.evidence if lesson is not None else "",
            claim=text,
            verdict=UNDECIDED,
            episode=lesson.episode if lesson is not None else _int_or_none(memory.get("episode")),
            turn=lesson.turn if lesson is not None else None,
        )

    def trial(
        self, state: Snapshot, prefix: Sequence[str], lesson: Lesson
    ) -> tuple[Outcome, frozenset[tuple[int, int, int]] | None]:
        """From `state`, `prefix` then the lesson's action: (what it did, what `wait` from
        the state right before it changes)."""
        r = self.replay
        r.load(state)
        for command in prefix:
            r.step(command)
        before = r.snapshot()
        out = r.step(lesson.action)
        waiting = r.waiting(before) if needs_wait(lesson) else None
        return out, waiting

    # the lessons

    def lesson_claims(self, memory: dict[str, Any], lesson: Lesson) -> list[Claim]:
        act = f"'{lesson.action}'"
        effect = self.claim(memory, lesson, "effect", f"{act} {effect_text(lesson)}")
        held = [
            self.claim(memory, lesson, "needs_held", f"{act} needs '{item}' held")
            for item in lesson.needs_held
        ]
        steps = [
            self.claim(memory, lesson, "steps_first", f"{act} needs '{step}' first")
            for step in lesson.steps_first
        ]
        death: list[Claim] = []
        if lesson.death_by in ("action", "event"):
            said = "the action kills" if lesson.death_by == "action" else "an event kills"
            death.append(self.claim(memory, lesson, "death_cause", f"{act}: {said}"))
        fatal = [
            self.claim(memory, lesson, "fatal_too", f"'{command}' here kills too")
            for command in lesson.fatal_too
        ]
        claims = [effect, *held, *steps, *death, *fatal]
        why = self.undecidable(lesson)
        if why is not None:
            for c in claims:
                c.why = why
            return claims
        assert lesson.episode is not None and lesson.turn is not None
        state = self.replay.states[(lesson.episode, lesson.turn)]
        out, waiting = self.trial(state, [], lesson)
        if not self.branch_reproduces(lesson.episode, lesson.turn, state, out):
            for c in claims:
                c.why = BRANCH_DIVERGED
            return claims
        holds = effect_holds(lesson, out, waiting)
        effect.why = what_happened(lesson, out, waiting)
        if holds is None:
            effect.why = "the game gives no score or place"
        else:
            effect.verdict = TRUE if holds else FALSE
        for item, c in zip(lesson.needs_held, held, strict=True):
            self.needs_held_claim(c, state, lesson, item, holds)
        for step, c in zip(lesson.steps_first, steps, strict=True):
            self.steps_first_claim(c, lesson, step, holds)
        for c in death:
            self.death_claim(c, state, lesson, out)
        for command, c in zip(lesson.fatal_too, fatal, strict=True):
            self.replay.load(state)
            killed = self.replay.step(command).died
            c.verdict = TRUE if killed else FALSE
            c.why = f"'{command}' {'killed' if killed else 'did not kill'} in the action's place"
        return claims

    def branch_reproduces(self, episode: int, turn: int, state: Snapshot, out: Outcome) -> bool:
        """Whether the action stepped from the kept state (`set_state`, not a replay from the
        start) gives the turn's recorded score and death."""
        row = next(r for r in self.replay.rows(episode) if r.turn == turn)
        if out.died != row.died:
            return False
        if state.score is None or out.score_delta is None or row.score is None:
            return True
        return state.score + out.score_delta == row.score

    def undecidable(self, lesson: Lesson) -> str | None:
        """Why the lesson's turn cannot be replayed, or None when it can."""
        if lesson.episode is None or lesson.turn is None:
            return "lesson names no turn"
        rows = {r.turn: r for r in self.replay.rows(lesson.episode)}
        row = rows.get(lesson.turn)
        if row is None:
            return "turn not in the transcript"
        if not same_command(row.action, lesson.action):
            return "the transcript's turn played another action"
        if row.action.strip().lower() in (SAVE, RESTORE):
            return "save/restore is no game command"
        if not self.replay.reproduces(lesson.episode, lesson.turn):
            return DIVERGED
        if (lesson.episode, lesson.turn) not in self.replay.states:
            return "no replay state"
        return None

    def needs_held_claim(
        self, c: Claim, state: Snapshot, lesson: Lesson, item: str, holds: bool | None
    ) -> None:
        if not holds:
            c.why = "the effect did not happen with the item either"
            return
        r = self.replay
        names = [item]
        last = item.split()[-1]
        if last.lower() != item.lower():
            names.append(last)
        reply = ""
        for name in names:
            r.load(state)
            before = r.held()
            dropped = r.step(f"drop {name}")
            if not before - r.held():
                reply = reply or dropped.text
                continue
            without = r.snapshot()
            out = r.step(lesson.action)
            waiting = r.waiting(without) if needs_wait(lesson) else None
            still = effect_holds(lesson, out, waiting)
            if still is None:
                c.why = "the game gives no score or place"
                return
            c.verdict = FALSE if still else TRUE
            happened = what_happened(lesson, out, waiting)
            c.why = f"after 'drop {name}': {happened}"
            return
        c.why = f"item still held: 'drop {item}' answered \"{_reply(reply)}\""

    def steps_first_claim(self, c: Claim, lesson: Lesson, step: str, holds: bool | None) -> None:
        """The step's occurrences in the lesson's room before its turn are all left out, from
        the first of them on (a step done twice is still done when only the last is skipped);
        the verdict skipping only the last occurrence is kept beside it when it differs.
        `skip_last_only` (`--steps-skip last`) swaps the two."""
        if not holds:
            c.why = "the effect did not happen with the step either"
            return
        assert lesson.episode is not None and lesson.turn is not None
        rows = [r for r in self.replay.rows(lesson.episode) if r.turn < lesson.turn]
        here = next(
            (r.location_before for r in self.replay.rows(lesson.episode) if r.turn == lesson.turn),
            None,
        )
        found = [
            r
            for r in rows
            if same_command(r.action, step) and (here is None or r.location_before == here)
        ]
        if not found:
            c.why = "the step is not in the transcript before the action"
            return
        every, last = {r.turn for r in found}, {found[-1].turn}
        first, other = (last, every) if self.skip_last_only else (every, last)
        verdict, why = self.without(lesson, rows, first)
        c.verdict, c.why = verdict, why
        if len(found) > 1:
            otherwise, _ = self.without(lesson, rows, other)
            if otherwise != verdict:
                c.other_skip = otherwise

    def without(self, lesson: Lesson, rows: list[Row], skipped: set[int]) -> tuple[str, str]:
        """(verdict, why) of the action replayed from the first skipped turn on without the
        skipped turns."""
        assert lesson.episode is not None
        first = min(skipped)
        state = self.replay.states.get((lesson.episode, first))
        if state is None:
            return UNDECIDED, "no replay state"
        replayed = [r for r in rows if r.turn >= first and r.turn not in skipped]
        if any(r.action.strip().lower() in (SAVE, RESTORE) for r in replayed):
            return UNDECIDED, "a save or restore in between"
        out, waiting = self.trial(state, [r.action for r in replayed], lesson)
        still = effect_holds(lesson, out, waiting)
        if still is None:
            return UNDECIDED, "the game gives no score or place"
        turns = ", ".join(str(t) for t in sorted(skipped))
        happened = what_happened(lesson, out, waiting)
        return (FALSE if still else TRUE), f"without turn(s) {turns}: {happened}"

    def death_claim(self, c: Claim, state: Snapshot, lesson: Lesson, played: Outcome) -> None:
        if not played.died:
            c.why = "the action did not kill as replayed"
            return
        r = self.replay
        r.load(state)
        commands = [HARMLESS] if lesson.death_by == "action" else list(EVENT_COMMANDS)
        died_on = None
        for i, command in enumerate(commands):
            out = r.step(command)
            if out.died:
                died_on = i
                break
        tried = commands if died_on is None else commands[: died_on + 1]
        sent = ", ".join(f"'{x}'" for x in tried)
        if lesson.death_by == "action":
            c.verdict = FALSE if died_on is not None else TRUE
        else:
            c.verdict = TRUE if died_on is not None else FALSE
        c.why = f"{'died' if died_on is not None else 'survived'} on {sent} instead"

    # dangers

    def danger_claim(self, memory: dict[str, Any], deaths: list[Row]) -> Claim:
        room = _int_or_none(memory.get("location_id"))
        episode = _int_or_none(memory.get("episode"))
        where = f"L{room}" if room is not None else "anywhere"
        c = self.claim(memory, None, "danger", f"a death happened {where}")
        seen = [
            d
            for d in deaths
            if (room is None or d.location_before == room)
            and (episode is None or d.episode <= episode)
        ]
        upto = f"episodes 1-{episode}" if episode is not None else "the run"
        if seen:
            c.verdict = TRUE
            c.why = f"died there in episode {seen[0].episode} turn {seen[0].turn}"
        else:
            c.verdict = FALSE
            c.why = f"no death played from {where} in {upto} ({len(deaths)} deaths in the run)"
        return c


def harms(rows: list[Row]) -> list[Row]:
    """The turns that lost points (harm short of a death): a danger may stand on one too."""
    found: list[Row] = []
    last: dict[int, int | None] = {}
    for row in rows:
        before = last.get(row.episode, 0)
        if row.score is not None and before is not None and row.score < before:
            found.append(row)
        last[row.episode] = row.score
    return found


def lesson_turn(lesson: Lesson, memory: dict[str, Any], rows: list[Row]) -> Lesson:
    """The lesson with its episode and turn: its own, else the memory's episode and the last
    turn of the memory's span that played the lesson's action."""
    if lesson.episode is not None and lesson.turn is not None:
        return lesson
    episode = lesson.episode or _int_or_none(memory.get("episode"))
    start = _int_or_none(memory.get("turn_start")) or 0
    end = _int_or_none(memory.get("turn_end")) or start
    found = [
        r.turn
        for r in rows
        if r.episode == episode and start <= r.turn <= end and same_command(r.action, lesson.action)
    ]
    if episode is None or not found:
        return lesson
    return replace(lesson, episode=episode, turn=found[-1])


def needed_turns(lessons: Iterable[Lesson], rows: list[Row]) -> set[tuple[int, int]]:
    """The (episode, turn) states the claims start from: each lesson's turn and every earlier
    turn of its episode that plays one of its steps."""
    needed: set[tuple[int, int]] = set()
    for lesson in lessons:
        if lesson.episode is None or lesson.turn is None:
            continue
        needed.add((lesson.episode, lesson.turn))
        for r in rows:
            if (
                r.episode == lesson.episode
                and r.turn < lesson.turn
                and any(same_command(r.action, s) for s in lesson.steps_first)
            ):
                needed.add((r.episode, r.turn))
    return needed


# -- one game and seed ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    story: Path
    name: str
    seed: int
    episodes: int
    turns: int
    folder: Path | None
    """Where to keep (or, `reuse`, find) the run's folder; None: a temporary folder."""
    reuse: bool = False
    llm: str = "offline"
    group: str = SHARED
    skip_last_only: bool = False


@dataclass
class GameAudit:
    """One game and seed: the run, its lessons and their claims."""

    game: str
    seed: int
    group: str = SHARED
    memories: int = 0
    lessons: int = 0
    unreadable: list[str] = field(default_factory=list)
    dangers: int = 0
    claims: list[Claim] = field(default_factory=list)
    replay: ReplayFigures = field(default_factory=ReplayFigures)
    supported: bool = True
    play_seconds: float = 0.0
    audit_seconds: float = 0.0
    error: str = ""


def _run(command: list[str], timeout: float) -> str:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT
    )
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"{' '.join(command[2:4])} exited {done.returncode}: {said[0]}")
    return done.stdout


def play_and_export(job: Job, folder: Path) -> None:
    """`cairn play` into folder/w, then its export into folder/export.jsonl."""
    workdir = folder / "w"
    cairn = [sys.executable, "-m", "cairn"]
    _run(
        [
            *cairn,
            "play",
            "--game",
            str(job.story),
            "--episodes",
            str(job.episodes),
            "--max-turns",
            str(job.turns),
            "--seed",
            str(job.seed),
            "--workdir",
            str(workdir),
            "--fresh",
            "--llm",
            job.llm,
        ],
        PLAY_TIMEOUT_S,
    )
    export = _run(
        [*cairn, "memories", "export", "--format", "jsonl", "--workdir", str(workdir)],
        EXPORT_TIMEOUT_S,
    )
    (folder / "export.jsonl").write_text(export, encoding="utf-8")


def transcript_of(folder: Path) -> Path:
    found = sorted((folder / "w" / "runs").glob("*/transcript.jsonl"))
    if not found:
        raise RuntimeError(f"no transcript in {folder / 'w' / 'runs'}")
    return found[-1]


def audit_folder(job: Job, folder: Path, audit: GameAudit) -> None:
    """Every claim of the run kept in `folder` (w/ and export.jsonl)."""
    rows = read_transcript(transcript_of(folder))
    memories = read_export(folder / "export.jsonl")
    audit.memories = len(memories)
    lessons: list[tuple[dict[str, Any], Lesson]] = []
    dangers: list[dict[str, Any]] = []
    for memory in memories:
        read = lesson_of(memory)
        if isinstance(read, str):
            audit.unreadable.append(f"{memory.get('title', '')}: {read}")
        elif read is not None:
            lessons.append((memory, lesson_turn(read, memory, rows)))
        if memory.get("category") == "DANGER" and (
            not isinstance(read, Lesson) or read.kind != "died"
        ):
            dangers.append(memory)
    audit.lessons, audit.dangers = len(lessons), len(dangers)
    replay = Replay(job.story, job.seed, rows)
    try:
        audit.supported = replay.supported
        replay.prepare(needed_turns((lesson for _, lesson in lessons), rows))
        audit.replay = replay.figures
        auditor = Auditor(replay, job.name, job.seed, job.skip_last_only)
        for memory, lesson in lessons:
            try:
                audit.claims.extend(auditor.lesson_claims(memory, lesson))
            except Exception as exc:  # the interpreter failed on one lesson: the rest go on
                claim = auditor.claim(memory, lesson, "effect", f"'{lesson.action}'")
                claim.why = f"interpreter error: {type(exc).__name__}: {exc}"
                audit.claims.append(claim)
        deaths = [r for r in rows if r.died] + harms(rows)
        audit.claims.extend(auditor.danger_claim(m, deaths) for m in dangers)
    finally:
        replay.close()


def audit_one(job: Job) -> GameAudit:
    """Play (unless `reuse`), export and audit one game and seed."""
    audit = GameAudit(game=job.name, seed=job.seed, group=job.group)
    start = time.perf_counter()
    try:
        if job.folder is not None:
            if not job.reuse:
                job.folder.mkdir(parents=True, exist_ok=True)
                play_and_export(job, job.folder)
            audit.play_seconds = time.perf_counter() - start
            audit_folder(job, job.folder, audit)
        else:
            with tempfile.TemporaryDirectory(prefix=f"truth-{job.name}-s{job.seed}-") as tmp:
                play_and_export(job, Path(tmp))
                audit.play_seconds = time.perf_counter() - start
                audit_folder(job, Path(tmp), audit)
    except Exception as exc:  # a bench reports a broken run and goes on with the others
        audit.error = f"{type(exc).__name__}: {exc}"
        audit.play_seconds = audit.play_seconds or time.perf_counter() - start
    audit.audit_seconds = time.perf_counter() - start - audit.play_seconds
    return audit


def run_jobs(jobs: list[Job], workers: int) -> list[GameAudit]:
    audits: list[GameAudit] = []

    def done(a: GameAudit) -> None:
        audits.append(a)
        note = f" ERROR {a.error}" if a.error else f" {len(a.claims)} claims"
        print(
            f"  done {a.game} seed {a.seed} (play {a.play_seconds:.0f} s, audit"
            f" {a.audit_seconds:.0f} s){note}",
            file=sys.stderr,
        )

    if workers <= 1:
        for job in jobs:
            done(audit_one(job))
        return audits
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(audit_one, job): job for job in jobs}
        for future in as_completed(futures):
            try:
                done(future.result())
            except Exception as exc:  # a worker that died (Frotz ends its process on some errors)
                job = futures[future]
                lost = GameAudit(game=job.name, seed=job.seed, group=job.group)
                lost.error = f"worker lost: {type(exc).__name__}: {exc}"
                done(lost)
    return audits


# -- figures ------------------------------------------------------------------------------------


@dataclass
class Tally:
    decided: int = 0
    true: int = 0
    false: int = 0
    undecided: int = 0

    def add(self, claim: Claim) -> None:
        if claim.verdict == UNDECIDED:
            self.undecided += 1
            return
        self.decided += 1
        self.true += claim.verdict == TRUE
        self.false += claim.verdict == FALSE

    @property
    def share(self) -> float | None:
        return self.true / self.decided if self.decided else None


def tally(claims: Iterable[Claim]) -> Tally:
    t = Tally()
    for c in claims:
        t.add(c)
    return t


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share:.1%}"


def claim_table(claims: list[Claim]) -> str:
    """One row per kind of the claims in play, their total, and the superseded ones' line."""
    in_play = [c for c in claims if c.in_play]
    rows = [["claim kind", "decided", "true", "false", "undecided", "true%"]]
    lines = [(k, tally(c for c in in_play if c.kind == k)) for k in KINDS]
    lines.append(("all (in play)", tally(in_play)))
    lines.append(("superseded", tally(c for c in claims if c.status == SUPERSEDED)))
    for name, t in lines:
        figures = [t.decided, t.true, t.false, t.undecided]
        rows.append([name, *map(str, figures), _pct(t.share)])
    return _columns(rows)


def _columns(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    )


def undecided_reasons(claims: Iterable[Claim]) -> str:
    reasons = Counter(c.why.split(":")[0] for c in claims if c.verdict == UNDECIDED)
    return ", ".join(f"{why} {n}" for why, n in reasons.most_common()) or "none"


@dataclass
class Goal:
    met: bool
    detail: str


def goal(claims: list[Claim], seeds: Sequence[int]) -> Goal:
    """>= 95% of decided claims in play true, with >= 20 decided claims, for every seed."""
    parts, met = [], True
    for seed in seeds:
        t = tally(c for c in claims if c.seed == seed and c.in_play)
        ok = t.decided >= GOAL_DECIDED and (t.share or 0.0) >= GOAL_SHARE
        met = met and ok
        parts.append(f"seed {seed}: {_pct(t.share)} of {t.decided} decided")
    return Goal(met and bool(seeds), "; ".join(parts))


def print_block(
    title: str, audits: list[GameAudit], seeds: Sequence[int], examples: int, skip_last: bool
) -> Goal:
    """Tables per seed and overall, the goal, false examples and the per-game lines."""
    claims = [c for a in audits for c in a.claims]
    print(title)
    for a in sorted(audits, key=lambda a: (a.game, a.seed)):
        if a.error:
            print(f"  {a.game} seed {a.seed}: ERROR {a.error}")
        for u in a.unreadable[:3]:
            print(f"  {a.game} seed {a.seed}: unreadable lesson: {u}")
    for seed in seeds:
        mine = [c for c in claims if c.seed == seed]
        print(f"\nseed {seed}")
        print(claim_table(mine))
        print(f"undecided because: {undecided_reasons(c for c in mine if c.in_play)}")
    if len(seeds) > 1:
        print("\nall seeds")
        print(claim_table(claims))
        print(f"undecided because: {undecided_reasons(c for c in claims if c.in_play)}")
    reached = goal(claims, seeds)
    verdict = "met" if reached.met else "missed"
    print(
        f"\ngoal: >= {GOAL_SHARE:.0%} of decided claims true with >= {GOAL_DECIDED} decided"
        f" claims per seed (claims in play): {verdict} ({reached.detail})"
    )
    by_evidence = sorted({c.evidence for c in claims if c.in_play and c.evidence})
    if by_evidence:
        shown = []
        for ev in by_evidence:
            t = tally(c for c in claims if c.in_play and c.evidence == ev)
            shown.append(f"{ev} {_pct(t.share)} of {t.decided}")
        print(f"true by evidence (lesson claims in play): {'; '.join(shown)}")
    differ = [c for c in claims if c.other_skip]
    if differ:
        other = "every occurrence" if skip_last else "only the last occurrence"
        which = ", ".join(f"{c.game} s{c.seed} e{c.episode}t{c.turn}" for c in differ[:4])
        print(
            f"steps_first: {len(differ)} claim(s) would be judged otherwise skipping {other}"
            f" of the step ({which})"
        )
    false = [c for c in claims if c.verdict == FALSE]
    false.sort(key=lambda c: (not c.in_play, c.kind == "danger", c.game, c.seed))
    if false:
        print(f"\nfalse claims ({min(examples, len(false))} of {len(false)}):")
    for c in false[:examples]:
        where = f" e{c.episode}t{c.turn}" if c.turn is not None else ""
        kept = "" if c.in_play else f" [{c.status}]"
        print(f"  {c.game} s{c.seed}{where} {c.title!r}{kept}: {c.kind}: {c.claim}")
        print(f"      the game: {c.why}")
    print("\nper game (claims in play)")
    rows = [
        [
            "game",
            "seed",
            "memories",
            "lessons",
            "dangers",
            "decided",
            "true",
            "true%",
            "replayed",
            "diverged",
            "text diff",
        ]
    ]
    for a in sorted(audits, key=lambda a: (a.game, a.seed)):
        if a.error:
            rows.append([a.game, str(a.seed), "error", "", "", "", "", "", "", "", ""])
            continue
        t = tally(c for c in a.claims if c.in_play)
        diverged = ",".join(f"e{e}t{t_}" for e, t_ in sorted(a.replay.diverged.items()))
        rows.append(
            [
                a.game + ("" if a.supported else " (unsupported)"),
                str(a.seed),
                str(a.memories),
                str(a.lessons),
                str(a.dangers),
                str(t.decided),
                str(t.true),
                _pct(t.share),
                str(a.replay.turns),
                diverged or "-",
                str(a.replay.text_differs),
            ]
        )
    print(_columns(rows))
    return reached


# -- games --------------------------------------------------------------------------------------


def story_files(games: list[str]) -> list[Path]:
    found = sorted(p for p in ROMS.iterdir() if p.suffix in STORY_SUFFIXES)
    if not games:
        return found
    by_stem = {p.stem: p for p in found}
    missing = [g for g in games if g not in by_stem]
    if missing:
        sys.exit(f"no story file for {', '.join(missing)} in {ROMS}")
    return [by_stem[g] for g in games]


def tw_cache_folder() -> Path:
    """Where the lessons bench keeps its TextWorld games (the same folder, found without
    importing cairn: `$CAIRN_CACHE_DIR`, else `$XDG_CACHE_HOME/cairn`, else ~/.cache/cairn)."""
    base = os.environ.get("CAIRN_CACHE_DIR")
    if base:
        root = Path(base)
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cairn"
    try:
        tw = version("textworld")
    except PackageNotFoundError:
        tw = "none"
    return root / "lessons-games" / f"textworld-{tw}"


def untuned_games(count: int, seed: int, notes: list[str]) -> list[tuple[str, Path]]:
    """(label, story file) of `count` TextWorld games from `seed`, generated or cached."""
    if count <= 0:
        return []
    reason = textworld_games.missing()
    if reason is not None:
        notes.append(f"skipped: {reason}")
        return []
    folder = tw_cache_folder()
    made = []
    for game in textworld_games.specs(count, seed):
        try:
            made.append((game.label, textworld_games.generate(game, folder)))
        except Exception as exc:  # one game that cannot be made is a note; the rest play
            notes.append(f"{game.label}: not generated: {type(exc).__name__}: {exc}")
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", default="", help="comma-separated story stems (default: all)")
    parser.add_argument("--episodes", type=int, default=5, help="episodes per run")
    parser.add_argument("--turns", type=int, default=200, help="turns per episode")
    parser.add_argument("--seeds", default="1,2", help="comma-separated seeds, one run each")
    parser.add_argument("--workers", type=int, default=2, help="processes (1: no pool)")
    parser.add_argument("--examples", type=int, default=15, help="false claims shown")
    parser.add_argument("--llm", default="offline", help="cairn play's --llm")
    parser.add_argument(
        "--steps-skip",
        choices=("all", "last"),
        default="all",
        help="steps_first: leave out every same-room occurrence of the step, or the last only",
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the run folders here")
    parser.add_argument(
        "--reuse", type=Path, default=None, help="audit the folders an earlier --keep left"
    )
    parser.add_argument(
        "--textworld", type=int, default=0, help="TextWorld games nobody tuned for (0: none)"
    )
    parser.add_argument(
        "--textworld-seed", type=int, default=1, help="picks the TextWorld games and their seeds"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the goal is missed")
    args = parser.parse_args()
    if args.keep is not None and args.reuse is not None:
        sys.exit("--keep and --reuse exclude each other")
    if not ROMS.is_dir():
        sys.exit(f"no story files: {ROMS} is absent")
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    start = time.perf_counter()
    stories = story_files([g.strip() for g in args.games.split(",") if g.strip()])
    notes: list[str] = []
    untuned = untuned_games(args.textworld, args.textworld_seed, notes)
    base = args.reuse or args.keep
    games = [(s.stem, s, SHARED) for s in stories] + [(n, p, UNTUNED) for n, p in untuned]
    jobs = [
        Job(
            story=story,
            name=name,
            seed=seed,
            episodes=args.episodes,
            turns=args.turns,
            folder=base / f"{name}-s{seed}" if base is not None else None,
            reuse=args.reuse is not None,
            llm=args.llm,
            group=group,
            skip_last_only=args.steps_skip == "last",
        )
        for name, story, group in games
        for seed in seeds
    ]
    audits = run_jobs(jobs, args.workers)
    elapsed = time.perf_counter() - start
    shared = [a for a in audits if a.group == SHARED]
    lessons = sum(a.lessons for a in audits)
    size = f"{args.episodes} episodes x {args.turns} turns, with memory, llm {args.llm}"
    runs = f"the runs kept in {args.reuse}" if args.reuse else size
    print(
        f"truth bench: {len(stories)} games, seeds {','.join(map(str, seeds))}, {runs};"
        f" {lessons} lessons audited"
        f" ({sum(a.memories for a in audits)} memories,"
        f" {sum(a.dangers for a in audits)} DANGER memories without a death lesson)\n"
    )
    skip_last = args.steps_skip == "last"
    reached = print_block("shared games", shared, seeds, args.examples, skip_last)
    untuned_goal: Goal | None = None
    if args.textworld > 0:
        print(f"\n\ngames nobody tuned for: {len(untuned)} TextWorld games")
        for note in notes:
            print(f"  {note}")
        if untuned:
            tw = [a for a in audits if a.group == UNTUNED]
            untuned_goal = print_block("TextWorld games", tw, seeds, args.examples, skip_last)
    play = sum(a.play_seconds for a in audits)
    print(
        f"\nwall time: {elapsed:.0f} s with {args.workers} worker(s) (playing {play:.0f} s,"
        f" auditing {sum(a.audit_seconds for a in audits):.0f} s, summed over runs)"
    )
    if args.json is not None:
        dump = {
            "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "audits": [
                {
                    **{k: v for k, v in asdict(a).items() if k != "claims"},
                    "tally": {
                        kind: asdict(tally(c for c in a.claims if c.in_play and c.kind == kind))
                        for kind in KINDS
                    },
                }
                for a in audits
            ],
            "claims": [asdict(c) for a in audits for c in a.claims],
            "tables": {
                str(seed): {
                    kind: asdict(
                        tally(
                            c
                            for a in shared
                            for c in a.claims
                            if c.seed == seed and c.in_play and c.kind == kind
                        )
                    )
                    for kind in (*KINDS,)
                }
                for seed in seeds
            },
            "goal": asdict(reached),
            "untuned_goal": asdict(untuned_goal) if untuned_goal is not None else None,
            "textworld_notes": notes,
            "wall_seconds": round(elapsed, 1),
        }
        args.json.write_text(json.dumps(dump, indent=2) + "\n", encoding="utf-8")
    if args.strict and not (reached.met and (untuned_goal is None or untuned_goal.met)):
        sys.exit(1)


if __name__ == "__main__":
    main()
