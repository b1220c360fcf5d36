"""Ports: the abstract interfaces handlers and services depend on."""

from app.interfaces.map import IMapView
from app.interfaces.memory_service import IMemoryService
from app.interfaces.store import IMemoryStore, StoreTransaction
from app.interfaces.summarizer import ISummarizer, SynthesisRequest

__all__ = [
    "IMapView",
    "IMemoryService",
    "IMemoryStore",
    "ISummarizer",
    "StoreTransaction",
    "SynthesisRequest",
]
