"""The LLM port: request and response models, ILLMClient, structured output via a forced tool."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cairn.errors import ConfigError, LLMBadResponseError
from cairn.models.kinds import Role

ROLES: tuple[str, ...] = tuple(Role)
"""The roles an LLM call is made for; each role is configured with its own model."""

M = TypeVar("M", bound=BaseModel)


class ToolSpec(BaseModel):
    """A tool the model may call: its name, what it does, and the JSON schema of its input."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    input_schema: dict[str, Any]


class LLMMessage(BaseModel):
    """One turn of the conversation: plain text, or a list of Messages API content blocks."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]


class LLMRequest(BaseModel):
    """Everything one model call needs; `role` (see ROLES) selects the configured model."""

    model_config = ConfigDict(extra="forbid")

    role: str
    system: str
    messages: list[LLMMessage]
    tools: list[ToolSpec] = Field(default_factory=list)
    max_tokens: int = 1024
    temperature: float = 0.0
    tool_choice: dict[str, Any] | None = None


class ToolCall(BaseModel):
    """A tool call the model made: the tool_use block's id, the tool's name and its input."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    input: dict[str, Any]


class Usage(BaseModel):
    """Tokens billed for one call, exactly as the API reported them."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int
    output_tokens: int


class LLMResponse(BaseModel):
    """A model's answer: its text blocks joined, its tool calls, usage and measured latency."""

    model_config = ConfigDict(extra="forbid")

    text: str
    tool_calls: list[ToolCall]
    stop_reason: str | None
    usage: Usage
    latency_ms: float
    model: str


class ILLMClient(ABC):
    """Port for a language model: one request in, one complete answer out.

    Implementations raise only `cairn.errors.LLMError` subclasses for call failures and
    `ConfigError` for a role with no configured model.
    """

    @abstractmethod
    def complete(self, request: LLMRequest) -> LLMResponse:
        """Send `request` and return the model's whole answer."""


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


def structured_tool_name(model_cls: type[BaseModel]) -> str:
    """The name of the forced tool that carries a `model_cls` answer (API-legal characters)."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", model_cls.__name__)[:64] or "answer"


def _first_error(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "(root)"
    return f"{where}: {first['msg']}"


def _all_errors(error: ValidationError) -> str:
    lines = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "(root)"
        lines.append(f"- {where}: {item['msg']}")
    return "\n".join(lines)


def _parse_answer(
    response: LLMResponse, tool_name: str, model_cls: type[M]
) -> tuple[M | None, ToolCall | None, str]:
    """The validated answer, or None with the offending tool call and a description of the error."""
    call = next((c for c in response.tool_calls if c.name == tool_name), None)
    if call is None:
        return None, None, f"no call to tool {tool_name!r} in the answer"
    try:
        return model_cls.model_validate(call.input), call, ""
    except ValidationError as e:
        return None, call, f"{_first_error(e)}\n{_all_errors(e)}"


def assistant_message(response: LLMResponse) -> LLMMessage:
    """The model's answer (text and tool_use blocks) as the next assistant turn."""
    blocks: list[dict[str, Any]] = []
    if response.text:
        blocks.append({"type": "text", "text": response.text})
    for c in response.tool_calls:
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": c.input})
    if not blocks:
        blocks.append({"type": "text", "text": "(no answer)"})
    return LLMMessage(role="assistant", content=blocks)


def _repair_messages(
    request: LLMRequest, response: LLMResponse, call: ToolCall | None, tool_name: str, problem: str
) -> list[LLMMessage]:
    """The conversation plus the invalid answer and a message telling the model what was wrong."""
    if call is not None:
        detail = problem.split("\n", 1)[-1]
        feedback: list[dict[str, Any]] = [
            {
                "type": "tool_result",
                "tool_use_id": c.id,
                "is_error": True,
                "content": (
                    f"The input does not match the schema:\n{detail}\n"
                    f"Call {tool_name} again with corrected input."
                    if c.id == call.id
                    else "Ignored."
                ),
            }
            for c in response.tool_calls
        ]
    else:
        feedback = [{"type": "text", "text": f"Error: {problem}. Call the tool {tool_name}."}]
    return [
        *request.messages,
        assistant_message(response),
        LLMMessage(role="user", content=feedback),
    ]


def complete_structured(
    client: ILLMClient, request: LLMRequest, model_cls: type[M]
) -> tuple[M, LLMResponse]:
    """Ask for a `model_cls` answer through one forced tool, with one repair attempt.

    The request's tools are replaced by a single tool whose input schema is
    `model_cls.model_json_schema()`, and `tool_choice` forces it. An answer that does not
    validate is sent back once as an error `tool_result` listing the validation errors;
    a second invalid answer raises LLMBadResponseError naming the class and the first error.
    Returns the validated instance and the response that carried it.
    """
    name = structured_tool_name(model_cls)
    doc = (model_cls.__doc__ or "").strip()
    spec = ToolSpec(
        name=name,
        description=doc.splitlines()[0] if doc else f"Record the answer as a {name}.",
        input_schema=model_cls.model_json_schema(),
    )
    forced = request.model_copy(
        update={"tools": [spec], "tool_choice": {"type": "tool", "name": name}}
    )
    response = client.complete(forced)
    answer, call, problem = _parse_answer(response, name, model_cls)
    if answer is not None:
        return answer, response
    repair = forced.model_copy(
        update={"messages": _repair_messages(forced, response, call, name, problem)}
    )
    response = client.complete(repair)
    answer, _, problem = _parse_answer(response, name, model_cls)
    if answer is not None:
        return answer, response
    raise LLMBadResponseError(
        f"{model_cls.__name__}: invalid structured answer after one repair attempt "
        f"(role {request.role!r}): {problem.splitlines()[0]}"
    )
