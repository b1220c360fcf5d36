"""cairn's requests as Chat Completions bodies, and Chat Completions answers as LLMResponses.

cairn speaks in Messages API content blocks (`text`, `tool_use`, `tool_result`: the agents and
recorded cassettes use them), so the OpenAI-compatible adapter translates at its edge: a
tool_use block becomes an assistant `tool_calls` entry, a tool_result block a `tool` message,
a forced tool a `tool_choice`; and back, `tool_calls` become ToolCalls and `finish_reason` the
Messages API's stop reasons. Pure functions, no SDK: the translation is tested on its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cairn.errors import LLMBadResponseError, LLMRequestError
from cairn.interfaces.llm import LLMRequest, LLMResponse, TokenCount, ToolCall, ToolSpec, Usage

STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
"""Chat Completions `finish_reason` -> the Messages API `stop_reason` cairn's agents read."""


def chat_messages(request: LLMRequest) -> list[dict[str, Any]]:
    """The system prompt as a system message, then each turn in Chat Completions form."""
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        if isinstance(message.content, str):
            out.append({"role": message.role, "content": message.content})
        elif message.role == "assistant":
            out.append(_assistant_turn(message.content))
        else:
            out.extend(_user_turn(message.content))
    return out


def _assistant_turn(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {"name": block["name"], "arguments": arguments},
                }
            )
        else:
            raise _no_form(kind)
    turn: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        turn["tool_calls"] = calls
    return turn


def _user_turn(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool results first (each a `tool` message, right after the assistant's calls, as the
    API requires), then the user's text blocks as one user message."""
    results: list[dict[str, Any]] = []
    texts: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            content = _result_text(block.get("content"))
            if block.get("is_error") and not content.startswith("Error"):
                content = f"Error: {content}"  # the API has no is_error: say it in the text
            results.append(
                {"role": "tool", "tool_call_id": block["tool_use_id"], "content": content}
            )
        elif kind == "text":
            texts.append(str(block.get("text", "")))
        else:
            raise _no_form(kind)
    if texts:
        results.append({"role": "user", "content": "\n\n".join(texts)})
    return results


def _result_text(content: Any) -> str:
    """A tool_result's content: a string, or text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n\n".join(str(b.get("text", "")) for b in blocks)
    return "" if content is None else str(content)


def _no_form(kind: object) -> LLMRequestError:
    return LLMRequestError(f"a {kind!r} content block has no Chat Completions form")


def chat_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Each tool as a function with its JSON schema as `parameters`."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]


def chat_tool_choice(request: LLMRequest) -> dict[str, Any]:
    """`tool_choice` (and `parallel_tool_calls`) for a request's Messages API tool_choice.

    A forced tool that is the only tool offered (every structured answer) is sent as
    "required", which means the same there: llama.cpp's server and LM Studio accept only the
    string forms, and OpenAI and vLLM take both. A forced tool among others is named.
    """
    choice = request.tool_choice
    if choice is None or not request.tools:
        return {}
    kind = choice.get("type")
    out: dict[str, Any] = {}
    if kind == "tool":
        name = choice.get("name")
        if [t.name for t in request.tools] == [name]:
            out["tool_choice"] = "required"
        else:
            out["tool_choice"] = {"type": "function", "function": {"name": name}}
    elif kind in ("auto", "none"):
        out["tool_choice"] = kind
    elif kind == "any":
        out["tool_choice"] = "required"
    else:
        raise LLMRequestError(f"tool_choice {choice!r} has no Chat Completions form")
    if choice.get("disable_parallel_tool_use"):
        out["parallel_tool_calls"] = False
    return out


class _WireFunction(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)
    arguments: str | dict[str, Any] | None = None


class _WireToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    function: _WireFunction


class _WireMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    content: str | list[dict[str, Any]] | None = None
    refusal: str | None = None
    tool_calls: list[_WireToolCall] | None = None


class _WireChoice(BaseModel):
    model_config = ConfigDict(extra="allow")

    message: _WireMessage
    finish_reason: str | None = None


class _WireTokenDetails(BaseModel):
    model_config = ConfigDict(extra="allow")

    cached_tokens: TokenCount | None = None


class _WireUsage(BaseModel):
    model_config = ConfigDict(extra="allow")

    prompt_tokens: TokenCount = 0
    completion_tokens: TokenCount = 0
    prompt_tokens_details: _WireTokenDetails | None = None


class _WireCompletion(BaseModel):
    """A Chat Completions answer, checked before it is trusted: at least one choice with a
    message. `model` and `usage` may be missing (some compatible servers leave them out)."""

    model_config = ConfigDict(extra="allow")

    model: str | None = None
    choices: list[_WireChoice] = Field(min_length=1)
    usage: _WireUsage | None = None


def parse_completion(
    body: str,
    *,
    model: str,
    latency_ms: float,
    where: str,
    scrub: Callable[[str], str],
) -> LLMResponse:
    """The first choice of a Chat Completions body as an LLMResponse; LLMBadResponseError
    (its message passed through `scrub`) when the body is not one."""
    try:
        wire = _WireCompletion.model_validate_json(body)
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(body)"
        raise LLMBadResponseError(
            scrub(f"{where}: malformed answer body ({loc}: {first['msg']}): {body[:80]!r}")
        ) from e
    choice = wire.choices[0]
    message = choice.message
    calls = [
        _tool_call(call, index, where, scrub) for index, call in enumerate(message.tool_calls or [])
    ]
    text = _text(message.content)
    stop = STOP_REASONS.get(choice.finish_reason or "", choice.finish_reason)
    if not text and message.refusal:
        text, stop = message.refusal, "refusal"
    if calls:  # some servers say "stop" with tool calls in the message
        stop = "tool_use"
    usage = wire.usage or _WireUsage()
    details = usage.prompt_tokens_details
    return LLMResponse(
        text=text,
        tool_calls=calls,
        stop_reason=stop,
        usage=Usage(
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            cached_input_tokens=details.cached_tokens if details is not None else None,
        ),
        latency_ms=round(latency_ms, 3),
        model=wire.model or model,
    )


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
    return content or ""


def _tool_call(
    call: _WireToolCall, index: int, where: str, scrub: Callable[[str], str]
) -> ToolCall:
    """A tool call with its arguments as an object (empty when the server sent none); the id
    is made from the position when a server leaves it out, so the tool result can answer it."""
    name = call.function.name
    raw = call.function.arguments
    if isinstance(raw, dict):
        arguments: Any = raw
    elif raw is None or not raw.strip():
        arguments = {}
    else:
        try:
            arguments = json.loads(raw)
        except ValueError:
            arguments = None
    if not isinstance(arguments, dict):
        raise LLMBadResponseError(
            scrub(f"{where}: tool call {name!r}: arguments are not a JSON object: {raw!r:.80}")
        )
    return ToolCall(id=call.id or f"call_{index}", name=name, input=arguments)
