"""report.json's text: strict JSON, a number that is not finite written as null (and logged)."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

log = logging.getLogger(__name__)


def finite(value: Any, where: str = "") -> tuple[Any, list[str]]:
    """`value` with every float that is not finite (inf, -inf, nan) replaced by None, and
    where each one was (dotted paths)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None, [where or "(top)"]
    if isinstance(value, dict):
        found: list[str] = []
        clean: dict[Any, Any] = {}
        for key, item in value.items():
            clean[key], paths = finite(item, f"{where}.{key}" if where else str(key))
            found += paths
        return clean, found
    if isinstance(value, list | tuple):
        found, items = [], []
        for index, item in enumerate(value):
            item, paths = finite(item, f"{where}[{index}]")
            items.append(item)
            found += paths
        return items, found
    return value, []


def report_json(report: dict[str, Any]) -> str:
    """`report` as indented JSON that any reader accepts (no Infinity or NaN: those become
    null, each logged with its path)."""
    clean, bad = finite(report)
    if bad:
        log.warning("report.json: numbers that are not finite written as null: %s", bad)
    return json.dumps(clean, indent=2, allow_nan=False) + "\n"
