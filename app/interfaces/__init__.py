"""Ports: the abstract interfaces handlers and services depend on."""

from cairn.interfaces.map import IMapView
from cairn.interfaces.memory_service import IMemoryService
from cairn.interfaces.store import IMemoryStore, StoreTransaction
from cairn.interfaces.summarizer import ISummarizer, SynthesisRequest

__all__ = [
    "IMapView",
    "IMemoryService",
    "IMemoryStore",
    "ISummarizer",
    "StoreTransaction",
    "SynthesisRequest",
]
