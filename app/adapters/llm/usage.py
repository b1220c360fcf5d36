"""UsageMeter: per-run totals of LLM calls, failures, tokens and latency, overall and per role."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from cairn.interfaces.llm import Usage


@dataclass
class _Totals:
    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    latency_ms: float = 0.0

    def add(self, usage: Usage | None, latency_ms: float, failed: bool) -> None:
        self.calls += 1
        self.failures += int(failed)
        if usage is not None:
            self.input_tokens += usage.input_tokens
            self.output_tokens += usage.output_tokens
            self.cached_input_tokens += usage.cached_input_tokens or 0
        self.latency_ms += latency_ms

    def as_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "calls": self.calls,
            "failures": self.failures,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_ms": round(self.latency_ms, 3),
        }
        if self.cached_input_tokens:  # only APIs that report a prompt cache (OpenAI's) have it
            result["cached_input_tokens"] = self.cached_input_tokens
        return result


class UsageMeter:
    """Counts every logical LLM call of a run (SDK retries inside one call count once).

    `calls` includes failed calls; `failures` counts those that raised. Tokens are the exact
    figures the API reported; `cached_input_tokens` (part of `input_tokens`) appears once an
    API reported some. Safe to share between threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = _Totals()
        self._by_role: dict[str, _Totals] = {}
        self._by_kind: dict[str, int] = {}

    def record_success(self, role: str, usage: Usage, latency_ms: float) -> None:
        """Count one answered call with its reported token usage."""
        self._add(role, usage, latency_ms, failed=False)

    def record_failure(self, role: str, latency_ms: float) -> None:
        """Count one call that raised (no tokens are known for it)."""
        self._add(role, None, latency_ms, failed=True)

    def record_unusable(self, role: str, kind: str) -> None:
        """Count an answered call whose answer could not be used (no content, text where a
        tool call was required, the wrong tool): a failure of kind `kind`, e.g. bad_response."""
        with self._lock:
            self._total.failures += 1
            self._by_role.setdefault(role, _Totals()).failures += 1
            self._by_kind[kind] = self._by_kind.get(kind, 0) + 1

    def record_fallback(self, kind: str) -> None:
        """Count a turn an agent played on the offline stand-in, by the failure's kind."""
        with self._lock:
            key = f"fallback:{kind}"
            self._by_kind[key] = self._by_kind.get(key, 0) + 1

    def _add(self, role: str, usage: Usage | None, latency_ms: float, failed: bool) -> None:
        with self._lock:
            self._total.add(usage, latency_ms, failed)
            self._by_role.setdefault(role, _Totals()).add(usage, latency_ms, failed)

    def snapshot(self) -> dict[str, Any]:
        """Totals so far: calls, failures, input/output tokens, latency_ms, and `by_role`."""
        with self._lock:
            result = self._total.as_dict()
            result["by_role"] = {role: t.as_dict() for role, t in sorted(self._by_role.items())}
            result["failures_by_kind"] = dict(sorted(self._by_kind.items()))
            return result
