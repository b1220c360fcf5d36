"""Agents for the many-agents tests, run in separate processes (importable by `spawn`): each
returns the ids of the memories its store acknowledged."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_memories(url: str, space: str, prefix: str, count: int) -> list[str]:
    """Add `count` memories, one unit of work each (see `tests.contract.writer`)."""
    from tests.contract.writer import writer_entry
    from tests.postgres import open_pg_store

    store = open_pg_store(Path(space), url=url)
    acknowledged: list[str] = []
    try:
        for n in range(count):
            entry = writer_entry(prefix, n)
            with store.transaction() as tx:
                tx.add(entry)
            acknowledged.append(entry.id)
    finally:
        store.close()
    return acknowledged


def play_agent(url: str, space: str, workdir: str, seed: int, turns: int, demo: bool) -> list[str]:
    """Play one episode (the demo world in Jericho, else FakeGame) with the postgres store;
    return the ids of the memories recorded (sent after each durable commit)."""
    from cairn.events.events import connect, memory_recorded
    from cairn.play.runner import run_play
    from cairn.settings import load_settings
    from cairn.testing import FakeGame

    settings = load_settings(
        workdir=workdir, store="postgres", database_url=url, memory_space=space
    )
    recorded: list[str] = []

    def note(sender: Any, **kwargs: Any) -> None:
        recorded.append(kwargs["entry"].id)

    connect(memory_recorded, note)
    game = None if demo else FakeGame()
    run_play(settings, episodes=1, max_turns=turns, seed=seed, game=game)
    return recorded
