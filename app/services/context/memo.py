"""Sections (or choices) kept by the entry objects they were made from."""

from __future__ import annotations

from typing import Generic, TypeVar

_T = TypeVar("_T")


class _Memo(Generic[_T]):
    """Sections (or choices) already made, by what they were made from: memory entries are
    replaced, never changed, so the ids of the entry objects (kept alive here with the value)
    name what a section shows. A turn in a room whose memories did not change builds
    nothing again."""

    def __init__(self, kept: int = 256) -> None:
        self._kept = kept
        self._values: dict[tuple[object, ...], tuple[object, _T]] = {}

    def get(self, key: tuple[object, ...]) -> _T | None:
        hit = self._values.get(key)
        return hit[1] if hit is not None else None

    def put(self, key: tuple[object, ...], alive: object, value: _T) -> _T:
        if len(self._values) >= self._kept:
            self._values.clear()
        self._values[key] = (alive, value)
        return value
