"""HandDeletions: memories a person deleted by hand, whose later changes are dropped (rule 2 of
the live-edit protocol, `live_edit`)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from cairn.adapters.storage.store_ops import StoreOp, changed_id

log = logging.getLogger(__name__)


class HandDeletions:
    """Memories a person deleted: cairn's later changes to them are dropped, not errors."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._ids: set[str] = set()

    def update(self, ids: Iterable[str]) -> None:
        """Memories a merge found deleted by hand."""
        self._ids.update(ids)

    def without(self, ops: Sequence[StoreOp]) -> list[StoreOp]:
        """`ops` less those that change a memory a person deleted (the deletion wins)."""
        if not self._ids:
            return list(ops)
        kept = [op for op in ops if changed_id(op) not in self._ids]
        if len(kept) < len(ops):
            log.info(
                "%s: dropped %d changes to memories deleted by hand",
                self._path,
                len(ops) - len(kept),
            )
        return kept
