"""Ports: the abstract interfaces handlers and services depend on.

The names below are imported on first use (PEP 562), so a module that needs only the store's
port (the memory commands) does not build the game models the memory service's port names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.lazy_names import lazy_getattr

if TYPE_CHECKING:
    from cairn.interfaces.map import IMapView
    from cairn.interfaces.memory_service import IMemoryService
    from cairn.interfaces.store import IMemoryStore, StoreTransaction
    from cairn.interfaces.summarizer import ISummarizer, RulesVerdict, SynthesisRequest

_HOMES = {
    "IMapView": "map",
    "IMemoryService": "memory_service",
    "IMemoryStore": "store",
    "StoreTransaction": "store",
    "ISummarizer": "summarizer",
    "RulesVerdict": "summarizer",
    "SynthesisRequest": "summarizer",
}

__getattr__ = lazy_getattr("cairn.interfaces", _HOMES)

__all__ = [
    "IMapView",
    "IMemoryService",
    "IMemoryStore",
    "ISummarizer",
    "RulesVerdict",
    "StoreTransaction",
    "SynthesisRequest",
]
