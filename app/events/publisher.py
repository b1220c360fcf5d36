"""EventPublisher: sends signals with each receiver isolated from the others' failures."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from blinker import NamedSignal

log = logging.getLogger(__name__)


class EventPublisher:
    """Calls every receiver of a signal; a receiver that raises is logged and skipped."""

    def __init__(self) -> None:
        self.failures = 0
        self._depth = 0
        self._pending: list[tuple[NamedSignal, object, dict[str, Any]]] = []

    @contextmanager
    def deferring(self) -> Iterator[None]:
        """Hold every event published inside the block; send them, in order, when the
        outermost block ends without an error (the bus wraps a command's unit of work in it,
        so a receiver always sees the committed state); drop them when it raises."""
        self._depth += 1
        try:
            yield
        except BaseException:
            if self._depth == 1:
                self._pending.clear()
            raise
        finally:
            self._depth -= 1
        if self._depth == 0:
            pending, self._pending = self._pending, []
            for signal, sender, kwargs in pending:
                self._send(signal, sender, kwargs)

    def publish(self, signal: NamedSignal, sender: object, **kwargs: Any) -> None:
        """Send `signal` from `sender` (held until the command commits when deferring); one
        failing receiver never stops the others."""
        if self._depth:
            self._pending.append((signal, sender, kwargs))
            return
        self._send(signal, sender, kwargs)

    def _send(self, signal: NamedSignal, sender: object, kwargs: dict[str, Any]) -> None:
        for receiver in list(signal.receivers_for(sender)):
            try:
                receiver(sender, **kwargs)
            except Exception:
                self.failures += 1
                log.exception("receiver %r of signal %r failed", receiver, signal.name)
