"""json_text writes the text json.dumps(indent=2, ensure_ascii=False) writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cairn.cli_options import json_text
from cairn.models.memory import MemoryEntry, MemoryScope

CONTROL = "".join(chr(i) for i in range(0x80)) + "\x9f\xa0é€😀\u2028\u2029\ufeff\u200b"


@pytest.mark.parametrize(
    "payload",
    [
        {"text": CONTROL, "quotes": '\\"/', "big": 10**30, "low": -(2**63), "none": None},
        {"empty": [], "table": {}, "nested": [[{}], {"x": [1, "y", True, False]}]},
        [],
        {},
        "plain",
        [
            MemoryEntry(
                scope=MemoryScope.NPC,
                npc_ids=["bram", "é"],
                title='A "quoted" title\twith a tab',
                text="Line one\nline two \\ and a bell \x07",
                tags=["move:north->5", "ü"],
                episode=3,
                turn_start=10**20,
            ).model_dump(mode="json")
        ],
    ],
)
def test_the_same_text_as_json_dumps(payload: Any) -> None:
    assert json_text(payload) == json.dumps(payload, indent=2, ensure_ascii=False)


def test_what_pydantic_core_cannot_write_goes_through_json_dumps() -> None:
    payload = {"store": "/tmp/caf\udce9/Memories.md"}  # a path that is not UTF-8
    assert json_text(payload) == json.dumps(payload, indent=2, ensure_ascii=False)


def test_models_are_written_as_their_json_mode_dumps() -> None:
    entry = MemoryEntry(scope=MemoryScope.WORLD, title="Storm", text="Rain é\n", tags=["a"])
    odd = MemoryEntry(scope=MemoryScope.WORLD, title="Odd", tags=["caf\udce9"])  # not UTF-8
    for entries in ([entry], [entry, odd]):
        dumped = {"store": "x", "memories": [e.model_dump(mode="json") for e in entries]}
        expected = json.dumps(dumped, indent=2, ensure_ascii=False)
        assert json_text({"store": "x", "memories": entries}) == expected
