"""Hand edits while cairn writes: a simulated editor against a writer process, per save style.

The editor (tests/contract/editor.py) makes SAVES saves of Memories.md, each a copy of the file
as it read it a few milliseconds earlier plus a hand-written note and an edit of one writer
memory, saved in place (truncate, then write) or through a temp file and a rename. A writer
process adds memories one unit of work each, without pause, the whole time. One row per style:

    saves      editor saves made
    acked      memories the writer acknowledged
    lost mem   acknowledged memories missing from the final file (should be 0)
    lost note  hand-written notes missing (should be 0)
    lost edit  edits of writer memories missing (should be 0)
    edited     writer memories the editor edited
    merges     saves the writer merged, by where it found them: file (changed since it last
               looked), check (just before its swap), swap (landed during the swap), late (saved
               into a file it had already replaced)
    writes/s   the writer's acknowledged memories per second, editor running

Prints, asserts nothing.

    .venv/bin/python bench/hand_edit_bench.py [--saves N] [--seed S]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.contract import editor  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--saves", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    print(
        f"{'style':9} {'saves':>5} {'acked':>6} {'lost mem':>8} {'lost note':>9}"
        f" {'lost edit':>9} {'edited':>6}  {'merges':34} {'writes/s':>8}"
    )
    for style in editor.STYLES:
        with tempfile.TemporaryDirectory() as folder:
            o = editor.run(Path(folder) / "Memories.md", style, args.saves, seed=args.seed)
        merges = " ".join(f"{k} {v}" for k, v in sorted(o.merges.items()))
        print(
            f"{style:9} {o.log.saves:5} {o.acknowledged:6} {len(o.lost_memories):8}"
            f" {len(o.lost_notes):9} {len(o.lost_edits):9} {len(o.log.edited):6}  {merges:34}"
            f" {o.acknowledged / o.seconds:8.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
