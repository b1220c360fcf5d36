"""The rows of a database store's archive table (memories as JSON) read back as memories."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from pydantic import ValidationError

from cairn.models.memory import MemoryEntry

log = logging.getLogger(__name__)


def archived_entries(texts: Iterable[str], where: object) -> list[MemoryEntry]:
    """An archive table's memories from their JSON, in the order given; one that does not
    validate is warned about and left out."""
    found: list[MemoryEntry] = []
    for data in texts:
        try:
            found.append(MemoryEntry.model_validate_json(data))
        except ValidationError as e:
            log.warning("%s: an archived memory is invalid: %s", where, e)
    return found
