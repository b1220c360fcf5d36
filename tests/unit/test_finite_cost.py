"""`cost_usd` is never Infinity, and report.json is strict JSON (issue 37 item 14)."""

from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from cairn.adapters.llm.prices import price_table
from cairn.adapters.llm.usage import UsageMeter
from cairn.interfaces.llm import Usage
from cairn.report.cost import dollars
from cairn.report.json_text import report_json
from cairn.settings import ModelPrice

MODEL = "claude-sonnet-4-6"


def strict(text: str) -> object:
    """Parse `text` refusing Infinity, -Infinity and NaN, as JSON itself does."""

    def refuse(name: str) -> object:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("tokens", [10**308, 10**309, 10**400])
def test_huge_token_counts_make_the_cost_unknown_not_infinite(tokens: int) -> None:
    meter = UsageMeter()
    meter.start_episode(1)
    meter.record_success("adventurer", Usage(input_tokens=tokens, output_tokens=1), 1.0, MODEL)
    cost = meter.snapshot()["cost"]
    assert cost["cost_usd"] is None and cost["cost_overflow"] is True
    assert cost["by_role"]["adventurer"]["cost_usd"] is None
    assert meter.episode_cost(1)["cost_usd"] is None
    strict(json.dumps(meter.snapshot(), allow_nan=False))


def test_a_huge_price_times_ordinary_tokens_is_unknown_too() -> None:
    price = ModelPrice(input=1e300, cache_read=0, cache_write=0, output=0)
    meter = UsageMeter(price_table({MODEL: price}))
    meter.record_success("adventurer", Usage(input_tokens=10**13, output_tokens=0), 1.0, MODEL)
    assert meter.snapshot()["cost"]["cost_usd"] is None


def test_an_ordinary_cost_is_unchanged() -> None:
    meter = UsageMeter()
    meter.record_success("adventurer", Usage(input_tokens=1_000_000, output_tokens=0), 1.0, MODEL)
    cost = meter.snapshot()["cost"]
    assert cost["cost_usd"] == 3.0 and "cost_overflow" not in cost


@pytest.mark.parametrize("price", ["inf", "Infinity", "-inf", "nan", float("inf")])
def test_a_price_that_is_not_finite_is_refused(price: object) -> None:
    with pytest.raises(ValidationError):
        price_table({MODEL: {"input": price, "cache_read": 0, "cache_write": 0, "output": 1}})


def test_report_json_writes_numbers_that_are_not_finite_as_null() -> None:
    report = {"llm_usage": {"cost": {"cost_usd": math.inf}}, "episodes": [{"x": math.nan}]}
    parsed = strict(report_json(report))
    assert parsed == {"llm_usage": {"cost": {"cost_usd": None}}, "episodes": [{"x": None}]}


def test_the_page_shows_an_infinite_cost_as_unknown() -> None:
    assert dollars(math.inf) == "unknown" and dollars(0.5) == "$0.5000"
