"""Defaults that both the settings model and the command line's help texts show (kept in a
module with no imports, so `cairn --help` does not load the settings machinery)."""

PLAY_EPISODES = 3
PLAY_MAX_TURNS = 100
WORKDIR = "cairn-runs"
