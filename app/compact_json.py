"""compact_json: JSON lines cairn writes for itself (transcripts, journals, page data)."""

from __future__ import annotations

import json
from typing import Any

import orjson


def compact_json(value: Any) -> bytes:
    """`value` as compact UTF-8 JSON: orjson's, or, for what orjson refuses (a lone surrogate a
    hand edit or a non-UTF-8 name left in a tag or a name), the standard library's, which
    escapes it (`\\udce9`)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")
