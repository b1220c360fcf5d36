"""The LLM port: request and response models, and ILLMClient.

How a typed answer is asked for (one forced tool, one repair) is the agents' own
(`cairn.agents.structured`); which model a role uses, the clients' (`cairn.adapters.llm.requests`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from cairn.models.kinds import Role

ROLES: tuple[str, ...] = tuple(Role)
"""The roles an LLM call is made for; each role is configured with its own model."""

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
    cached_input_tokens: int | None = None
    """Of `input_tokens`, those served from the API's prompt cache, when it says (OpenAI's
    `prompt_tokens_details.cached_tokens`); left out of dumps when unknown, so recorded
    exchanges and logs without it stay byte for byte the same."""

    @model_serializer(mode="wrap")
    def _omit_unknown_cache(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if self.cached_input_tokens is None and isinstance(data, dict):
            data.pop("cached_input_tokens", None)
        return data


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
