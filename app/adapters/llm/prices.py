"""What LLM calls cost: dollars per million tokens of each kind, per model, and a call's price.

A model the table does not name has no price: its cost is unknown (None), never guessed from a
similar name. Only a dated snapshot of a named model (`claude-sonnet-4-5-20250929`,
`gpt-4.1-2025-04-14`) takes that model's price.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from cairn.interfaces.llm import Usage
from cairn.settings import ModelPrice

PER = 1_000_000
"""Prices are per this many tokens."""

__all__ = ["DEFAULT_PRICES", "PER", "ModelPrice", "PriceTable", "call_cost", "price_table"]
_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


def call_cost(price: ModelPrice, usage: Usage) -> float:
    """Dollars for one call's `usage` at `price`; inf when the figures are too large for a
    float (the meter counts such a cost as unknown, never as Infinity)."""
    try:
        return (
            usage.uncached_input_tokens * price.input
            + (usage.cached_input_tokens or 0) * price.cache_read
            + (usage.cache_write_input_tokens or 0) * price.cache_write
            + usage.output_tokens * price.output
        ) / PER
    except OverflowError:  # an int too large to convert to float
        return math.inf


def _anthropic(input: float, output: float) -> ModelPrice:
    """Anthropic's rule: cache reads at 0.1x the input price, 5-minute writes at 1.25x."""
    return ModelPrice(
        input=input, cache_read=round(input * 0.1, 4), cache_write=input * 1.25, output=output
    )


def _openai(input: float, cached: float, output: float) -> ModelPrice:
    return ModelPrice(input=input, cache_read=cached, cache_write=input, output=output)


DEFAULT_PRICES: dict[str, ModelPrice] = {
    # Anthropic list prices (the models cairn's settings name first)
    "claude-sonnet-4-6": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "claude-sonnet-4-0": _anthropic(3.0, 15.0),
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4-0": _anthropic(15.0, 75.0),
    "claude-opus-4": _anthropic(15.0, 75.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    # OpenAI list prices (cached input as OpenAI bills it)
    "gpt-4.1": _openai(2.0, 0.5, 8.0),
    "gpt-4.1-mini": _openai(0.4, 0.1, 1.6),
    "gpt-4.1-nano": _openai(0.1, 0.025, 0.4),
    "gpt-4o": _openai(2.5, 1.25, 10.0),
    "gpt-4o-mini": _openai(0.15, 0.075, 0.6),
}
"""List prices in US dollars per million tokens (Anthropic: 5-minute cache writes). Prices
change: the `llm_prices` setting overrides or adds models."""


class PriceTable:
    """The defaults with the user's `llm_prices` over them; `price` finds a model's entry."""

    def __init__(
        self,
        overrides: Mapping[str, ModelPrice] | None = None,
        defaults: Mapping[str, ModelPrice] = DEFAULT_PRICES,
    ) -> None:
        self._prices: dict[str, ModelPrice] = {**defaults, **(overrides or {})}

    def price(self, model: str) -> ModelPrice | None:
        """`model`'s prices: its own entry, else the entry of the model it is a dated snapshot
        of; None when the table has neither."""
        found = self._prices.get(model)
        if found is None:
            base = _SNAPSHOT.sub("", model)
            found = self._prices.get(base) if base != model else None
        return found

    def cost(self, model: str, usage: Usage) -> float | None:
        """Dollars for one call of `model`; None when the model has no price."""
        price = self.price(model)
        return call_cost(price, usage) if price is not None else None

    def models(self) -> list[str]:
        """The models priced, sorted."""
        return sorted(self._prices)


def price_table(
    overrides: Mapping[str, ModelPrice | Mapping[str, Any]] | None = None,
    list_prices: bool = True,
) -> PriceTable:
    """The price table with `overrides` (the `llm_prices` setting, as models or plain
    mappings, e.g. from a dumped settings object) over the defaults; `list_prices` False
    leaves the defaults out (a server that is not the vendor's own: only `overrides` price
    its calls, every other model's cost is unknown)."""
    checked = {
        model: price if isinstance(price, ModelPrice) else ModelPrice.model_validate(price)
        for model, price in (overrides or {}).items()
    }
    return PriceTable(checked, DEFAULT_PRICES if list_prices else {})
