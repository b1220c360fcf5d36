"""Episode numbers that go on across runs: a run's first follows those its memory holds."""

from __future__ import annotations

from cairn.interfaces.store import IStoreReader


def next_episode(store: IStoreReader) -> int:
    """The number the next episode played into `store` takes: one past the highest episode
    its location records (every episode visits at least its first room) or its memories
    name; 1 for a store that holds none. Every store keeps both (Markdown's `**Episodes:**`
    lines, SQLite's and PostgreSQL's `episodes` columns), so a second `cairn play` in a
    folder, or on a shared memory space, goes on from episode 4 after three, and its new
    memories are labelled so."""
    last = 0
    for record in store.locations().values():
        last = max(last, *record.episodes) if record.episodes else last
    for entry in store.entries():
        if entry.episode is not None and entry.episode > last:
            last = entry.episode
    return last + 1
