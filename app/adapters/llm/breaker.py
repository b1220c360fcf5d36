"""CircuitBreaker: stop calling a model that keeps failing, and play on with the stand-ins.

After `threshold` consecutive failures of the transport kind (unavailable, timeout, rate
limited), or a single timeout (a hanging API costs a whole timeout per call), the circuit
opens: for `cooldown` seconds every call fails at once with LLMUnavailableError, so each agent
falls back to its offline stand-in without waiting. Then one call is let through (half open);
its success closes the circuit, its failure opens it again. Every change of state is logged and
counted (`opened`, `state` in `llm_usage.circuit`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from cairn.errors import (
    LLMCircuitOpenError,
    LLMRateLimitedError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse

log = logging.getLogger(__name__)

_TRANSPORT = (LLMUnavailableError, LLMTimeoutError, LLMRateLimitedError)


class CircuitBreaker(ILLMClient):
    """Wraps a client (see the module docstring)."""

    def __init__(
        self,
        inner: ILLMClient,
        *,
        threshold: int = 3,
        cooldown: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._inner = inner
        self._threshold = threshold
        self._cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._open_until: float | None = None
        self.opened = 0
        self.rejected = 0

    @property
    def state(self) -> str:
        """"closed", "open" or "half-open"."""
        with self._lock:
            if self._open_until is None:
                return "closed"
            return "open" if self._clock() < self._open_until else "half-open"

    def snapshot(self) -> dict[str, object]:
        """For report.json: the state, how often it opened, calls refused while open."""
        return {"state": self.state, "opened": self.opened, "rejected": self.rejected}

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            if self._open_until is not None and self._clock() < self._open_until:
                self.rejected += 1
                raise LLMCircuitOpenError(
                    "circuit open: the model failed repeatedly; the offline stand-ins play on"
                )
        try:
            response = self._inner.complete(request)
        except _TRANSPORT as exc:
            self._failed(exc)
            raise
        with self._lock:
            if self._open_until is not None:
                log.warning("LLM circuit closed again: the model answered")
            self._failures, self._open_until = 0, None
        return response

    def _failed(self, exc: Exception) -> None:
        with self._lock:
            self._failures += 1
            trip = (
                isinstance(exc, LLMTimeoutError)
                or self._failures >= self._threshold
                or self._open_until is not None  # a failed half-open probe
            )
            if trip:
                self._open_until = self._clock() + self._cooldown
                self.opened += 1
                log.warning(
                    "LLM circuit open for %.0f s after %d failure(s) (%s): offline stand-ins play",
                    self._cooldown,
                    self._failures,
                    type(exc).__name__,
                )
