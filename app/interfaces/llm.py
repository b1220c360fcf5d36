"""The LLM port: request and response models, and ILLMClient.

How a typed answer is asked for (one forced tool, one repair) is the agents' own
(`cairn.agents.structured`); which model a role uses, the clients' (`cairn.adapters.llm.requests`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Annotated, Any, Literal

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

MAX_CALL_TOKENS = 10**9
"""More tokens than any one call can bill (context windows hold a few million): a larger count
from a server is not believed."""

TokenCount = Annotated[int, Field(strict=True, ge=0, le=MAX_CALL_TOKENS)]
"""A token count from a server's usage block: an integer (not 5.0, "5" or true), 0 to
MAX_CALL_TOKENS; anything else makes the answer unusable (never added to the totals)."""

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
    """Tokens billed for one call, as the API reported them.

    `input_tokens` counts every prompt token, cached or not, whichever API answered: OpenAI
    reports them so; Anthropic reports the cache's reads and writes apart from its
    `input_tokens`, and its client adds them in (so sums and shares mean the same for both).
    """

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cached_input_tokens: int | None = Field(default=None, ge=0)
    """Of `input_tokens`, those served from the API's prompt cache, when it says (OpenAI's
    `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`); left out
    of dumps when unknown, so recorded exchanges and logs without it stay byte for byte the
    same."""
    cache_write_input_tokens: int | None = Field(default=None, ge=0)
    """Of `input_tokens`, those written to the prompt cache by this call (Anthropic's
    `cache_creation_input_tokens`, billed above the plain input price); OpenAI has no such
    figure. Left out of dumps when unknown, as `cached_input_tokens` is."""

    @model_serializer(mode="wrap")
    def _omit_unknown_cache(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            if self.cached_input_tokens is None:
                data.pop("cached_input_tokens", None)
            if self.cache_write_input_tokens is None:
                data.pop("cache_write_input_tokens", None)
        return data

    @property
    def uncached_input_tokens(self) -> int:
        """The prompt tokens billed at the plain input price: neither read from nor written
        to the cache."""
        cached = (self.cached_input_tokens or 0) + (self.cache_write_input_tokens or 0)
        return max(0, self.input_tokens - cached)


class LLMResponse(BaseModel):
    """A model's answer: its text blocks joined, its tool calls, usage and measured latency."""

    model_config = ConfigDict(extra="forbid")

    text: str
    tool_calls: list[ToolCall]
    stop_reason: str | None
    usage: Usage
    latency_ms: float
    model: str
    reasoning: str = ""
    """What the model wrote in reasoning tags (`<thinking>`, `<think>`...), taken out of `text`
    and the tool calls' inputs at the door (`cairn.adapters.llm.model_text`); left out of dumps
    when empty, so recorded exchanges and logs stay byte for byte the same."""

    @model_serializer(mode="wrap")
    def _omit_no_reasoning(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not self.reasoning:
            data.pop("reasoning", None)
        return data


class ILLMClient(ABC):
    """Port for a language model: one request in, one complete answer out.

    Implementations raise only `cairn.errors.LLMError` subclasses for call failures and
    `ConfigError` for a role with no configured model.
    """

    @abstractmethod
    def complete(self, request: LLMRequest) -> LLMResponse:
        """Send `request` and return the model's whole answer."""

    def report_unusable(self, request: LLMRequest) -> None:  # noqa: B027 (optional hook)
        """Told by the caller that the answer `complete(request)` returned could not be used
        (the wrong schema, no tool call, empty): a client that watches the model's health
        (the circuit breaker) counts it as a failed call. Nothing by default."""

    def server(self) -> str:
        """Which model server this client asks, for a person to read ("OpenAI-compatible
        server at http://localhost:11434/v1"); the class's name when it cannot say."""
        return type(self).__name__
