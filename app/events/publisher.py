"""EventPublisher: sends signals with each receiver isolated from the others' failures."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from blinker import NamedSignal

log = logging.getLogger(__name__)


Held = list[tuple[NamedSignal, object, dict[str, Any]]]


class _Deferral(threading.local):
    """A thread's open `deferring` blocks and the events they hold: units of work belong to
    threads (a store's unit is its thread's), so a unit failing in one thread must neither
    drop nor send early what another thread's unit holds."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending: Held = []


class EventPublisher:
    """Calls every receiver of a signal; a receiver that raises is logged and skipped."""

    def __init__(self) -> None:
        self.failures = 0
        self._deferral = _Deferral()

    @contextmanager
    def deferring(self) -> Iterator[None]:
        """Hold every event this thread publishes inside the block; send them, in order, when
        its outermost block ends without an error (the bus wraps a command's unit of work in
        it, so a receiver always sees the committed state); drop them when it raises. Other
        threads' blocks and events are their own."""
        held = self._deferral
        held.depth += 1
        try:
            yield
        except BaseException:
            if held.depth == 1:
                held.pending.clear()
            raise
        finally:
            held.depth -= 1
        if held.depth == 0:
            pending, held.pending = held.pending, []
            for signal, sender, kwargs in pending:
                self._send(signal, sender, kwargs)

    def publish(self, signal: NamedSignal, sender: object, **kwargs: Any) -> None:
        """Send `signal` from `sender` (held until this thread's unit commits when it is
        deferring); one failing receiver never stops the others."""
        held = self._deferral
        if held.depth:
            held.pending.append((signal, sender, kwargs))
            return
        self._send(signal, sender, kwargs)

    def _send(self, signal: NamedSignal, sender: object, kwargs: dict[str, Any]) -> None:
        for receiver in list(signal.receivers_for(sender)):
            try:
                receiver(sender, **kwargs)
            except Exception:
                self.failures += 1
                log.exception("receiver %r of signal %r failed", receiver, signal.name)
