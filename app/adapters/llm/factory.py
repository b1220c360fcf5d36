"""Choose the LLM client from the `llm` setting: offline, anthropic, openai, cassette, record;
and find its circuit breaker. (Which summarizer a client gets is the container's choice.)"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict
from urllib.parse import urlsplit

from pydantic import SecretStr

from cairn.adapters.llm.breaker import CircuitBreaker
from cairn.adapters.llm.cassette import CassetteClient
from cairn.adapters.llm.exchange_log import ExchangeLog
from cairn.adapters.llm.usage import UsageMeter
from cairn.errors import ConfigError
from cairn.extras import require
from cairn.interfaces.llm import ROLES, ILLMClient

API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
OPENAI_KEY_VARIABLE = "OPENAI_API_KEY"
OPENAI_URL_VARIABLE = "OPENAI_BASE_URL"
APIS = ("anthropic", "openai")
OPENAI_HOST = "api.openai.com"
OPENAI_DEFAULT_MODELS: dict[str, str] = {
    "adventurer": "gpt-4.1",
    "synthesis": "gpt-4.1-mini",
    "summary": "gpt-4.1-mini",
    "objective": "gpt-4.1",
    "query": "gpt-4.1-mini",
}
"""The models OpenAI's own API is asked for when `openai_models` names none. Never sent to any
other server: a local one answers for its own models, which cairn cannot guess."""


class _Options(TypedDict):
    """The constructor arguments both SDK clients take alike."""

    timeout: float
    max_retries: int
    max_retry_after: float
    log: ExchangeLog
    meter: UsageMeter


@dataclass(frozen=True)
class _Transport:
    """How either SDK client calls and records: its time limit, retries, log and meter."""

    timeout: float
    max_retries: int
    log_path: Path
    meter: UsageMeter
    max_retry_after: float

    def options(self, key: str | None) -> _Options:
        """The clients' common arguments; the exchange log scrubs `key` (when there is one)."""
        log = ExchangeLog(self.log_path, secrets=[key] if key else [])
        return _Options(
            timeout=self.timeout,
            max_retries=self.max_retries,
            max_retry_after=self.max_retry_after,
            log=log,
            meter=self.meter,
        )


def build_llm_client(
    mode: str,
    *,
    models: Mapping[str, str],
    base_url: str | None,
    timeout: float,
    max_retries: int,
    log_path: Path,
    meter: UsageMeter,
    api: str = "anthropic",
    openai_models: Mapping[str, str] | None = None,
    openai_base_url: str | None = None,
    openai_api_key: SecretStr | str | None = None,
    max_retry_after: float = 60.0,
) -> ILLMClient | None:
    """None for "offline"; the Anthropic client for "anthropic", the OpenAI-compatible one for
    "openai" (each behind a circuit breaker); a cassette client for "cassette:PATH" (replay,
    no network) or "record:PATH" (the API `api` names, recorded to PATH).

    `models` are the Anthropic models per role, `openai_models` the OpenAI ones (none:
    `OPENAI_DEFAULT_MODELS`, for OpenAI's own API only: another server's names must be given,
    a ConfigError says so); a cassette replays with the map of the API it was recorded from
    (`api`).
    The Anthropic key is read from ANTHROPIC_API_KEY only, never from a settings file. The
    OpenAI key and server are `openai_api_key` and `openai_base_url` when set, else
    OPENAI_API_KEY and OPENAI_BASE_URL, as the SDK reads them; a server given by its base URL
    may go without a key (local servers want none). An answer asking to be retried after more
    than `max_retry_after` seconds fails the call at once.
    """
    if mode == "offline":
        return None
    if api not in APIS:
        raise ConfigError(f"llm_api: expected anthropic or openai, got {api!r}")
    kind, _, path = mode.partition(":")
    provider = kind if kind in APIS else api
    role_models = models if provider == "anthropic" else (openai_models or OPENAI_DEFAULT_MODELS)
    if kind == "cassette":
        if not path:
            raise ConfigError("llm: 'cassette:PATH' needs the path of a recorded exchange file")
        return CassetteClient(Path(path), "replay", role_models)
    if kind not in (*APIS, "record"):
        raise ConfigError(
            f"llm: expected offline, anthropic, openai, cassette:PATH or record:PATH, got {mode!r}"
        )
    client: ILLMClient
    key: str | None
    transport = _Transport(timeout, max_retries, log_path, meter, max_retry_after)
    if provider == "anthropic":
        client, key = _anthropic(kind, models, base_url, transport)
    else:
        client, key = _openai(kind, openai_models, openai_base_url, openai_api_key, transport)
    breaker = CircuitBreaker(client)
    if kind == "record":
        if not path:
            raise ConfigError("llm: 'record:PATH' needs the path of the file to record to")
        secrets = [key] if key else []
        return CassetteClient(Path(path), "record", role_models, inner=breaker, secrets=secrets)
    return breaker


def _anthropic(
    kind: str, models: Mapping[str, str], base_url: str | None, transport: _Transport
) -> tuple[ILLMClient, str]:
    key = os.environ.get(API_KEY_VARIABLE, "")
    if not key:
        raise ConfigError(f"llm={kind}: set {API_KEY_VARIABLE} (or use --llm offline)")
    # imported here: the SDK takes ~1.5 s to import and offline runs never need it
    require("anthropic", "anthropic", for_what=f"llm={kind}")
    from cairn.adapters.llm.anthropic_client import AnthropicClient

    client = AnthropicClient(
        api_key=key, models=models, base_url=base_url, **transport.options(key)
    )
    return client, key


def _openai(
    kind: str,
    models: Mapping[str, str] | None,
    base_url: str | None,
    api_key: SecretStr | str | None,
    transport: _Transport,
) -> tuple[ILLMClient, str | None]:
    """The OpenAI-compatible client; the key it uses (None for a keyless local server)."""
    key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
    key = key or os.environ.get(OPENAI_KEY_VARIABLE) or None
    url = base_url or os.environ.get(OPENAI_URL_VARIABLE) or None
    if key is None and url is None:
        raise ConfigError(
            f"llm={kind}: set {OPENAI_KEY_VARIABLE}, or {OPENAI_URL_VARIABLE} for a local"
            " server (or use --llm offline)"
        )
    if not models:
        if not is_openai_api(url):
            raise ConfigError(
                f"openai_models: the server at {url} needs its model names, one for every role"
                f" ({', '.join(ROLES)}), e.g. CAIRN_OPENAI_MODELS='{{\"adventurer\":"
                f" \"qwen3:8b\", ...}}'; the gpt-4.1 defaults are OpenAI's own API's"
            )
        models = OPENAI_DEFAULT_MODELS
    missing = [role for role in ROLES if not models.get(role)]
    if missing:  # a local server's names replace the defaults whole: say so at start
        raise ConfigError(
            f"openai_models: no model for {', '.join(missing)}"
            f" (every role needs one: {', '.join(ROLES)})"
        )
    # imported here, like the Anthropic SDK: offline runs never need it
    require("openai", "openai", for_what=f"llm={kind}")
    from cairn.adapters.llm.openai_client import OpenAIClient

    client = OpenAIClient(api_key=key, models=models, base_url=url, **transport.options(key))
    return client, key


def is_openai_api(url: str | None) -> bool:
    """Whether `url` (None: the SDK's default) is OpenAI's own API."""
    return url is None or urlsplit(url).hostname == OPENAI_HOST


def list_prices_apply(mode: str, api: str, openai_base_url: str | None) -> bool:
    """Whether the built-in list prices may price this `llm` setting's calls: not for an
    OpenAI-compatible server other than OpenAI's own (a local model named like one of
    OpenAI's is not billed at its price; `llm_prices` still prices it)."""
    kind = mode.partition(":")[0]
    provider = kind if kind in APIS else api
    if provider != "openai":
        return True
    return is_openai_api(openai_base_url or os.environ.get(OPENAI_URL_VARIABLE) or None)


def circuit_breaker_of(client: ILLMClient | None) -> CircuitBreaker | None:
    """The circuit breaker `client` is, or records through (a recording cassette wraps one);
    None offline, for a replayed cassette, and for a client given without one."""
    inner = client.inner if isinstance(client, CassetteClient) else None
    for candidate in (client, inner):
        if isinstance(candidate, CircuitBreaker):
            return candidate
    return None
