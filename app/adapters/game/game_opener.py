"""Opening a game, in one place for play and replay: a story file, or the built-in demo world.

The demo world is compiled once per seed into one cache folder shared by every workdir and
replay: `$CAIRN_CACHE_DIR`, else `$XDG_CACHE_HOME/cairn`, else `~/.cache/cairn`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from cairn.extras import require
from cairn.interfaces.game import IGame


def cache_dir() -> Path:
    """Where compiled demo worlds are kept (see the module docstring)."""
    if os.environ.get("CAIRN_CACHE_DIR"):
        return Path(os.environ["CAIRN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cairn"


def open_game(
    story: Path | None,
    *,
    npc_names: list[str] | None = None,
    seed: int | None = None,
    demo_seed: int = 1,
    load_timeout: float | None = None,
) -> IGame:
    """The story file in Jericho, or (`story` None) the demo world built with `demo_seed`.

    `seed` None is the walkthrough's seed (replays); `npc_names` None: the characters are found
    from the game itself, else these names are matched; a story file whose load takes over
    `load_timeout` seconds is refused (GameError).
    """
    require("jericho", "jericho", for_what="playing a Z-machine game")
    from cairn.adapters.game.jericho_game import JerichoGame

    if story is None:
        require("textworld", "jericho", for_what="the built-in demo world")
        from cairn.adapters.game.demo_world import build_demo_world

        story = build_demo_world(cache_dir(), seed=demo_seed)
    return JerichoGame(story, npc_names=npc_names, seed=seed, load_timeout=load_timeout)


class GameOpener:
    """The game a play run plays, as the container configures it: the story file (its NPCs found
    from the game, unless the settings' `game_npcs` override names them for the story's stem),
    else the demo world built with `demo_seed`; `seed` is the player's (`play_seed`);
    `load_timeout` bounds a story's load (`story_load_timeout`)."""

    def __init__(
        self,
        game_npcs: Mapping[str, list[str]],
        demo_seed: int,
        seed: int,
        load_timeout: float | None = None,
    ) -> None:
        self._npcs = dict(game_npcs)
        self._demo_seed = demo_seed
        self._seed = seed
        self._load_timeout = load_timeout

    def open(self, story: Path | None) -> IGame:
        """The story file in Jericho, or (`story` None) the demo world."""
        npcs = self._npcs.get(story.stem) if story is not None else None
        return open_game(
            story,
            npc_names=npcs,
            seed=self._seed,
            demo_seed=self._demo_seed,
            load_timeout=self._load_timeout,
        )
