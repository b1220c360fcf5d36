"""AnthropicClient: the ILLMClient over the Anthropic Messages API, with typed errors and usage."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Literal

import anthropic
from pydantic import BaseModel, ConfigDict, ValidationError

from cairn.adapters.llm.client_base import ErrorAnswer, SDKClient, SDKErrors
from cairn.adapters.llm.exchange_log import ExchangeLog
from cairn.adapters.llm.prompt_cache import PromptCachePlanner
from cairn.adapters.llm.usage import UsageMeter
from cairn.errors import ConfigError, LLMBadResponseError
from cairn.interfaces.llm import LLMRequest, LLMResponse, TokenCount, ToolCall, Usage

logger = logging.getLogger(__name__)


class _WireBlock(BaseModel):
    """One content block of a Messages API answer; only text and tool_use are used."""

    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None


class _WireUsage(BaseModel):
    model_config = ConfigDict(extra="allow")

    input_tokens: TokenCount
    output_tokens: TokenCount
    cache_creation_input_tokens: TokenCount | None = None
    cache_read_input_tokens: TokenCount | None = None

    def usage(self) -> Usage:
        """Our Usage: every prompt token in `input_tokens`, the cache's share apart (the API
        counts the tokens it read from or wrote to the cache outside its `input_tokens`)."""
        read = self.cache_read_input_tokens
        write = self.cache_creation_input_tokens
        return Usage(
            input_tokens=self.input_tokens + (read or 0) + (write or 0),
            output_tokens=self.output_tokens,
            cached_input_tokens=read,
            cache_write_input_tokens=write,
        )


class _WireMessage(BaseModel):
    """The shape of a Messages API answer, checked strictly before it is trusted."""

    model_config = ConfigDict(extra="allow")

    type: Literal["message"]
    role: Literal["assistant"]
    model: str
    content: list[_WireBlock]
    stop_reason: str | None
    usage: _WireUsage


class AnthropicClient(SDKClient):
    """Calls the Messages API with the model configured for each request's role.

    The SDK retries 408/409/429/5xx itself (honouring retry-after) up to `max_retries`;
    what still fails is raised as an `LLMError` subclass with the SDK error as its cause.
    Every call, failed or not, is counted by `meter` and written to `log`. The API key
    never appears in messages, logs or files: it is registered with the log's redactor
    and scrubbed from every error message.

    `temperature` is not sent unless `send_temperature` is true: the API deprecated it and
    newer models answer 400 to it (SDK 2.x has no such argument; it then goes in the body).
    It stays part of the request hash either way.

    Prompt caching: `cache` (a `PromptCachePlanner`, one of its own by default) marks the
    tools, the system prompt and the user sections that repeat with `cache_control`; the
    tokens the API read from or wrote to its cache come back in `Usage`. `prompt_caching`
    False sends requests unmarked.
    """

    errors = SDKErrors.of(anthropic)
    logger = logger
    api_name = "Anthropic Messages API"
    _sdk: anthropic.AsyncAnthropic

    def __init__(
        self,
        *,
        api_key: str,
        models: Mapping[str, str],
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        max_retry_after: float = 60.0,
        log: ExchangeLog | None = None,
        meter: UsageMeter | None = None,
        send_temperature: bool = False,
        prompt_caching: bool = True,
        cache: PromptCachePlanner | None = None,
    ) -> None:
        if not api_key:
            raise ConfigError("llm.api_key: no API key configured")
        super().__init__(
            secret=api_key,
            models=models,
            models_setting="llm.models",
            timeout=timeout,
            max_retries=max_retries,
            log=log,
            meter=meter,
            max_retry_after=max_retry_after,
        )
        self.send_temperature = send_temperature
        self.cache = (cache or PromptCachePlanner()) if prompt_caching else None
        self._sdk = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=self._http_client(anthropic),
        )

    async def _call(self, request: LLMRequest, model: str, start: float) -> LLMResponse:
        where = self._where(request, model)
        kwargs: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens}
        if self.cache is not None:
            wire = self.cache.plan(request, model)
            kwargs["messages"] = wire.messages
            if wire.system:
                kwargs["system"] = wire.system
            if wire.tools:
                kwargs["tools"] = wire.tools
        else:
            kwargs["messages"] = [m.model_dump(mode="json") for m in request.messages]
            if request.system:
                kwargs["system"] = request.system
            if request.tools:
                kwargs["tools"] = [t.model_dump(mode="json") for t in request.tools]
        if request.tool_choice is not None:
            kwargs["tool_choice"] = request.tool_choice
        if self.send_temperature:
            kwargs["extra_body"] = {"temperature": request.temperature}
        try:
            raw = await self._sdk.messages.with_raw_response.create(**kwargs)
            body = await raw.text()
            latency_ms = (time.perf_counter() - start) * 1000.0
        except anthropic.AnthropicError as e:
            raise self._sdk_error(e, where) from e
        return self._parse(body, latency_ms, where)

    def _parse(self, body: str, latency_ms: float, where: str) -> LLMResponse:
        try:
            wire = _WireMessage.model_validate_json(body)
        except ValidationError as e:
            first = e.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(body)"
            raise LLMBadResponseError(
                self._redact(
                    f"{where}: malformed answer body ({loc}: {first['msg']}): {body[:80]!r}"
                )
            ) from e
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in wire.content:
            if block.type == "text":
                texts.append(block.text or "")
            elif block.type == "tool_use":
                if block.id is None or block.name is None or block.input is None:
                    raise LLMBadResponseError(
                        f"{where}: tool_use block without id, name or input object"
                    )
                calls.append(ToolCall(id=block.id, name=block.name, input=block.input))
        return LLMResponse(
            text="".join(texts),
            tool_calls=calls,
            stop_reason=wire.stop_reason,
            usage=wire.usage.usage(),
            latency_ms=round(latency_ms, 3),
            model=wire.model,
        )

    def _cache_note(self, usage: Usage) -> str:
        return f"cache read {usage.cached_input_tokens}, written {usage.cache_write_input_tokens}"

    def _error_answer(self, e: anthropic.APIStatusError) -> ErrorAnswer:
        return ErrorAnswer(e.status_code, e.type or "", e.api_message or "", e.request_id)
