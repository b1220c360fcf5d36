"""The live-edit protocol: what the markdown store does when a person saves Memories.md while
cairn writes it. Its rules are here, and so are its constants, each with its reason and, where
PLAN.md has one, the measurement behind it. The modules that carry the rules out import them
from here: `markdown_store` (the write policy), `live_file` and `watched_files` (reading and
watching files), `unit_remnants`, `edit_merge`, `hand_deletions`.

A person's editor takes no lock. It saves a copy of the file as it was when the person opened
it (or last reloaded it), plus their edits, either in place (truncate, then write, maybe in
several writes: same inode) or through a temp file renamed over it (a new inode). Cairn holds
`NAME.lock` for every write, and writes either an append (a unit of work between
`<!-- cairn unit -->` and `<!-- cairn unit end -->` lines at the end of the file, in its
`# Recent Memories` part) or a fold (the whole file, written to a temp file and swapped in).

1. **A save is merged, never taken whole.** Whenever the file is not the one cairn last saw
   (inode, size or modification time: one stat per read; a play turn looks once), cairn reads
   it and merges it with what it holds (`edit_merge.EditHistory`), before it writes. Saves are
   found at five moments, counted in `MarkdownMemoryStore.merges`: since cairn last looked
   (`file`); at the check just before an append or a swap (`check`); after an append, when
   the file is not exactly the appended bytes longer (`append`); in the file a swap displaced
   (`swap`: the exchange hands it back and it is compared with what was read); and saved late
   into a file cairn had already replaced (`late`, rule 8). Without the merge (the file
   re-read and taken whole), the simulated editor's run lost 2,861 of 3,107 acknowledged
   memories, all 100 hand notes and 30 of 35 hand edits with saves in place; with it, 0 / 0 / 0
   in every recorded run of both save styles (PLAN, "Hand edits while cairn writes").
2. **The merge rules.** Every file cairn writes or merges is a generation; cairn remembers
   each memory's and location record's versions by generation (the last `VERSIONS_KEPT`).
   A memory in a version cairn held is an unedited copy: cairn's version wins (it is newer or
   equal). Any other version is a person's edit: theirs wins. The newest version the copy
   shows names the file it was copied from; a memory the copy lacks is a deletion by hand
   only if that file held it (else the editor never saw it: kept), and cairn's later changes
   to a memory deleted by hand are dropped (`HandDeletions`: the deletion wins). What a
   merged save lacked and cairn kept is remembered for `ABSENT_KEPT` generations, so an older
   copy taken from that save does not delete it either. A memory cairn archived comes back
   only in a version cairn never held.
3. **The settle time: a save in place is read once it is finished.** A file changed in place
   (same inode) is read once it has not changed for `SETTLE_SECONDS`, is the same before and
   after the read, and ends with a line end (an empty file, or one cut mid-line, is a save
   still being written); cairn waits at most `SETTLE_TIMEOUT`, then takes the last read. A
   file renamed into place is whole when it appears and is read at once.
4. **The shrink rule: a big deletion, or a save cut short, is a broken save.** When a save
   lacks more than one in `SHRINK_SHARE` (half) of the memories cairn holds, and cairn holds
   at least `SHRINK_MIN_HELD`, the merge takes no deletion from it: every memory it lacks is
   kept and written back, with a warning (delete in bulk with cairn stopped). The same holds,
   whatever it lacks, for a save cut short (an editor that stopped partway): one that ends
   mid-line (taken after the settle time, rule 3), one whose last unit cairn appended never
   ended (rule 9), and one that is the start of the file cairn last read or wrote, cut at a
   line end (`LiveFile.known`). The block the cut fell in is not taken as an edit (cairn's
   version stays), and a cairn block cut in two is not kept as a fragment. A deletion by hand
   is taken from a whole save: one that ends with a line end (an editor that writes no final
   line end has its deletions kept back, with the warning). Before this, a save cut to
   40-60% of its bytes lost 79-90 acknowledged memories (issue 37); `bench/cut_save_bench.py`
   repeats it.
5. **A save meets an append.** The append is checked before and after. Before: the file must
   be the one cairn saw, else the save is merged first (`check`). After: the file must be
   exactly the appended bytes longer, else someone saved meanwhile (`append`): the save is
   merged, the unit's memories are appended again in a recent part of their own, and the
   versions the unit wrote count as held by that save's file (`EditHistory.held_too`: its
   bytes may stand in that file until cairn writes again, and a copy taken then shows them;
   without this, such a copy seemed to delete every memory the next write restored: 19-82
   memories lost in 3 of 120 loaded runs before, PLAN tenth speed session).
6. **Remnants: what a save in place leaves of an append.** When the unit landed before the
   end cairn had checked (the descriptor's offset after the `O_APPEND` write), a save in place
   was cutting the file under it, and the save's rest may have overwritten the unit's start.
   The settled file is read without what is left of the unit after the saved text's last line
   end (`unit_remnants.remnant`: the unit's own bytes, or all of it when it stands whole after
   a save that finished first), and the next write is a fold that drops it. Before this, 5 of
   104 loaded runs of the simulated editor failed, 90 of 90 after (PLAN ninth speed session).
   Cairn remembers the last `REMNANTS_KEPT` remnants it cut (those holding a cairn comment or
   marker: a shorter one cannot be told from a person's text); a later save that carries one
   whole, on lines of its own (an editor copied the file while it stood there), has it taken
   out, and the file is written again without it.
7. **A save meets a fold.** The file is checked just before the swap (`check`), and the swap
   (`renameat2(RENAME_EXCHANGE)`) hands back the file it displaced, compared with what was
   read (`swap`); either save is merged and the fold written again. When saves keep landing
   before the swap (`FOLD_TRIES` times at the check), a fold that deletes nothing gives way
   to an append of what the last save lacks. An append that meets saves `MAX_ROUNDS` times
   gives way to a fold; a fold that does fails with a `StoreError` ("the file kept
   changing").
8. **The watch window: late saves into a replaced file.** An editor that had the file open
   when a fold swapped it out may save in place into the old file. The last `WATCHED_FILES`
   files cairn replaced stay open for `WATCH_SECONDS` each; before every write, fold,
   checkpoint and close, cairn checks them (one fstat each) and merges what was saved into
   one (`late`; read with the settle time of rule 3).
9. **A torn copy is read without the torn unit.** An editor's copy taken while cairn was
   appending holds any prefix of the write. A unit is read only once its end marker is read,
   so a torn unit's memories are neither read as deleted nor as edited (the copy shows their
   older versions, or lacks them: rule 2 keeps cairn's). cairn keeps the bytes of the units it
   appended last (`UNIT_BYTES_KEPT`): a unit in a save that never ended, whose bytes begin one
   of those and stop short of its end with nothing of cairn's after them, is taken out before
   the save is parsed (`torn_units`), so what the cut left is neither reported nor allowed to
   take in the person's text below it. A unit older than those, or another writer's: what a
   cut leaves of cairn's lines at the end of a unit that never ended is dropped when every line
   of it is what a cut leaves of cairn's lines (`cut_units`); anything else there is reported
   as a block that does not parse and kept verbatim (nothing is lost; the file may need a hand
   to tidy it).
"""

from __future__ import annotations

SETTLE_SECONDS = 0.02
"""A file changed in place is read once it has been still this long (rule 3). Reason: an
editor saving in place truncates the file and writes it in one or more writes; a read between
them sees part of a save, and a memory missing from that part would look deleted by hand. The
wait is only what is left of it since the file's modification time, so it is paid only right
after a save. The value is not measured against real editors: the simulated editor pauses
0.5 ms between its two writes (`tests/contract/editor.py`), and 20 ms covers that forty times
while keeping a read after a save quick."""

SETTLE_TIMEOUT = 2.0
"""The longest a read waits for a file changed in place to settle (rule 3); then the last
read is taken. Reason: a file that keeps changing, or one a person saved without a last line
end, must not hang cairn's write; what it holds is still merged, not taken whole (rule 1).
No measurement behind the value."""

WATCH_SECONDS = 5.0
"""How long a file cairn replaced is watched for a save that lands in it late (rule 8).
Reason: an editor that had the file open before a fold swapped it out may still save in place
into the old file, which no longer has the path; cairn would never read that save. The window
bounds how long a descriptor stays open. No measurement behind the value: the simulated
editor saves within 20 ms of reading, well inside it."""

WATCHED_FILES = 4
"""Replaced files watched at once, the newest (rule 8). Reason: each is one fstat at every
write; PLAN (tenth speed session) measured the check at ~8 µs of a ~71 µs markdown write with
four folds watched."""

UNIT_BYTES_KEPT = 1 << 20
"""The bytes of the units of work cairn appended last that it looks for, torn, in later saves
(rule 9). Reason: an editor's copy read while cairn appended holds the unit cut short, and
the person's save carries it; a mebibyte is the last ~2,000 units of a play session (a unit
is ~0.5 KB), minutes of play at full speed, and is looked through only for a unit in a save
that never ended. A copy torn at a unit older than that reads as before: what the cut left of
cairn's lines kept verbatim and reported."""

REMNANTS_KEPT = 8
"""Remnants of units cairn cut from a save that it looks for in later saves (rule 6). Reason:
an editor's copy taken while a remnant stood after the saved text carries it into the
person's next save, where it read as blocks that do not parse, and a section header in it
took in every block below it: the simulated editor lost 13-22 hand notes that way in a
loaded run (PLAN tenth speed session). A remnant matters only until such a copy is saved;
the number is not measured (one per recent save in place that met an append)."""

VERSIONS_KEPT = 16
"""Versions remembered per memory and per location record, for the merge (rule 2). Reason:
the merge tells an unedited copy from an edit by finding the copy's version among those
cairn held. A copy older than the last 16 versions of a memory counts as an edit, and the
person's (older) version wins. No measurement behind the value."""

ABSENT_KEPT = 256
"""Generations of merged saves whose lacking memories are remembered (rule 2). Reason: a copy
taken from a save that lacked memories cairn kept would otherwise seem to delete them. No
measurement behind the value."""

SHRINK_SHARE = 2
"""A save that lacks more than one in this many of the memories cairn holds (half) is taken as
a broken save: no deletion is taken from it (rule 4). Reason: a sudden shrink is an editor's
partial save (a truncated file, a save in progress read at the timeout) far more often than a
person's intent. No measurement behind the value."""

SHRINK_MIN_HELD = 10
"""The shrink rule applies only when cairn holds at least this many memories (rule 4). Reason:
in a small file a person deleting most memories by hand is plausible intent. No measurement
behind the value."""

FOLD_TRIES = 3
"""Saves found at the check before a fold's swap after which a fold that deletes nothing
appends what the last save lacks instead (rule 7). Reason: a person saving every 50 ms could
starve the writer, whose folds kept failing with "the file kept changing" (PLAN, Stores)."""

MAX_ROUNDS = 20
"""Rounds of merge-and-write again (an append or a fold) before a write gives up with a
`StoreError` (rule 7). Reason: saves that never stop must end in an error that names them,
not a loop. No measurement behind the value."""
