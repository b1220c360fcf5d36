"""Walkthrough replays of every story file in ../shared/roms: location ids and room names.

For each game, Jericho's walkthrough is replayed from reset through `JerichoGame`, with a raw
`FrotzEnv` stepped alongside as the oracle (after every step it is asked `look`, on a saved
state that is restored, and its object tree is read). One row per game:

    steps      walkthrough commands sent
    ids        distinct location ids
    objects    ids that are no room (inside another object, or inside a visited location);
               should be 0
    start      the start room's name
    agree      names equal to the `look` header, over the steps where the game prints one
    no loc     turns with no location id
    end        won / died / - (neither), and the score
    memories   memories a replay of the same walkthrough through cairn's pipeline stored
    remembered visited rooms with a location memory / visited rooms (replay)
    ending     the ending remembered in the game's words: a world memory tagged `ending` whose
               text holds the final response's first line ("yes"), else "NO"
    id titles  titles holding an internal id (`objective_id=`, `ep1-t4`, `(Ball0)`, `Ticket_N`);
               should be 0
    last line  the first line of the final response

Prints, asserts nothing. To add a column (memory metrics, say), add a field to `Row`, fill it
in `replay`, and add a (title, width, getter) entry to `COLUMNS`.

    .venv/bin/python bench/walkthrough_bench.py [--roms DIR] [GAME ...]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cairn.adapters.game.jericho_game import JerichoGame  # noqa: E402
from cairn.adapters.game.rooms import find_rooms_root  # noqa: E402
from cairn.adapters.game.ztree import ObjectTree, ZStory  # noqa: E402
from cairn.interfaces.game import GameObservation  # noqa: E402
from tests.integration.test_jericho_rooms import (  # noqa: E402  the tests' own oracle
    printed_header as look_header,
)
from tests.integration.test_jericho_rooms import raw_look  # noqa: E402


@dataclass
class Row:
    """One game's replay, as the table shows it."""

    game: str
    steps: int = 0
    ids: set[int] = field(default_factory=set)
    object_ids: set[int] = field(default_factory=set)
    start: str = ""
    agree: int = 0
    headers: int = 0
    no_location: int = 0
    won: bool = False
    died: bool = False
    score: str = ""
    last_line: str = ""
    seconds: float = 0.0
    memories: int = 0
    remembered: str = ""
    ending: str = ""
    id_titles: int = 0


INTERNAL_ID = re.compile(r"\w+_id=|\bep\d+-t\d+\b|\([A-Za-z]+\d+\)|\b[A-Za-z]+_[A-Za-z0-9]+\b")


def remember(path: Path, row: Row) -> None:
    """Replay the walkthrough through cairn (the `cairn replay --walkthrough` path) and fill
    the memory columns."""
    import tempfile

    from cairn.replay.prepare import walkthrough_document
    from cairn.replay.runner import run_scenario

    with tempfile.TemporaryDirectory() as workdir:
        report = run_scenario(walkthrough_document(path), Path(workdir))
    assert report.outcome is not None
    entries = report.outcome.entries
    row.memories = len(entries)
    row.remembered = f"{report.remembered}/{report.visited}"
    endings = [e for e in entries if "ending" in e.tags]
    words = " ".join(row.last_line.split())  # the memory keeps the words, spacing collapsed
    found = any(words and words in " ".join(e.text.split()) for e in endings)
    row.ending = "yes" if found else "NO"
    row.id_titles = sum(1 for e in entries if INTERNAL_ID.search(e.title))


def without_suffix(header: str, obs: GameObservation, tree_name: str) -> str:
    """ "Frigid River, in the magic boat" -> "Frigid River" when the player is inside something
    (or the part before the suffix is the room's tree name)."""
    found = re.match(r"^(.*?)(?:, .*| \([^()]*\))$", header)
    if found and (obs.location_context or found.group(1) == tree_name):
        return found.group(1)
    return header


def is_object(tree: ObjectTree, loc: int, rooms_root: int | None) -> bool:
    """Whether location id `loc` is no room: neither at the top (Inform) nor in the rooms
    object (Infocom)."""
    return tree.parent(loc) != (rooms_root or 0)


def replay(path: Path) -> Row:
    """Replay `path`'s walkthrough and fill one row."""
    from jericho import FrotzEnv

    row = Row(path.stem)
    started = time.perf_counter()
    game = JerichoGame(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = FrotzEnv(str(path))
    story = ZStory(path.read_bytes())
    obs = game.reset()
    raw.reset()
    player = int(raw.player_obj_num)
    rooms_root = find_rooms_root(story.tree(raw.get_state()[0]), player)
    row.start = obs.location_name
    between: set[int] = set()  # objects between the player and the location, on any step

    def observe(obs: GameObservation) -> None:
        tree = story.tree(raw.get_state()[0])
        loc = obs.location_id
        if loc is None:
            row.no_location += 1
            return
        row.ids.add(loc)
        if is_object(tree, loc, rooms_root):
            row.object_ids.add(loc)
        chain = tree.ancestors(player)
        between.update(chain[: chain.index(loc)] if loc in chain else [])
        header = look_header(raw_look(raw))
        if header is not None and not obs.done:
            row.headers += 1
            row.agree += obs.location_name == without_suffix(header, obs, tree.name(loc))

    observe(obs)
    for action in game.walkthrough():
        obs = game.step(action)
        raw.step(action)
        row.steps += 1
        observe(obs)
    row.object_ids |= between & row.ids  # a location the player was ever inside of in a room
    row.won, row.died = obs.won, obs.died
    row.score = f"{obs.score}/{obs.max_score}"
    row.last_line = next((line.strip() for line in obs.text.splitlines() if line.strip()), "")
    game.close()
    raw.close()
    remember(path, row)
    row.seconds = time.perf_counter() - started
    return row


def end(row: Row) -> str:
    """ "won", "died" or "-", with the score."""
    verdict = "won" if row.won else "died" if row.died else "-"
    return f"{verdict} {row.score}"


COLUMNS: list[tuple[str, int, Callable[[Row], object]]] = [
    ("game", 13, lambda r: r.game),
    ("steps", 5, lambda r: r.steps),
    ("ids", 4, lambda r: len(r.ids)),
    ("objects", 7, lambda r: len(r.object_ids)),
    ("start", 24, lambda r: r.start),
    ("agree", 9, lambda r: f"{r.agree}/{r.headers}"),
    ("no loc", 6, lambda r: r.no_location),
    ("end", 11, end),
    ("memories", 8, lambda r: r.memories),
    ("remembered", 10, lambda r: r.remembered),
    ("ending", 6, lambda r: r.ending),
    ("id titles", 9, lambda r: r.id_titles),
    ("s", 4, lambda r: f"{r.seconds:.1f}"),
    ("last line", 40, lambda r: r.last_line),
]


def print_table(rows: list[Row]) -> None:
    """The rows under a header, one column per `COLUMNS` entry (cells cut to width)."""
    print("  ".join(title.ljust(width) for title, width, _ in COLUMNS).rstrip())
    for row in rows:
        cells = [str(get(row))[:width].ljust(width) for _, width, get in COLUMNS]
        print("  ".join(cells).rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roms", type=Path, default=ROOT.parent / "shared" / "roms")
    parser.add_argument("games", nargs="*", help="story file names (default: all in --roms)")
    args = parser.parse_args()
    if not args.roms.is_dir():
        sys.exit(f"no story files: {args.roms} is absent (pass --roms DIR)")
    names = args.games or sorted(p.name for p in args.roms.iterdir() if p.suffix[:2] == ".z")
    print_table([replay(args.roms / name) for name in names])


if __name__ == "__main__":
    main()
