"""gc_paused: the cyclic garbage collector held while a store builds its cache."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector while a store builds its cache: a load makes many
    objects that all stay alive, and collections that scan them find nothing (they cost a
    load several times its work). When it ends, the objects made meanwhile (the cache, which
    lives as long as the store) go straight to the oldest generation (`freeze` then
    `unfreeze`: two list splices), so the young collection that would follow does not scan
    them all once more (~4 ms after a load of 10,000 memories); a full collection still sees
    them. Not when the process froze objects itself (`unfreeze` would give them back)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
