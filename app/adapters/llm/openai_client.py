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
from cairn.adapters.llm.client_base import ErrorAnswer, SDKClient, SDKErrors
from cairn.adapters.llm.exchange_log import ExchangeLog
from cairn.adapters.llm.usage import UsageMeter
from cairn.errors import ConfigError, LLMRequestError
from cairn.interfaces.llm import LLMRequest, LLMResponse

logger = logging.getLogger(__name__)

OPENAI_HOST = "api.openai.com"
NO_KEY = "no-key"
"""Sent as the key to a server given by its base URL when none is configured: local servers
ignore it, and the SDK refuses to start without one."""

TokenLimit = Literal["max_tokens", "max_completion_tokens"]


class OpenAIClient(SDKClient):
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

    errors = SDKErrors.of(openai)
    logger = logger
    api_name = "OpenAI-compatible server"
    _sdk: openai.AsyncOpenAI

    def __init__(
        self,
        *,
        api_key: str | None,
        models: Mapping[str, str],
        base_url: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        max_retry_after: float = 60.0,
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
        super().__init__(
            secret=api_key,
            models=models,
            models_setting="llm.openai_models",
            timeout=timeout,
            max_retries=max_retries,
            log=log,
            meter=meter,
            max_retry_after=max_retry_after,
        )
        self._sdk = openai.AsyncOpenAI(
            api_key=api_key or NO_KEY,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=self._http_client(openai),
        )
        official = self._sdk.base_url.host == OPENAI_HOST
        self.token_limit: TokenLimit = token_limit or (
            "max_completion_tokens" if official else "max_tokens"
        )
        self.send_temperature = not official if send_temperature is None else send_temperature

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

    async def _call(self, request: LLMRequest, model: str, start: float) -> LLMResponse:
        where = self._where(request, model)
        try:
            kwargs = self.body(request, model)
        except LLMRequestError as e:
            raise LLMRequestError(f"{where}: {e}") from e
        try:
            raw = await self._sdk.chat.completions.with_raw_response.create(**kwargs)
            body = raw.text
            latency_ms = (time.perf_counter() - start) * 1000.0
        except openai.OpenAIError as e:
            raise self._sdk_error(e, where) from e
        return parse_completion(
            body, model=model, latency_ms=latency_ms, where=where, scrub=self._redact
        )

    def _error_answer(self, e: openai.APIStatusError) -> ErrorAnswer:
        raw = e.body.get("message") if isinstance(e.body, dict) else e.body  # Ollama: a string
        kind = " ".join(part for part in (e.type, e.code) if part)
        return ErrorAnswer(e.status_code, kind, str(raw or ""), e.request_id)
