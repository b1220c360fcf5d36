"""Structured answers: ask a model for a pydantic model's instance through one forced tool,
with one repair attempt (the agents' and the objective step's way to get a typed answer)."""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from cairn.errors import LLMUnusableAnswerError
from cairn.interfaces.llm import (
    ILLMClient,
    LLMMessage,
    LLMRequest,
    LLMResponse,
    ToolCall,
    ToolSpec,
)

M = TypeVar("M", bound=BaseModel)


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


def parse_answer(
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


def structured_spec(model_cls: type[BaseModel]) -> ToolSpec:
    """The tool whose input is a `model_cls` answer (its JSON schema; its docstring's first line
    describes it)."""
    name = structured_tool_name(model_cls)
    doc = (model_cls.__doc__ or "").strip()
    return ToolSpec(
        name=name,
        description=doc.splitlines()[0] if doc else f"Record the answer as a {name}.",
        input_schema=model_cls.model_json_schema(),
    )


def repair_result(call: ToolCall, tool_name: str, problem: str) -> dict[str, Any]:
    """The error `tool_result` that sends an invalid answer back with its validation errors."""
    detail = problem.split("\n", 1)[-1]
    return {
        "type": "tool_result",
        "tool_use_id": call.id,
        "is_error": True,
        "content": (
            f"The input does not match the schema:\n{detail}\n"
            f"Call {tool_name} again with corrected input."
        ),
    }


def _repair_messages(
    request: LLMRequest, response: LLMResponse, call: ToolCall | None, tool_name: str, problem: str
) -> list[LLMMessage]:
    """The conversation plus the invalid answer and a message telling the model what was wrong."""
    if call is not None:
        feedback: list[dict[str, Any]] = [
            repair_result(c, tool_name, problem)
            if c.id == call.id
            else {
                "type": "tool_result",
                "tool_use_id": c.id,
                "is_error": True,
                "content": "Ignored.",
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
    a second invalid answer raises LLMUnusableAnswerError naming the class and the first error.
    Each invalid answer is reported to the client (`report_unusable`: the circuit breaker
    counts it as a failed call).
    Returns the validated instance and the response that carried it.
    """
    spec = structured_spec(model_cls)
    name = spec.name
    forced = request.model_copy(
        update={"tools": [spec], "tool_choice": {"type": "tool", "name": name}}
    )
    response = client.complete(forced)
    answer, call, problem = parse_answer(response, name, model_cls)
    if answer is not None:
        return answer, response
    client.report_unusable(forced)
    repair = forced.model_copy(
        update={"messages": _repair_messages(forced, response, call, name, problem)}
    )
    response = client.complete(repair)
    answer, _, problem = parse_answer(response, name, model_cls)
    if answer is not None:
        return answer, response
    client.report_unusable(repair)
    raise LLMUnusableAnswerError(
        f"{model_cls.__name__}: invalid structured answer after one repair attempt "
        f"(role {request.role!r}): {problem.splitlines()[0]}"
    )
