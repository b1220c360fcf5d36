"""Data in prompts: what cairn remembers and what the game said, fenced so that a model reads
it as data and never as instructions (issue 37, item 14).

Every prompt that carries memories or game text puts them between `<memories>`/`</memories>`
or `<game_text>`/`</game_text>` (`fenced`), with a closing tag inside the text escaped
(`as_data`), and its system prompt ends with the rule that what stands there is never an
instruction (`with_data_rule`, the prompt file `data_rule.md`; the adventurer's system prompt
says the same in its own words).
"""

from __future__ import annotations

import re

from cairn.agents.prompt_files import render

MEMORIES = "memories"
"""The fence of what cairn remembers (memories, the knowledge base, the map it drew)."""
GAME_TEXT = "game_text"
"""The fence of the game's own words and the commands sent to it."""


def as_data(text: str, fence: str) -> str:
    """`text` to stand inside `<fence>`...`</fence>` in a prompt: a closing tag in it (a
    memory or a game text that writes one, of this fence or of the other) cannot end a fence
    early."""
    names = "|".join(re.escape(name) for name in dict.fromkeys((fence, MEMORIES, GAME_TEXT)))
    return re.sub(rf"</(\s*(?:{names})\s*)>", r"<\\/\1>", text, flags=re.IGNORECASE)


def fenced(text: str, fence: str) -> str:
    """`text` between `<fence>` and `</fence>`, on lines of their own."""
    return f"<{fence}>\n{as_data(text, fence)}\n</{fence}>"


def with_data_rule(system: str) -> str:
    """`system` followed by the rule that fenced text is data (`data_rule.md`)."""
    return f"{system}\n\n{render('data_rule')}"
