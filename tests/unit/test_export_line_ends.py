"""`memories import` reads an export line by line at "\\n" only (issue 37, item 14): a memory
whose text holds U+2028 or U+0085 (JSON writes them raw) is one line, not two broken ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cairn.adapters.storage.transfer import EXPORT_VERSION, read_export
from cairn.errors import StoreError
from cairn.models.memory import MemoryEntry, MemoryScope


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x1c"])
def test_a_text_with_a_unicode_line_separator_is_one_line(tmp_path: Path, separator: str) -> None:
    entry = MemoryEntry(
        id="m-1", title="Two parts", text=f"first{separator}second", scope=MemoryScope.WORLD
    )
    export = tmp_path / "export.jsonl"
    lines = [json.dumps({"cairn_export": EXPORT_VERSION}), json.dumps(
        {"memory": entry.model_dump(mode="json")}, ensure_ascii=False
    )]
    export.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    records, entries = read_export(export)
    assert records == [] and [e.text for e in entries] == [entry.text]


def test_an_empty_export_is_still_refused(tmp_path: Path) -> None:
    export = tmp_path / "export.jsonl"
    export.write_text("\n\n", encoding="utf-8")
    with pytest.raises(StoreError, match="empty file"):
        read_export(export)
