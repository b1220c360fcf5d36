"""Acceptance of the PostgreSQL store: many processes writing into one memory space lose
nothing, and agents playing in parallel into one space find every memory they recorded."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from cairn.models.memory import MemoryScope
from tests.many_agents import play_agent, write_memories
from tests.postgres import open_pg_store, server

PROCESSES = 8


@pytest.mark.slow
def test_eight_processes_writing_500_memories_each_into_one_space_store_4000() -> None:
    url, space = server().url, "acceptance-8x500"
    context = multiprocessing.get_context("spawn")
    started = time.perf_counter()
    with context.Pool(PROCESSES) as pool:
        jobs = [(url, space, f"p{n}", 500) for n in range(PROCESSES)]
        acknowledged = pool.starmap(write_memories, jobs)
    seconds = time.perf_counter() - started
    ids = [memory_id for acked in acknowledged for memory_id in acked]
    assert len(ids) == len(set(ids)) == 4000
    store = open_pg_store(Path(space))
    try:
        stored = store.entries()
        assert len(stored) == 4000 and {m.id for m in stored} == set(ids)
        assert store.problems() == []
    finally:
        store.close()
    print(f"8 x 500 writes into one space: {seconds:.1f} s with process start-up")


@pytest.mark.slow
def test_eight_agents_playing_the_demo_world_in_parallel_into_one_space_keep_every_memory(
    tmp_path: Path,
) -> None:
    """Each agent plays one episode of 40 turns in Jericho, each with its own seed."""
    url, space = server().url, "acceptance-play"
    context = multiprocessing.get_context("spawn")
    with context.Pool(PROCESSES) as pool:
        jobs = [(url, space, str(tmp_path / f"agent{n}"), n, 40, True) for n in range(PROCESSES)]
        recorded = pool.starmap(play_agent, jobs)
    assert all(recorded), "every agent recorded memories"
    store = open_pg_store(Path(space))
    try:
        stored = {m.id: m for m in store.entries()}
        # one agent's memory may be superseded by another's (the same title with more to
        # say) and moved to the archive at that agent's episode end: kept, not lost
        kept = set(stored) | {m.id for m in store.archived()}
        missing = {i for ids in recorded for i in ids} - kept
        assert not missing, (
            f"recorded memories missing: {sorted(missing)[:5]}; problems: {store.problems()}"
        )
        assert store.problems() == []
        rooms = {m.location_id for m in stored.values() if m.scope is MemoryScope.LOCATION}
        visits = store.locations()
        assert rooms <= set(visits)
        assert sum(r.visits for r in visits.values()) >= PROCESSES  # every agent's visits
    finally:
        store.close()
