"""The bounds of a scenario file, checked while it is read: refusing a huge one stays fast.

A scenario is input from anyone (a shared folder, a pull request): each bound is checked
before the work it limits, so a file far past one is refused in about the time a file at the
bound takes to load (`bench/scenario_refusal_bench.py` prints both).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cairn.models.memory import LocationId

MAX_SCENARIO_BYTES = 16 * 1024 * 1024
"""A scenario file is read up to this size; a larger one is refused before it is parsed."""
MAX_ITEMS = 10_000
"""Items one YAML list or mapping may hold: `steps`, `actions`, `locations`, `memories`...
Counted while the document is composed, so the item past the bound stops the parse."""
MAX_YAML_NODES = 500_000
"""Values (scalars, lists and mappings, keys included) in the whole document. A scenario at
MAX_ITEMS turn steps holds about 150,000."""
MAX_YAML_DEPTH = 64
"""Deeper nesting is rejected while composing, before any recursive walk of the node tree."""

MAX_LOCATION_ID = 2**63 - 1
"""The largest location id a scenario may name: the stores keep ids as SQLite's 64-bit signed
INTEGER (and postgres' BIGINT)."""
ScenarioLocationId = Annotated[LocationId, Field(ge=0, le=MAX_LOCATION_ID)]
"""A location id in a scenario: an integer from 0 to MAX_LOCATION_ID (Jericho's location
numbers are object numbers, never negative; strings, floats and bools are refused)."""
