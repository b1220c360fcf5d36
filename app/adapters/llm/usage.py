"""UsageMeter: per-run totals of LLM calls, failures, tokens, cost and latency, overall, per
role and per episode."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

from cairn.adapters.llm.prices import PriceTable
from cairn.interfaces.llm import Usage

COST_DIGITS = 8
"""Dollars are rounded to 1e-8 in snapshots (a cheap call costs a few hundred millionths)."""


@dataclass
class _Totals:
    calls: int = 0
    failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_input_tokens: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    unpriced: set[str] = field(default_factory=set)
    """Models answered calls here that the price table does not name: the cost is unknown."""
    overflow: bool = False
    """A cost here was too large for a float (absurd token counts or prices): unknown too."""

    def add(self, usage: Usage | None, latency_ms: float, failed: bool, cost: Cost) -> None:
        self.calls += 1
        self.failures += int(failed)
        if usage is not None:
            self.input_tokens += usage.input_tokens
            self.output_tokens += usage.output_tokens
            self.cached_input_tokens += usage.cached_input_tokens or 0
            self.cache_write_input_tokens += usage.cache_write_input_tokens or 0
            if cost.dollars is None:
                self.unpriced.add(cost.model)
            elif math.isfinite(total := self.cost_usd + cost.dollars):
                self.cost_usd = total
            else:
                self.overflow = True
        self.latency_ms += latency_ms

    def tokens(self) -> dict[str, int]:
        """Input (all of it), of which read from and written to the prompt cache, output."""
        return {
            "input": self.input_tokens,
            "cache_read": self.cached_input_tokens,
            "cache_write": self.cache_write_input_tokens,
            "output": self.output_tokens,
        }

    def cost(self) -> dict[str, Any]:
        """`tokens`, `cost_usd` (None when a model had no price or a cost was too large for a
        float: `cost_overflow` then says so) and the unpriced models. Always finite or None."""
        unknown = bool(self.unpriced) or self.overflow
        result: dict[str, Any] = {
            "tokens": self.tokens(),
            "cost_usd": None if unknown else round(self.cost_usd, COST_DIGITS),
        }
        if self.unpriced:
            result["unpriced_models"] = sorted(self.unpriced)
        if self.overflow:
            result["cost_overflow"] = True
        return result

    def as_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "calls": self.calls,
            "failures": self.failures,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_ms": round(self.latency_ms, 3),
        }
        if self.cached_input_tokens:  # only APIs that report a prompt cache have it
            result["cached_input_tokens"] = self.cached_input_tokens
        if self.cache_write_input_tokens:
            result["cache_write_input_tokens"] = self.cache_write_input_tokens
        return result


@dataclass(frozen=True)
class Cost:
    """One call's price: dollars, or None when `model` has no price."""

    model: str
    dollars: float | None


class UsageMeter:
    """Counts every logical LLM call of a run (SDK retries inside one call count once).

    `calls` includes failed calls; `failures` counts those that raised or whose answer could
    not be used (`record_unusable`, once per answer, a repaired one too). Tokens are the figures
    the API reported (`input_tokens` every prompt token, `cached_input_tokens` and
    `cache_write_input_tokens` the cache's part of them, appearing once an API reported some).
    The snapshot's `cost` gives `tokens` and `cost_usd` (from `prices`, the default list
    prices when none is given) overall, per role and per episode (`start_episode` says which
    one is played). A model without a price makes the cost of every total it is part of
    unknown (None). Safe to share between threads.
    """

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.prices = prices if prices is not None else PriceTable()
        self._lock = threading.Lock()
        self._total = _Totals()
        self._by_role: dict[str, _Totals] = {}
        self._by_episode: dict[int, _Totals] = {}
        self._episode: int | None = None
        self._by_kind: dict[str, int] = {}

    def start_episode(self, episode: int) -> None:
        """Count the calls from now on towards `episode` (until the next one starts)."""
        with self._lock:
            self._episode = episode
            self._by_episode.setdefault(episode, _Totals())

    def record_success(
        self, role: str, usage: Usage, latency_ms: float, model: str | None = None
    ) -> None:
        """Count one answered call of `model` with its reported token usage (priced from the
        table; without a model the price is unknown)."""
        dollars = self.prices.cost(model, usage) if model else None
        self._add(role, usage, latency_ms, failed=False, cost=Cost(model or "?", dollars))

    def record_failure(self, role: str, latency_ms: float, kind: str | None = None) -> None:
        """Count one call that raised (no tokens are known for it); a `kind` (e.g.
        bad_response for a malformed answer) is counted in `failures_by_kind` too."""
        self._add(role, None, latency_ms, failed=True, cost=Cost("?", 0.0))
        if kind is not None:
            with self._lock:
                self._by_kind[kind] = self._by_kind.get(kind, 0) + 1

    def record_unusable(self, role: str, kind: str) -> None:
        """Count an answered call (counted already) whose answer could not be used (no content,
        text where a tool call was required, the wrong tool): a failure of kind `kind`, e.g.
        bad_response, once per answer."""
        with self._lock:
            self._total.failures += 1
            self._by_role.setdefault(role, _Totals()).failures += 1
            if self._episode is not None:
                self._by_episode[self._episode].failures += 1
            self._by_kind[kind] = self._by_kind.get(kind, 0) + 1

    def record_fallback(self, kind: str) -> None:
        """Count a turn an agent played on the offline stand-in, by the failure's kind."""
        with self._lock:
            key = f"fallback:{kind}"
            self._by_kind[key] = self._by_kind.get(key, 0) + 1

    def _add(
        self, role: str, usage: Usage | None, latency_ms: float, failed: bool, cost: Cost
    ) -> None:
        with self._lock:
            self._total.add(usage, latency_ms, failed, cost)
            self._by_role.setdefault(role, _Totals()).add(usage, latency_ms, failed, cost)
            if self._episode is not None:
                self._by_episode[self._episode].add(usage, latency_ms, failed, cost)

    def snapshot(self) -> dict[str, Any]:
        """Totals so far: calls, failures, input/output tokens, latency_ms, `by_role`,
        `failures_by_kind`, and `cost`: `tokens` and `cost_usd` overall, `by_role` and
        `by_episode` (keyed by the episode's number as text)."""
        with self._lock:
            result = self._total.as_dict()
            result["by_role"] = {role: t.as_dict() for role, t in sorted(self._by_role.items())}
            result["failures_by_kind"] = dict(sorted(self._by_kind.items()))
            result["cost"] = {
                **self._total.cost(),
                "by_role": {role: t.cost() for role, t in sorted(self._by_role.items())},
                "by_episode": {
                    str(number): t.cost() for number, t in sorted(self._by_episode.items())
                },
            }
            return result

    def episode_cost(self, episode: int) -> dict[str, Any]:
        """`tokens` and `cost_usd` of the calls made while `episode` was played."""
        with self._lock:
            totals = self._by_episode.get(episode, _Totals())
            return totals.cost()
