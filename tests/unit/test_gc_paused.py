"""`gc_paused`, held while a store loads: no collection runs during the load, and what the load
made goes to the oldest generation, unless the process froze objects itself."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from cairn.adapters.storage.gc_pause import gc_paused


def in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation=generation))


@pytest.fixture
def collector() -> Iterator[None]:
    """The collector on and nothing frozen, as a process starts (and as it was, afterwards)."""
    was_enabled, frozen = gc.isenabled(), gc.get_freeze_count()
    gc.unfreeze()
    gc.enable()
    try:
        yield
    finally:
        if frozen:
            gc.freeze()
        if not was_enabled:
            gc.disable()


def test_what_a_load_made_goes_to_the_oldest_generation(collector: None) -> None:
    with gc_paused():
        assert not gc.isenabled()
        cache = [[n] for n in range(1_000)]  # containers the collector tracks
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    assert not in_generation(cache[0], 0) and not in_generation(cache[-1], 1)
    assert in_generation(cache[0], 2) and in_generation(cache, 2)


def test_what_the_process_froze_stays_frozen(collector: None) -> None:
    kept = [[n] for n in range(10)]
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        with gc_paused():
            cache = [[n] for n in range(100)]
        assert gc.get_freeze_count() == frozen  # not given back to the collector
        assert not in_generation(kept[0], 2)
        assert not in_generation(cache[0], 2)  # and the load's objects left where they were
    finally:
        gc.unfreeze()


def test_a_collector_that_was_off_stays_off(collector: None) -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()
