"""Reading a request as a client does: the model its role is configured with, and the first
line of its prompt (for error messages and logs)."""

from __future__ import annotations

from collections.abc import Mapping

from cairn.errors import ConfigError
from cairn.interfaces.llm import LLMRequest


def model_for_role(models: Mapping[str, str], role: str) -> str:
    """The model configured for `role`; ConfigError naming the role when there is none."""
    model = models.get(role)
    if not model:
        known = ", ".join(sorted(models)) or "none"
        raise ConfigError(
            f"llm.models: no model configured for role {role!r} (configured: {known})"
        )
    return model


def first_prompt_line(request: LLMRequest) -> str:
    """The first line of the first user message's text, for error messages and logs."""
    for message in request.messages:
        if message.role != "user":
            continue
        if isinstance(message.content, str):
            text = message.content
        else:
            texts = [b.get("text") for b in message.content if b.get("type") == "text"]
            text = next((t for t in texts if isinstance(t, str)), "")
        stripped = text.strip()
        return stripped.splitlines()[0] if stripped else ""
    return ""
