"""The composition root, where the design's layout puts it: its code is the package module
`cairn.container` (app/container.py); this file only re-exports its names, the very same
objects, for a checkout's top level."""

from cairn.container import (
    Container,
    build_container,
    build_summarizer,
    llm_kind,
    make_clock,
    memory_kind,
)

__all__ = [
    "Container",
    "build_container",
    "build_summarizer",
    "llm_kind",
    "make_clock",
    "memory_kind",
]
