"""Choose the LLM client from the `llm` setting: offline, anthropic, cassette, record; and find
its circuit breaker. (Which summarizer a client gets is the container's choice.)"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from cairn.adapters.llm.breaker import CircuitBreaker
from cairn.adapters.llm.cassette import CassetteClient
from cairn.adapters.llm.exchange_log import ExchangeLog
from cairn.adapters.llm.usage import UsageMeter
from cairn.errors import ConfigError
from cairn.extras import require
from cairn.interfaces.llm import ILLMClient

API_KEY_VARIABLE = "ANTHROPIC_API_KEY"


def build_llm_client(
    mode: str,
    *,
    models: Mapping[str, str],
    base_url: str | None,
    timeout: float,
    max_retries: int,
    log_path: Path,
    meter: UsageMeter,
) -> ILLMClient | None:
    """None for "offline"; the Anthropic client for "anthropic"; a cassette client for
    "cassette:PATH" (replay, no network) or "record:PATH" (Anthropic, recorded to PATH).

    The API key is read from ANTHROPIC_API_KEY only, never from a settings file.
    """
    if mode == "offline":
        return None
    kind, _, path = mode.partition(":")
    if kind == "cassette":
        if not path:
            raise ConfigError("llm: 'cassette:PATH' needs the path of a recorded exchange file")
        return CassetteClient(Path(path), "replay", models)
    if kind not in ("anthropic", "record"):
        raise ConfigError(
            f"llm: expected offline, anthropic, cassette:PATH or record:PATH, got {mode!r}"
        )
    key = os.environ.get(API_KEY_VARIABLE, "")
    if not key:
        raise ConfigError(f"llm={kind}: set {API_KEY_VARIABLE} (or use --llm offline)")
    # imported here: the SDK takes ~1.5 s to import and offline runs never need it
    require("anthropic", "anthropic", for_what=f"llm={kind}")
    from cairn.adapters.llm.anthropic_client import AnthropicClient

    client = AnthropicClient(
        api_key=key,
        models=models,
        base_url=base_url,
        timeout=timeout,
        max_retries=max_retries,
        log=ExchangeLog(log_path, secrets=[key]),
        meter=meter,
    )
    breaker = CircuitBreaker(client)
    if kind == "record":
        if not path:
            raise ConfigError("llm: 'record:PATH' needs the path of the file to record to")
        return CassetteClient(Path(path), "record", models, inner=breaker, secrets=[key])
    return breaker


def circuit_breaker_of(client: ILLMClient | None) -> CircuitBreaker | None:
    """The circuit breaker `client` is, or records through (a recording cassette wraps one);
    None offline, for a replayed cassette, and for a client given without one."""
    inner = client.inner if isinstance(client, CassetteClient) else None
    for candidate in (client, inner):
        if isinstance(candidate, CircuitBreaker):
            return candidate
    return None
