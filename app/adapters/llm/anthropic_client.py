"""AnthropicClient: the ILLMClient over the Anthropic Messages API, with typed errors and usage."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Literal

import anthropic
from pydantic import BaseModel, ConfigDict, ValidationError

from cairn.adapters.llm.exchange_log import ExchangeLog, Redactor
from cairn.adapters.llm.prompt_cache import PromptCachePlanner
from cairn.adapters.llm.requests import model_for_role
from cairn.adapters.llm.usage import UsageMeter
from cairn.errors import (
    ConfigError,
    LLMBadResponseError,
    LLMError,
    LLMRateLimitedError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse, ToolCall, Usage

logger = logging.getLogger(__name__)

_DETAIL_LIMIT = 300


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

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None

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


class AnthropicClient(ILLMClient):
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

    def __init__(
        self,
        *,
        api_key: str,
        models: Mapping[str, str],
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        log: ExchangeLog | None = None,
        meter: UsageMeter | None = None,
        send_temperature: bool = False,
        prompt_caching: bool = True,
        cache: PromptCachePlanner | None = None,
    ) -> None:
        if not api_key:
            raise ConfigError("llm.api_key: no API key configured")
        if timeout <= 0:
            raise ConfigError(f"llm.timeout: must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise ConfigError(f"llm.max_retries: must be >= 0, got {max_retries}")
        for role, model in models.items():
            if not model:
                raise ConfigError(f"llm.models.{role}: empty model name")
        self.models: dict[str, str] = dict(models)
        self.log = log
        self.meter = meter
        self.send_temperature = send_temperature
        self.timeout = timeout
        self.max_retries = max_retries
        self.cache = (cache or PromptCachePlanner()) if prompt_caching else None
        self._redact = Redactor([api_key])
        if log is not None:
            log.add_secret(api_key)
        self._sdk = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    def __repr__(self) -> str:
        return f"AnthropicClient(base_url={str(self._sdk.base_url)!r}, models={self.models!r})"

    def close(self) -> None:
        """Close the underlying HTTP connections."""
        self._sdk.close()

    def __enter__(self) -> AnthropicClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Send `request` to the role's model; LLMError subclasses on failure."""
        model = model_for_role(self.models, request.role)
        start = time.perf_counter()
        try:
            response = self._call(request, model, start)
        except LLMError as e:
            latency_ms = (time.perf_counter() - start) * 1000.0
            logger.warning("llm call failed: %s", e)
            if self.meter is not None:
                self.meter.record_failure(request.role, latency_ms)
            if self.log is not None:
                self.log.record(
                    request=request, model=model, response=None, latency_ms=latency_ms, error=e
                )
            raise
        logger.debug(
            "llm call role=%s model=%s in=%d (cache read %s, written %s) out=%d latency_ms=%.1f",
            request.role,
            response.model,
            response.usage.input_tokens,
            response.usage.cached_input_tokens,
            response.usage.cache_write_input_tokens,
            response.usage.output_tokens,
            response.latency_ms,
        )
        if self.meter is not None:
            self.meter.record_success(
                request.role, response.usage, response.latency_ms, model=response.model or model
            )
        if self.log is not None:
            self.log.record(
                request=request,
                model=model,
                response=response,
                latency_ms=response.latency_ms,
                error=None,
            )
        return response

    def _call(self, request: LLMRequest, model: str, start: float) -> LLMResponse:
        where = f"LLM call for role {request.role!r} (model {model!r})"
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
            raw = self._sdk.messages.with_raw_response.create(**kwargs)
            body = raw.text()
            latency_ms = (time.perf_counter() - start) * 1000.0
        except anthropic.APITimeoutError as e:
            raise LLMTimeoutError(
                f"{where}: no answer within {self.timeout}s (after {self.max_retries} retries)"
            ) from e
        except anthropic.APIConnectionError as e:
            raise LLMUnavailableError(self._scrub(f"{where}: connection failed: {e}")) from e
        except anthropic.RateLimitError as e:
            raise LLMRateLimitedError(self._scrub(f"{where}: {_status_detail(e)}")) from e
        except anthropic.APIStatusError as e:
            detail = self._scrub(f"{where}: {_status_detail(e)}")
            if e.status_code >= 500:
                raise LLMUnavailableError(detail) from e
            if e.status_code == 408:
                raise LLMTimeoutError(detail) from e
            raise LLMRequestError(detail) from e
        except anthropic.AnthropicError as e:
            raise LLMError(self._scrub(f"{where}: {type(e).__name__}: {e}")) from e
        return self._parse(body, latency_ms, where)

    def _parse(self, body: str, latency_ms: float, where: str) -> LLMResponse:
        try:
            wire = _WireMessage.model_validate_json(body)
        except ValidationError as e:
            first = e.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(body)"
            raise LLMBadResponseError(
                self._scrub(
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

    def _scrub(self, text: str) -> str:
        return self._redact(text)


def _status_detail(e: anthropic.APIStatusError) -> str:
    """Status, API error type and message, and request id of an error answer, shortened."""
    kind = e.type or "error"
    message = (e.api_message or "").strip() or "(no message)"
    if len(message) > _DETAIL_LIMIT:
        message = message[: _DETAIL_LIMIT - 3] + "..."
    request_id = f", request id {e.request_id}" if e.request_id else ""
    return f"HTTP {e.status_code} {kind}: {message}{request_id}"
