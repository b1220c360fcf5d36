"""EventPublisher: sends signals with each receiver isolated from the others' failures."""

from __future__ import annotations

import logging
from typing import Any

from blinker import NamedSignal

log = logging.getLogger(__name__)


class EventPublisher:
    """Calls every receiver of a signal; a receiver that raises is logged and skipped."""

    def __init__(self) -> None:
        self.failures = 0

    def publish(self, signal: NamedSignal, sender: object, **kwargs: Any) -> None:
        """Send `signal` from `sender`; one failing receiver never stops the others."""
        for receiver in list(signal.receivers_for(sender)):
            try:
                receiver(sender, **kwargs)
            except Exception:
                self.failures += 1
                log.exception("receiver %r of signal %r failed", receiver, signal.name)
