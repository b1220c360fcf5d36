"""Characters found from the game itself on every story file in ../shared/roms (issue 38, item 8).

Each game's Jericho walkthrough is replayed from reset through `JerichoGame` with no list of
names (the characters are found from the object tree and the parser's answers, `cast`), and
again with the detection off (`npc_names=[]`) for the time it costs. One row per game:

    steps     walkthrough commands sent
    animate   the attribute found to mark characters ("-": none found)
    found     names ever in `npcs_present` (the NPC scope's "present"), in order of appearance
    not       of those, the ones a reader would not call characters (`NOT_CHARACTERS`: this
              bench's hand-made judgement, for the precision figure; no rule reads it)
    engaged   observations where a character is both present and named in the text (what an
              NPC memory needs)
    s / off   seconds for the replay with detection / without

and a last line with the totals and the precision (found that are characters / found).

    .venv/bin/python bench/characters_bench.py [--roms DIR] [GAME ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cairn.adapters.game.jericho_game import JerichoGame  # noqa: E402

NOT_CHARACTERS = {
    "curses": {"adamantine knight", "hollow man"},  # statues the game lets one address
    "lostpig": {"statue of gnome"},  # a statue
    "theatre": {"rienhart's corpse", "ragged skeleton"},  # the dead
}
"""Objects the games flag as animate that a reader would not call characters."""


def replay(path: Path, detect: bool) -> tuple[int, str, dict[str, None], int, float]:
    """(steps, animate attribute, names present in order, engaged observations, seconds)."""
    started = time.perf_counter()
    game = JerichoGame(path, npc_names=None if detect else [])
    seen = [game.reset()]
    for action in game.walkthrough():
        seen.append(game.step(action))
        if seen[-1].done:
            break
    found: dict[str, None] = {}
    engaged = 0
    for obs in seen:
        found.update(dict.fromkeys(obs.npcs_present))
        engaged += bool(set(obs.npcs_present) & set(obs.npcs_mentioned))
    characters = game._cast._characters
    animate = characters.animate if characters is not None else None
    game.close()
    return (
        len(seen) - 1,
        "-" if animate is None else str(animate),
        found,
        engaged,
        time.perf_counter() - started,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roms", type=Path, default=ROOT.parent / "shared" / "roms")
    parser.add_argument("games", nargs="*", help="story file names (default: all in --roms)")
    args = parser.parse_args()
    paths = [args.roms / g for g in args.games] or sorted(
        p for p in args.roms.iterdir() if p.suffix in (".z3", ".z5", ".z8")
    )
    print(f"{'game':14} {'steps':>5} {'animate':>7} {'found':>5} {'not':>3} {'engaged':>7}"
          f" {'s':>6} {'off':>6}  names")
    totals = [0, 0, 0.0, 0.0]
    for path in paths:
        steps, animate, found, engaged, seconds = replay(path, detect=True)
        off = replay(path, detect=False)[-1]
        wrong = NOT_CHARACTERS.get(path.stem, set()) & set(found)
        totals = [totals[0] + len(found), totals[1] + len(wrong), totals[2] + seconds,
                  totals[3] + off]
        print(f"{path.stem:14} {steps:5} {animate:>7} {len(found):5} {len(wrong):3} {engaged:7}"
              f" {seconds:6.1f} {off:6.1f}  {', '.join(found)}")
    found_total, wrong_total = int(totals[0]), int(totals[1])
    precision = (found_total - wrong_total) / found_total if found_total else 1.0
    print(f"total: {found_total} found, {wrong_total} not characters (precision {precision:.0%});"
          f" {totals[2]:.1f} s with detection, {totals[3]:.1f} s without")


if __name__ == "__main__":
    main()
