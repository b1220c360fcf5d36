"""The adventurer's research step: the model may call cairn's memory query tools before acting.

What it found (the model's last answer and every tool answer) is carried into the decision
call, which is a fresh request: without it, research that stopped after its last tool round left
the decision request identical to the first one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cairn.agents.structured import assistant_message
from cairn.errors import CairnError
from cairn.interfaces.llm import (
    ILLMClient,
    LLMMessage,
    LLMRequest,
    LLMResponse,
    ToolCall,
    ToolSpec,
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


RESULT_CHARS = 600
"""A tool answer is cut to this many characters in the research digest."""
DIGEST_CHARS = 3000
"""The research digest stops adding tool answers past this many characters."""


@dataclass(frozen=True)
class Finding:
    """One memory-tool call the model made and the tool's answer."""

    call: ToolCall
    result: str

    def line(self) -> str:
        """`query_memories {"question": "..."}` then the answer, indented, cut to RESULT_CHARS."""
        args = json.dumps(self.call.input, sort_keys=True, ensure_ascii=False)
        answer = self.result.strip()
        if len(answer) > RESULT_CHARS:
            answer = answer[: RESULT_CHARS - 3].rstrip() + "..."
        body = "\n".join(f"   {line}" for line in answer.splitlines() if line.strip())
        return f"{self.call.name} {args}\n{body}" if body else f"{self.call.name} {args}"


@dataclass
class Research:
    """What the research step found: the model's last answer, every tool answer in order, and
    whether it stopped after `max_rounds` while still calling tools."""

    response: LLMResponse
    findings: list[Finding] = field(default_factory=list)
    stopped: bool = False

    @property
    def text(self) -> str:
        """The model's last answer in words ('' when it ended on tool calls)."""
        return self.response.text

    def digest(self) -> str:
        """The tool answers, numbered, each distinct call once, cut to DIGEST_CHARS in all
        ('' when no tool was called)."""
        lines: list[str] = []
        seen: set[str] = set()
        size = 0
        for index, finding in enumerate(self.findings):
            line = finding.line()
            if line in seen:
                continue
            if lines and size + len(line) > DIGEST_CHARS:
                lines.append(f"(+{len(self.findings) - index} more tool answers not shown)")
                break
            seen.add(line)
            size += len(line)
            lines.append(f"{len(seen)}. {line}")
        return "\n".join(lines)

    def notes(self) -> str:
        """What the decision call is told: the model's last words, the tool answers, and that
        research was stopped when it was ('' when it found nothing)."""
        parts = [self.text.strip()] if self.text.strip() else []
        digest = self.digest()
        if digest:
            parts.append(f"Memory tool answers, in the order you asked:\n{digest}")
        if self.stopped:
            parts.append("Research stopped here: choose the command from what it found.")
        return "\n\n".join(parts)


def research(
    client: ILLMClient,
    system: str,
    context: str,
    toolbox: MemoryToolbox,
    *,
    role: str = Role.ADVENTURER,
    max_rounds: int = 4,
    max_tokens: int = 1024,
) -> Research:
    """Ask the model, answering its memory-tool calls, until it answers without tools.

    Each tool result goes back as a `tool_result` block in the next request. After
    `max_rounds` tool rounds the last answer is returned as it is, with `stopped` set. Every
    tool answer is kept in `findings`, for the decision call (`Research.digest`).
    """
    findings: list[Finding] = []
    messages = [LLMMessage(role="user", content=context)]
    response = client.complete(
        LLMRequest(
            role=role, system=system, messages=messages, tools=toolbox.specs, max_tokens=max_tokens
        )
    )
    for _ in range(max_rounds):
        if not response.tool_calls:
            break
        answers = [Finding(c, toolbox.run(c)) for c in response.tool_calls]
        findings += answers
        results = [
            {"type": "tool_result", "tool_use_id": f.call.id, "content": f.result} for f in answers
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
    if response.tool_calls:
        log.warning("research stopped after %d tool rounds", max_rounds)
    return Research(response, findings, stopped=bool(response.tool_calls))
