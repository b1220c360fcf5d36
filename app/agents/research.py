"""The adventurer's research step: the model may call cairn's memory query tools before acting."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from cairn.errors import CairnError
from cairn.interfaces.llm import (
    ILLMClient,
    LLMMessage,
    LLMRequest,
    LLMResponse,
    ToolCall,
    ToolSpec,
    assistant_message,
)
from cairn.models.kinds import Role
from cairn.services.memory_query import MemoryQueryTools

log = logging.getLogger(__name__)

_STRING = {"type": "string"}

MEMORY_TOOL_SPECS = [
    ToolSpec(
        name="get_top_memories",
        description="Get the most important remembered facts (limit 1-20, default 10).",
        input_schema={
            "type": "object",
            "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 20}},
        },
    ),
    ToolSpec(
        name="query_memories",
        description=(
            "Search memories with a natural-language question, e.g. 'Where is the key?'. "
            "Answers with a one-line answer and the memories that support it, best first."
        ),
        input_schema={
            "type": "object",
            "properties": {"question": _STRING},
            "required": ["question"],
        },
    ),
    ToolSpec(
        name="get_location_memories",
        description=(
            "Get what was learned at one location, by integer id or by room name (names can "
            "repeat: the answer says which location ids matched): a short summary, then the "
            "memory titles."
        ),
        input_schema={
            "type": "object",
            "properties": {"location": {"type": ["string", "integer"]}},
            "required": ["location"],
        },
    ),
]


class MemoryToolbox:
    """Runs tool calls against MemoryQueryTools; a bad call or a failing tool returns an error
    string, so a tool never raises into the research loop."""

    def __init__(self, tools: MemoryQueryTools) -> None:
        self._run: dict[str, Callable[[dict[str, Any]], str]] = {
            "get_top_memories": lambda a: tools.get_top_memories(int(a.get("limit", 10))),
            "query_memories": lambda a: tools.query_memories(str(a.get("question", ""))),
            "get_location_memories": lambda a: tools.get_location_memories(a.get("location", "")),
        }
        self.calls: list[ToolCall] = []

    @property
    def specs(self) -> list[ToolSpec]:
        """The tools offered to the model."""
        return list(MEMORY_TOOL_SPECS)

    def run(self, call: ToolCall) -> str:
        """The tool's answer to one call."""
        self.calls.append(call)
        tool = self._run.get(call.name)
        if tool is None:
            return f"Error: unknown tool {call.name!r}."
        try:
            return tool(call.input)
        except (TypeError, ValueError) as exc:
            return f"Error: bad input for {call.name}: {exc}"
        except CairnError as exc:
            log.warning("memory tool %s failed: %s", call.name, exc)
            return f"Error: {call.name} failed: {exc}"


def research(
    client: ILLMClient,
    system: str,
    context: str,
    toolbox: MemoryToolbox,
    *,
    role: str = Role.ADVENTURER,
    max_rounds: int = 4,
    max_tokens: int = 1024,
) -> LLMResponse:
    """Ask the model, answering its memory-tool calls, until it answers without tools.

    Each tool result goes back as a `tool_result` block in the next request. After
    `max_rounds` tool rounds the last answer is returned as it is.
    """
    messages = [LLMMessage(role="user", content=context)]
    response = client.complete(
        LLMRequest(
            role=role, system=system, messages=messages, tools=toolbox.specs, max_tokens=max_tokens
        )
    )
    for _ in range(max_rounds):
        if not response.tool_calls:
            break
        results = [
            {"type": "tool_result", "tool_use_id": c.id, "content": toolbox.run(c)}
            for c in response.tool_calls
        ]
        messages = [
            *messages,
            assistant_message(response),
            LLMMessage(role="user", content=results),
        ]
        response = client.complete(
            LLMRequest(
                role=role,
                system=system,
                messages=messages,
                tools=toolbox.specs,
                max_tokens=max_tokens,
            )
        )
    else:
        log.warning("research stopped after %d tool rounds", max_rounds)
    return response
