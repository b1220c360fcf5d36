"""What a turn teaches, as typed claims (`cairn.models.lesson`), and how the game is asked to
confirm them before they are kept: `effects` (what an action did, and whether a probe did it
again), `tester` (the questions put to a second interpreter: `ClaimTester`), `slot` (where
play and replay attach it for the memory service), `build` (a lesson from a turn, its
proposals and the game's answers), `reading` (what a lesson asks of whoever replays it)."""
