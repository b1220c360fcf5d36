"""`python -m cairn`: the cairn command line."""

from cairn.cli import run

run()
