"""CircuitBreaker: stop calling a model that keeps failing, and play on with the stand-ins.

After `threshold` consecutive failures (unavailable, timeout, rate limited, and answers that
cannot be used: a malformed body, or an answer a caller reports with `report_unusable`), or a
single timeout (a hanging API costs a whole timeout per call) or refused key (401/403: a bad
key will not fix itself), the circuit opens: for `cooldown` seconds every call fails at once
with LLMUnavailableError, so each agent falls back to its offline stand-in without waiting.
Then one call is let through (half open); its success closes the circuit, its failure (or its
answer reported unusable) opens it again. Every change of state is logged and counted
(`opened`, `state` in `llm_usage.circuit`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from cairn.errors import (
    LLMAuthError,
    LLMBadResponseError,
    LLMCircuitOpenError,
    LLMRateLimitedError,
    LLMTimeoutError,
    LLMUnavailableError,
    LLMUnusableAnswerError,
)
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse

log = logging.getLogger(__name__)

_COUNTED = (
    LLMUnavailableError,
    LLMTimeoutError,
    LLMRateLimitedError,
    LLMBadResponseError,
    LLMAuthError,
)
"""The failures that count towards opening; other request errors (a 400) are the request's."""
_AT_ONCE = (LLMTimeoutError, LLMAuthError)
"""The failures that open the circuit on their own."""


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
        self._before_success: tuple[int, bool] | None = None
        """The failures counted, and whether the call was a half-open probe, before the last
        answer reset them: an answer reported unusable counts as that call failing."""
        self.opened = 0
        self.rejected = 0
        self.last_failure: str | None = None
        """The last counted failure, as its error says it (for the line a stopped run ends
        with)."""

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
        except _COUNTED as exc:
            with self._lock:
                self._before_success = None
                self._failed(exc)
            raise
        with self._lock:
            probe = self._open_until is not None
            if probe:
                log.warning("LLM circuit closed again: the model answered")
            self._before_success = (self._failures, probe)
            self._failures, self._open_until = 0, None
        return response

    def report_unusable(self, request: LLMRequest) -> None:
        """The last answer could not be used: count it as a failed call after all (its
        success undone; a half-open probe's reopens the circuit), and tell the inner client."""
        with self._lock:
            if self._before_success is not None:
                self._failures, probe = self._before_success
                self._before_success = None
                if probe:
                    self._open_until = self._clock()
            self._failed(LLMUnusableAnswerError(f"unusable answer for role {request.role!r}"))
        self._inner.report_unusable(request)

    def server(self) -> str:
        return self._inner.server()

    def _failed(self, exc: Exception) -> None:
        """Count a failure (the lock held) and open the circuit when it trips."""
        self._failures += 1
        self.last_failure = str(exc)
        if self._open_until is not None and self._clock() < self._open_until:
            return  # open already (a late report of an earlier answer)
        trip = (
            isinstance(exc, _AT_ONCE)
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
