"""Prompt files under app/agents/prompts/, loaded once and filled with string.Template."""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template


@cache
def _template(name: str) -> Template:
    text = resources.files("cairn.agents").joinpath("prompts", f"{name}.md").read_text("utf-8")
    return Template(text)


def render(name: str, **values: object) -> str:
    """The prompt file `name`.md with `$placeholders` filled (game text may hold any braces)."""
    return _template(name).substitute({k: str(v) for k, v in values.items()}).strip()
