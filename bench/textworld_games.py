"""Games nobody tuned for: TextWorld games generated offline with `tw-make`, kept in a cache.

`specs(count, seed)` picks `count` games from `seed` alone: the kinds cycle through `KINDS`
(a custom world, a treasure hunt, a cooking game, another custom world, a coin collector, the
simple house), and each game's parameters and `--seed` are drawn from `random.Random(seed *
1000 + index)`, so the same seed gives the same games. Sizes stay within 5-12 rooms; quest
lengths 3-8 for custom worlds. TextWorld's logic has doors and containers that start closed or
locked (with their keys), and lost endings (the wrong object taken, a meal spoiled), but no
light or darkness: there are no dark rooms to generate.

`generate(spec, folder)` runs `tw-make` (the script beside the running Python) into a temporary
folder inside `folder` and moves the story file and its game.json into place; a file already
there is reused. The file name carries every parameter (`tw-lessons-custom-r7-o12-q5-s4127.z8`:
the `tw-` prefix is what makes Jericho read score, moves and the player). tw-make runs with
PYTHONHASHSEED=0: the cooking games' story files otherwise differ from process to process in the
order of a few table entries. So the same options and seed write the same story file (checked
byte for byte, all 12 default games generated in three processes, TextWorld 1.7.0).

`truth(story)` reads the game.json back with TextWorld: the room names the generator gave, the
doors and containers that start locked or closed, the walkthrough's length and the max score.
"""

from __future__ import annotations

import importlib.util
import os
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

KINDS = ("custom", "treasure", "cooking", "custom", "coin", "simple")
"""The kinds of game, in the order the games cycle through them."""

GENERATE_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class GameSpec:
    """One game to generate: the tw-make command's arguments and a name made of them."""

    label: str
    """The game's parameters in short, e.g. `custom-r7-o12-q5-s4127`."""
    args: tuple[str, ...]
    """tw-make's arguments: the challenge (or `custom`), its options and `--seed`."""

    @property
    def filename(self) -> str:
        return f"tw-lessons-{self.label}.z8"


@dataclass(frozen=True)
class GameTruth:
    """What the generator put in a game (read from its game.json)."""

    rooms: tuple[str, ...]
    locked_doors: int
    closed_doors: int
    locked_containers: int
    walkthrough: int
    max_score: int

    def describe(self) -> str:
        doors = f"{self.locked_doors} locked + {self.closed_doors} closed doors"
        return (
            f"{len(self.rooms)} rooms, {doors}, {self.locked_containers} locked containers,"
            f" walkthrough {self.walkthrough} steps, max score {self.max_score}"
        )


def missing() -> str | None:
    """Why TextWorld games cannot be generated here, or None when they can."""
    if importlib.util.find_spec("textworld") is None:
        return "TextWorld is not installed (pip install 'cairn[jericho]')"
    if tw_make() is None:
        return f"TextWorld is installed but its tw-make script is not beside {sys.executable}"
    return None


def tw_make() -> Path | None:
    """The tw-make script of the running environment, if there is one."""
    found = shutil.which("tw-make", path=str(Path(sys.executable).parent))
    return Path(found) if found else None


def spec(kind: str, rng: random.Random) -> GameSpec:
    """One game of `kind` with its parameters drawn from `rng`."""
    seed = rng.randrange(1, 100_000)
    if kind == "custom":
        rooms = rng.randint(5, 12)
        objects = rng.randint(rooms, 2 * rooms)
        quest = rng.randint(3, 8)
        label = f"custom-r{rooms}-o{objects}-q{quest}"
        args = ["custom", "--world-size", str(rooms), "--nb-objects", str(objects)]
        args += ["--quest-length", str(quest)]
    elif kind == "treasure":
        # levels 11-20: 10 rooms, doors and containers that start closed, a wrong object loses
        level = rng.randint(11, 20)
        label = f"treasure-l{level}"
        args = ["tw-treasure_hunter", "--level", str(level)]
    elif kind == "cooking":
        go = rng.choice((6, 9))
        recipe = rng.randint(1, 3)
        take = rng.randint(1, recipe)
        flags = ["--open"] + [f for f in ("--cook", "--cut") if rng.random() < 0.5]
        label = f"cooking-g{go}-r{recipe}-t{take}-" + "+".join(f[2:] for f in flags)
        args = ["tw-cooking", "--go", str(go), "--recipe", str(recipe), "--take", str(take)]
        args += [*flags, "--recipe-seed", str(rng.randrange(1, 100_000))]
    elif kind == "coin":
        # levels 103-106: a chain of 3-6 rooms with as many dead-end rooms beside it
        level = rng.randint(103, 106)
        label = f"coin-l{level}"
        args = ["tw-coin_collector", "--level", str(level)]
    elif kind == "simple":
        rewards = rng.choice(("dense", "balanced", "sparse"))
        goal = rng.choice(("detailed", "brief", "none"))
        label = f"simple-{rewards}-{goal}"
        args = ["tw-simple", "--rewards", rewards, "--goal", goal]
    else:
        raise ValueError(f"unknown kind of TextWorld game: {kind}")
    return GameSpec(label=f"{label}-s{seed}", args=(*args, "--seed", str(seed)))


def specs(count: int, seed: int) -> list[GameSpec]:
    """`count` games, the same for the same `seed`."""
    return [spec(KINDS[i % len(KINDS)], random.Random(seed * 1000 + i)) for i in range(count)]


def cache_folder() -> Path:
    """`lessons-games/textworld-VERSION` in cairn's cache folder (where the demo world is
    compiled: `$CAIRN_CACHE_DIR`, else `$XDG_CACHE_HOME/cairn`, else ~/.cache/cairn)."""
    from cairn.adapters.game.game_opener import cache_dir

    return cache_dir() / "lessons-games" / f"textworld-{version('textworld')}"


def generate(game: GameSpec, folder: Path) -> Path:
    """The game's story file in `folder`, generated by tw-make unless it is there already."""
    story = folder / game.filename
    if story.is_file() and story.with_suffix(".json").is_file():
        return story
    script = tw_make()
    if script is None:
        raise RuntimeError(missing())
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".tw-make-", dir=folder) as tmp:
        made = Path(tmp) / game.filename
        command = [str(script), *game.args, "--output", str(made), "--silent", "-f"]
        # TextWorld walks sets of names in places (the cooking game's tables): a fixed hash
        # seed makes their order, and so the story file, the same in every process
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=GENERATE_TIMEOUT_S,
            check=False,
            env=env,
        )
        if done.returncode != 0 or not made.is_file():
            said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"tw-make {' '.join(game.args)} failed: {said[0]}")
        # the json first: a story file beside it means both are complete
        os.replace(made.with_suffix(".json"), story.with_suffix(".json"))
        os.replace(made, story)
    return story


def truth(story: Path) -> GameTruth:
    """What the generator put in `story`'s game (its game.json, read with TextWorld)."""
    import textworld

    game = textworld.Game.load(str(story.with_suffix(".json")))
    types = {e.id: e.type for e in game.world.entities}

    def count(predicate: str, kind: str) -> int:
        return sum(
            1
            for fact in game.world.facts
            if fact.name == predicate and types.get(fact.arguments[0].name) == kind
        )

    return GameTruth(
        rooms=tuple(sorted(str(game.infos[r.id].name) for r in game.world.rooms)),
        locked_doors=count("locked", "d"),
        closed_doors=count("closed", "d"),
        locked_containers=count("locked", "c"),
        walkthrough=len(game.walkthrough or []),
        max_score=int(game.max_score),
    )
