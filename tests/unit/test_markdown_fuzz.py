"""The Memories.md reader on hostile input: arbitrary bytes, and arbitrary arrangements of the
format's own pieces, never raise anything but cairn's own error (most load with problems)."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cairn.adapters.storage.markdown_parse import parse
from cairn.errors import CairnError

PIECES = [
    "# Location Memories\n",
    "## Location 1: Hall\n",
    "## Location abc: Broken\n",
    "### Memories\n",
    "**[NOTE] Title** *(Ep1, T2)*\n",
    "**[DANGER - TENTATIVE] Other** *(Ep2, T3-1, +5)*\n",
    '<!-- cairn {"id": "m-1"} -->\n',
    '<!-- cairn {"id": 5, "importance": 9000} -->\n',
    "<!-- cairn {not json -->\n",
    "---\n",
    "# NPC Memories\n",
    "## NPC bram\n",
    "# World Memories\n",
    "**Visits:** x | **Episodes:** 1, two\n",
    "Some text.\n",
    "\n",
    "\r\n",
    "\ufeff",
    "\\u0000\n",
]
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))


def read(text: str) -> None:
    # the store's own error is allowed; anything else escaping is a bug
    with contextlib.suppress(CairnError):
        parse(text, "Memories.md")


@FUZZ
@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_raise_a_foreign_error(data: bytes) -> None:
    read(data.decode("utf-8", errors="surrogateescape"))


@FUZZ
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_arbitrary_arrangements_of_the_format_never_raise_a_foreign_error(
    parts: list[str],
) -> None:
    read("".join(parts))
