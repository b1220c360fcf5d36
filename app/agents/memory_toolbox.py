"""The adventurer's research: the model may call cairn's memory query tools before it acts.

Research and the decision are one tool conversation (`decide_with_research`): the decision
is chosen with every tool answer in view, and each request is the previous one plus the new
turns, which the prompt cache serves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from cairn.agents.structured import (
    assistant_message,
    parse_answer,
    repair_result,
    structured_spec,
)
from cairn.errors import CairnError, LLMUnusableAnswerError
from cairn.interfaces.llm import (
    ILLMClient,
    LLMMessage,
    LLMRequest,
    LLMResponse,
    ToolCall,
    ToolSpec,
)
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
        self.research_capped = 0
        """Decisions whose research hit the round limit (warned of once: the toolbox lives
        one run)."""

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


M = TypeVar("M", bound=BaseModel)


def research_tools(toolbox: MemoryToolbox | None, model_cls: type[BaseModel]) -> list[ToolSpec]:
    """The tools a decision's requests offer: the memory tools (with a toolbox), then the
    answer's own tool."""
    own = structured_spec(model_cls)
    return [*toolbox.specs, own] if toolbox is not None else [own]

RESEARCH_OVER = "Research is over: call {tool} with your command now."
"""Told to the model with the answers of its last allowed research round."""


def decide_with_research(
    client: ILLMClient,
    request: LLMRequest,
    model_cls: type[M],
    toolbox: MemoryToolbox,
    *,
    max_rounds: int = 4,
) -> tuple[M, LLMResponse]:
    """A `model_cls` answer from one tool conversation in which the model may first call the
    memory tools.

    Every request of the conversation offers the same tools (the memory tools, then the
    answer's tool) with the same `tool_choice` (`any`: the model must call one), so each one
    starts with the whole of the previous one and the prompt cache serves it; research that
    looked nothing up costs no request of its own. Tool answers go back as `tool_result`
    blocks. After `max_rounds` research rounds, or an answer in words only, the next request
    forces the answer's tool; it still carries the whole conversation, so the answer is
    chosen from what research found. An answer that does not validate is sent back once as
    an error `tool_result`; a second one (or no answer under the forced tool) raises
    LLMUnusableAnswerError. Each invalid answer, and each in words only, is reported to the
    client (`report_unusable`). Returns the validated instance and the response that carried
    it.
    """
    spec = structured_spec(model_cls)
    tools = research_tools(toolbox, model_cls)
    choice: dict[str, Any] = {"type": "any"}
    messages = list(request.messages)
    rounds = 0
    repaired = False
    while True:
        sent = request.model_copy(
            update={"messages": messages, "tools": tools, "tool_choice": choice}
        )
        response = client.complete(sent)
        answer, call, problem = parse_answer(response, spec.name, model_cls)
        if answer is not None:
            return answer, response
        if call is not None or not response.tool_calls:  # an invalid answer, or words only
            client.report_unusable(sent)
        if (call is not None and repaired) or (call is None and choice["type"] == "tool"):
            raise LLMUnusableAnswerError(
                f"{model_cls.__name__}: no valid answer from the tool conversation "
                f"(role {request.role!r}): {problem.splitlines()[0]}"
            )
        lookups = [c for c in response.tool_calls if c.name != spec.name]
        results: list[dict[str, Any]] = []
        if call is not None:
            repaired = True
            results.append(repair_result(call, spec.name, problem))
            results += [_result(c, "Not run: the answer came in the same turn.") for c in lookups]
        elif lookups:
            rounds += 1
            results += [_result(c, toolbox.run(c)) for c in lookups]
        if call is None and (not lookups or rounds >= max_rounds):
            if lookups:
                toolbox.research_capped += 1
                say = log.warning if toolbox.research_capped == 1 else log.debug
                say(
                    "research stopped after %d tool rounds (warned once a run; %d times so far)",
                    max_rounds,
                    toolbox.research_capped,
                )
            choice = {"type": "tool", "name": spec.name}
            results.append({"type": "text", "text": RESEARCH_OVER.format(tool=spec.name)})
        messages = [
            *messages,
            assistant_message(response),
            LLMMessage(role="user", content=results),
        ]


def _result(call: ToolCall, content: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call.id, "content": content}
