"""SDKClient: what the clients over a vendor SDK (AnthropicClient, OpenAIClient) share, so each
keeps only its API's request and answer format.

Shared: the checks of the settings, the key kept out of messages and logs, every call (failed
or not) counted by the meter and written to the exchange log, and the SDK's errors turned into
`LLMError` subclasses (both SDKs raise the same family of errors, by the same names), and the
total deadline: each call runs on the SDK's async client in a `DeadlineLoop`, so `timeout` bounds
the whole call (every attempt, read and retry wait), not each read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, NamedTuple, Self

from cairn.adapters.llm.deadline import DeadlineExceeded, DeadlineLoop
from cairn.adapters.llm.exchange_log import ExchangeLog, Redactor
from cairn.adapters.llm.requests import model_for_role
from cairn.adapters.llm.retry_after import cap_note, refuse_long_waits
from cairn.adapters.llm.usage import UsageMeter
from cairn.errors import (
    ConfigError,
    LLMAuthError,
    LLMBadResponseError,
    LLMError,
    LLMRateLimitedError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse, Usage
from cairn.interfaces.metrics import BAD_RESPONSE

_DETAIL_LIMIT = 300
AUTH_STATUSES = (401, 403)
"""The answers that refuse the key (authentication, permission): LLMAuthError."""


@dataclass(frozen=True)
class SDKErrors:
    """An SDK's error classes, most specific first where one derives from another."""

    timeout: type[Exception]
    connection: type[Exception]
    rate_limited: type[Exception]
    status: type[Exception]

    @classmethod
    def of(cls, sdk: ModuleType) -> SDKErrors:
        """The error classes of the SDK module `sdk` (anthropic and openai name them alike)."""
        return cls(
            sdk.APITimeoutError, sdk.APIConnectionError, sdk.RateLimitError, sdk.APIStatusError
        )


class ErrorAnswer(NamedTuple):
    """What an SDK's error answer says: its status, error type, message and request id."""

    status: int
    kind: str
    message: str
    request_id: str | None

    def detail(self) -> str:
        """Status, error type and message, and request id, the message shortened."""
        message = self.message.strip() or "(no message)"
        if len(message) > _DETAIL_LIMIT:
            message = message[: _DETAIL_LIMIT - 3] + "..."
        request_id = f", request id {self.request_id}" if self.request_id else ""
        return f"HTTP {self.status} {self.kind or 'error'}: {message}{request_id}"


class SDKClient(ILLMClient):
    """The ILLMClient over a vendor SDK; a subclass sends the request (`_call`, raising
    `_sdk_error(e)` for the SDK's errors) and reads its error answers (`_error_answer`)."""

    errors: ClassVar[SDKErrors]
    logger: ClassVar[logging.Logger]
    api_name: ClassVar[str] = "model server"
    """What the server is called in messages ("Anthropic API", "OpenAI-compatible server")."""
    _sdk: Any

    def __init__(
        self,
        *,
        secret: str | None,
        models: Mapping[str, str],
        models_setting: str,
        timeout: float,
        max_retries: int,
        log: ExchangeLog | None,
        meter: UsageMeter | None,
        max_retry_after: float,
    ) -> None:
        if not max_retry_after >= 0:
            raise ConfigError(
                f"llm_max_retry_after: must be >= 0 seconds, got {max_retry_after}"
            )
        if timeout <= 0:
            raise ConfigError(f"llm.timeout: must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise ConfigError(f"llm.max_retries: must be >= 0, got {max_retries}")
        for role, model in models.items():
            if not model:
                raise ConfigError(f"{models_setting}.{role}: empty model name")
        self.models: dict[str, str] = dict(models)
        self.log = log
        self.meter = meter
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_after = max_retry_after
        self._redact = Redactor([secret] if secret else [])
        self._deadline = DeadlineLoop(f"{type(self).__name__.lower()}-calls")
        if log is not None and secret:
            log.add_secret(secret)

    def _http_client(self, sdk: ModuleType) -> Any:
        """The SDK's own default async httpx client, with the hook that refuses a retry-after
        over `max_retry_after` (the SDK would sleep it)."""
        hook = refuse_long_waits(self.max_retry_after)
        return sdk.DefaultAsyncHttpxClient(event_hooks={"response": [hook]})

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={str(self._sdk.base_url)!r}, models={self.models!r})"
        )

    def server(self) -> str:
        """The API and the base URL its requests go to."""
        return f"{self.api_name} at {str(self._sdk.base_url).rstrip('/')}"

    def close(self) -> None:
        """Close the underlying HTTP connections and the loop the calls run on."""
        self._deadline.close(self._sdk.close)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Send `request` to the role's model; LLMError subclasses on failure."""
        model = model_for_role(self.models, request.role)
        start = time.perf_counter()
        try:
            response = self._bounded(request, model, start)
        except LLMError as e:
            latency_ms = (time.perf_counter() - start) * 1000.0
            self.logger.warning("llm call failed: %s", e)
            if self.meter is not None:
                # a malformed answer is a failed call, counted here once under its kind
                kind = BAD_RESPONSE if isinstance(e, LLMBadResponseError) else None
                self.meter.record_failure(request.role, latency_ms, kind)
            if self.log is not None:
                self.log.record(
                    request=request, model=model, response=None, latency_ms=latency_ms, error=e
                )
            raise
        self.logger.debug(
            "llm call role=%s model=%s in=%d (%s) out=%d latency_ms=%.1f",
            request.role,
            response.model,
            response.usage.input_tokens,
            self._cache_note(response.usage),
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

    def report_unusable(self, request: LLMRequest) -> None:
        """Count the answer to `request` (an answered call) as a failure of kind bad_response."""
        if self.meter is not None:
            self.meter.record_unusable(request.role, BAD_RESPONSE)

    def _bounded(self, request: LLMRequest, model: str, start: float) -> LLMResponse:
        """`_call` within `timeout` seconds in all; LLMTimeoutError (the call cancelled, its
        connection closed) when they pass."""
        try:
            return self._deadline.run(lambda: self._call(request, model, start), self.timeout)
        except DeadlineExceeded as e:
            raise LLMTimeoutError(
                f"{self._where(request, model)}: no answer within {self.timeout}s in all"
                f" (llm_timeout; attempts, reads and retry waits included)"
            ) from e

    def _call(self, request: LLMRequest, model: str, start: float) -> Awaitable[LLMResponse]:
        """Send `request` to `model` on the async SDK client (the clock started at `start`)
        and read the answer."""
        raise NotImplementedError

    def _cache_note(self, usage: Usage) -> str:
        """The cache's share of a call's input, for the debug line."""
        return f"cached {usage.cached_input_tokens}"

    def _error_answer(self, e: Any) -> ErrorAnswer:
        """What the SDK's status error `e` says."""
        raise NotImplementedError

    @staticmethod
    def _where(request: LLMRequest, model: str) -> str:
        return f"LLM call for role {request.role!r} (model {model!r})"

    def _cap_note(self, e: Any) -> str:
        """Why the status error `e` was not retried, when its retry-after was over the cap."""
        response = getattr(e, "response", None)
        headers = getattr(response, "headers", None)
        return cap_note(headers, self.max_retry_after) if headers is not None else ""

    def _sdk_error(self, e: Exception, where: str) -> LLMError:
        """The LLMError to raise (from `e`) for the SDK's error `e`, the key scrubbed."""
        errors = self.errors
        if isinstance(e, errors.timeout):
            return LLMTimeoutError(
                f"{where}: no answer within {self.timeout}s (after {self.max_retries} retries)"
            )
        if isinstance(e, errors.connection):
            return LLMUnavailableError(self._redact(f"{where}: connection failed: {e}"))
        if isinstance(e, errors.rate_limited):
            detail = self._error_answer(e).detail() + self._cap_note(e)
            return LLMRateLimitedError(self._redact(f"{where}: {detail}"))
        if isinstance(e, errors.status):
            answer = self._error_answer(e)
            detail = self._redact(f"{where}: {answer.detail()}{self._cap_note(e)}")
            if answer.status >= 500:
                return LLMUnavailableError(detail)
            if answer.status == 408:
                return LLMTimeoutError(detail)
            if answer.status in AUTH_STATUSES:
                return LLMAuthError(detail)
            return LLMRequestError(detail)
        return LLMError(self._redact(f"{where}: {type(e).__name__}: {e}"))
