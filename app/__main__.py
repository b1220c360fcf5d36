"""`python -m app`: the cairn command line."""

from app.cli import run

run()
