"""SearchIndex: BM25 ranking of a store's memories through an in-memory SQLite FTS5 table.

The index holds one FTS5 row per memory (title, text, tags, location name; every status, so
`include_superseded` needs no second index). It is kept in step with the store incrementally,
by id, never rebuilt from everything on each search:

* before each search it reads the store's memory list (the store's own cache, which the store
  refreshes from disk when another store object or process changed the file);
* a memory whose entry is the very object indexed last time is unchanged (stores replace
  entries, never mutate them) and costs an identity check;
* a memory whose entry is a new object (an update, or a re-read of a file another process
  wrote) is compared by its indexed fields; only when those differ is its row rewritten;
* new ids are inserted and ids the store no longer holds are deleted.

So a search over an unchanged store writes nothing, and an external change costs one row
per changed memory. Filters (scope, location, NPC, status) come from the store's own
`entries(...)` selection and are applied to the ranked ids.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope
from cairn.services.memory_core import VISIBLE

TOKENIZER = "porter unicode61 remove_diacritics 2"
"""FTS5 tokenizer: Unicode words, accents folded, English stemming (`lamps` finds `lamp`)."""

WEIGHTS = (2.0, 1.0, 1.0, 0.5)
"""bm25() column weights: title, text, tags, location name."""

MAX_TERMS = 32
"""A query keeps at most this many distinct words (the rest are ignored)."""

_WORD = re.compile(r"[^\W_]+")

_Fields = tuple[str, str, str, str]


@dataclass(frozen=True)
class SearchHit:
    """One search result: the memory and its BM25 score (higher is more relevant)."""

    memory: MemoryEntry
    score: float


def fts_query(text: str) -> str:
    """Turn free text into a safe FTS5 query: each word a quoted string, joined with OR.

    FTS5 syntax in the text (quotes, AND/OR/NOT/NEAR, `*`, `^`, `-`, `:`, parentheses) is
    never interpreted: only runs of letters and digits are kept, each quoted. Returns "" when
    the text has no word (nothing to search for).
    """
    seen: dict[str, None] = {}
    for word in _WORD.findall(unicodedata.normalize("NFKC", text)):
        seen.setdefault(word.lower(), None)
        if len(seen) >= MAX_TERMS:
            break
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in seen)


def _fields(entry: MemoryEntry) -> _Fields:
    return (entry.title, entry.text, " ".join(entry.tags), entry.location_name or "")


class SearchIndex:
    """A BM25 index over one store's memories, kept in step with it incrementally by id."""

    def __init__(self, store: IMemoryStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(
            "CREATE VIRTUAL TABLE memory_fts USING fts5("
            f"title, text, tags, place, memory_id UNINDEXED, tokenize = '{TOKENIZER}')"
        )
        self._next_row = 0
        self._indexed: dict[str, tuple[int, MemoryEntry, _Fields]] = {}
        """By memory id: its FTS rowid, the entry object indexed, and its indexed fields."""
        self.writes = 0
        """Rows inserted, rewritten or deleted so far (shows that unchanged stores cost none)."""

    def sync(self, entries: Iterable[MemoryEntry] | None = None) -> None:
        """Bring the index in step with `entries` (default: the store's current memories)."""
        current = list(self._store.entries() if entries is None else entries)
        with self._lock, self._db:
            seen: set[str] = set()
            for entry in current:
                seen.add(entry.id)
                known = self._indexed.get(entry.id)
                if known is not None and known[1] is entry:
                    continue
                fields = _fields(entry)
                if known is not None and known[2] == fields:
                    self._indexed[entry.id] = (known[0], entry, fields)
                    continue
                if known is not None:
                    self._db.execute("DELETE FROM memory_fts WHERE rowid = ?", (known[0],))
                self._next_row += 1
                self._db.execute(
                    "INSERT INTO memory_fts (rowid, title, text, tags, place, memory_id) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (self._next_row, *fields, entry.id),
                )
                self._indexed[entry.id] = (self._next_row, entry, fields)
                self.writes += 1
            for gone in [i for i in self._indexed if i not in seen]:
                rowid = self._indexed.pop(gone)[0]
                self._db.execute("DELETE FROM memory_fts WHERE rowid = ?", (rowid,))
                self.writes += 1

    def search(
        self,
        query: str,
        *,
        k: int = 5,
        scope: MemoryScope | None = None,
        location_id: int | None = None,
        npc_id: str | None = None,
        include_superseded: bool = False,
    ) -> list[SearchHit]:
        """The `k` best memories for `query` by BM25, matching every given filter.

        Visible memories (ACTIVE, TENTATIVE) only unless `include_superseded`. A query with no
        word, or `k` below 1, finds nothing; FTS5 syntax in the query is never interpreted.
        """
        match = fts_query(query)
        if not match or k < 1:
            return []
        self.sync()
        allowed = {
            e.id: e
            for e in self._store.entries(
                scope=scope,
                location_id=location_id,
                npc_id=npc_id,
                statuses=None if include_superseded else VISIBLE,
            )
        }
        hits: list[SearchHit] = []
        with self._lock:
            rows = self._db.execute(
                "SELECT memory_id, bm25(memory_fts, ?, ?, ?, ?) AS rank FROM memory_fts "
                "WHERE memory_fts MATCH ? ORDER BY rank, rowid",
                (*WEIGHTS, match),
            )
            for memory_id, rank in rows:
                entry = allowed.get(memory_id)
                if entry is None:
                    continue
                hits.append(SearchHit(memory=entry, score=-float(rank)))
                if len(hits) >= k:
                    break
        return hits

    def close(self) -> None:
        """Drop the index."""
        with self._lock:
            self._db.close()
