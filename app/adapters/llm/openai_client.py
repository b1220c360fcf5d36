"""OpenAIClient: the ILLMClient over the Chat Completions API, for OpenAI or any compatible
server (Ollama, vLLM, llama.cpp's server, LM Studio), with typed errors and usage."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, Literal

import openai

from cairn.adapters.llm.chat_format import (
    chat_messages,
    chat_tool_choice,
    chat_tools,
    parse_completion,
)
from cairn.adapters.llm.exchange_log import ExchangeLog, Redactor
from cairn.adapters.llm.requests import model_for_role
from cairn.adapters.llm.usage import UsageMeter
from cairn.errors import (
    ConfigError,
    LLMError,
    LLMRateLimitedError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse

logger = logging.getLogger(__name__)

_DETAIL_LIMIT = 300
OPENAI_HOST = "api.openai.com"
NO_KEY = "no-key"
"""Sent as the key to a server given by its base URL when none is configured: local servers
ignore it, and the SDK refuses to start without one."""

TokenLimit = Literal["max_tokens", "max_completion_tokens"]


class OpenAIClient(ILLMClient):
    """Calls Chat Completions with the model configured for each request's role.

    Like AnthropicClient: the SDK retries 408/409/429/5xx itself (honouring retry-after) up to
    `max_retries`; what still fails is raised as an `LLMError` subclass with the SDK error as
    its cause; every call, failed or not, is counted by `meter` and written to `log`; the key
    never appears in messages, logs or files.

    `api_key` None is for a local server that wants none (`base_url` must then be given).
    The answer-length limit goes as `max_completion_tokens` to OpenAI's own API (its newer
    models refuse `max_tokens`) and as `max_tokens` to other servers (not all know the newer
    name); `token_limit` chooses. `temperature` is sent to other servers, not to OpenAI's
    (its reasoning models answer 400 to it), unless `send_temperature` says otherwise.
    """

    def __init__(
        self,
        *,
        api_key: str | None,
        models: Mapping[str, str],
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        log: ExchangeLog | None = None,
        meter: UsageMeter | None = None,
        send_temperature: bool | None = None,
        token_limit: TokenLimit | None = None,
    ) -> None:
        if not api_key and not base_url:
            raise ConfigError(
                "llm.openai_api_key: no API key configured (OPENAI_API_KEY); only a server"
                " given by its base URL may go without one"
            )
        if timeout <= 0:
            raise ConfigError(f"llm.timeout: must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise ConfigError(f"llm.max_retries: must be >= 0, got {max_retries}")
        for role, model in models.items():
            if not model:
                raise ConfigError(f"llm.openai_models.{role}: empty model name")
        self.models: dict[str, str] = dict(models)
        self.log = log
        self.meter = meter
        self.timeout = timeout
        self.max_retries = max_retries
        self._redact = Redactor([api_key] if api_key else [])
        if log is not None and api_key:
            log.add_secret(api_key)
        self._sdk = openai.OpenAI(
            api_key=api_key or NO_KEY,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
        )
        official = self._sdk.base_url.host == OPENAI_HOST
        self.token_limit: TokenLimit = token_limit or (
            "max_completion_tokens" if official else "max_tokens"
        )
        self.send_temperature = not official if send_temperature is None else send_temperature

    def __repr__(self) -> str:
        return f"OpenAIClient(base_url={str(self._sdk.base_url)!r}, models={self.models!r})"

    def close(self) -> None:
        """Close the underlying HTTP connections."""
        self._sdk.close()

    def __enter__(self) -> OpenAIClient:
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
            "llm call role=%s model=%s in=%d (cached %s) out=%d latency_ms=%.1f",
            request.role,
            response.model,
            response.usage.input_tokens,
            response.usage.cached_input_tokens,
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

    def body(self, request: LLMRequest, model: str) -> dict[str, Any]:
        """The Chat Completions body sent for `request` (LLMRequestError when a content block
        has no Chat Completions form)."""
        body: dict[str, Any] = {
            "model": model,
            "messages": chat_messages(request),
            self.token_limit: request.max_tokens,
        }
        if request.tools:
            body["tools"] = chat_tools(request.tools)
            body.update(chat_tool_choice(request))
        if self.send_temperature:
            body["temperature"] = request.temperature
        return body

    def _call(self, request: LLMRequest, model: str, start: float) -> LLMResponse:
        where = f"LLM call for role {request.role!r} (model {model!r})"
        try:
            kwargs = self.body(request, model)
        except LLMRequestError as e:
            raise LLMRequestError(f"{where}: {e}") from e
        try:
            raw = self._sdk.chat.completions.with_raw_response.create(**kwargs)
            body = raw.text
            latency_ms = (time.perf_counter() - start) * 1000.0
        except openai.APITimeoutError as e:
            raise LLMTimeoutError(
                f"{where}: no answer within {self.timeout}s (after {self.max_retries} retries)"
            ) from e
        except openai.APIConnectionError as e:
            raise LLMUnavailableError(self._redact(f"{where}: connection failed: {e}")) from e
        except openai.RateLimitError as e:
            raise LLMRateLimitedError(self._redact(f"{where}: {_status_detail(e)}")) from e
        except openai.APIStatusError as e:
            detail = self._redact(f"{where}: {_status_detail(e)}")
            if e.status_code >= 500:
                raise LLMUnavailableError(detail) from e
            if e.status_code == 408:
                raise LLMTimeoutError(detail) from e
            raise LLMRequestError(detail) from e
        except openai.OpenAIError as e:
            raise LLMError(self._redact(f"{where}: {type(e).__name__}: {e}")) from e
        return parse_completion(
            body, model=model, latency_ms=latency_ms, where=where, scrub=self._redact
        )


def _status_detail(e: openai.APIStatusError) -> str:
    """Status, error type or code and message, and request id of an error answer, shortened."""
    raw = e.body.get("message") if isinstance(e.body, dict) else e.body  # Ollama: a string
    kind = " ".join(part for part in (e.type, e.code) if part) or "error"
    message = str(raw or "").strip() or "(no message)"
    if len(message) > _DETAIL_LIMIT:
        message = message[: _DETAIL_LIMIT - 3] + "..."
    request_id = f", request id {e.request_id}" if e.request_id else ""
    return f"HTTP {e.status_code} {kind}: {message}{request_id}"
