"""CassetteClient: records LLM exchanges to a JSONL cassette, or replays them with no network."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from cairn.adapters.input_files import MAX_CASSETTE_BYTES, read_named_file
from cairn.adapters.llm.exchange_log import (
    Redactor,
    append_line,
    canonical_json,
    request_hash,
    request_payload,
)
from cairn.adapters.llm.requests import first_prompt_line, model_for_role
from cairn.errors import CassetteMissError, ConfigError
from cairn.interfaces.llm import ILLMClient, LLMRequest, LLMResponse

CassetteMode = Literal["record", "replay"]


class CassetteClient(ILLMClient):
    """An ILLMClient that records a real client's answers, or replays them exactly.

    "record": every request goes to `inner`; each answer is appended to the cassette as one
    JSON line (request_hash, role, model, request, response). Failed calls are not recorded.
    "replay": answers come from the cassette by request hash, never from a network.
    A hash recorded several times is answered in recorded order, then with its last answer.
    Replayed responses equal the recorded ones field for field, usage and latency included.
    A request with no recorded answer raises CassetteMissError naming the hash and the first
    line of the prompt. `models` is the same role -> model map the real client uses (the model
    is part of the hash).
    """

    def __init__(
        self,
        path: str | Path,
        mode: CassetteMode,
        models: Mapping[str, str],
        inner: ILLMClient | None = None,
        secrets: Iterable[str] = (),
    ) -> None:
        if mode not in ("record", "replay"):
            raise ConfigError(f"llm.cassette_mode: must be 'record' or 'replay', got {mode!r}")
        if mode == "record" and inner is None:
            raise ConfigError("llm.cassette_mode: 'record' needs a real LLM client to record")
        self.path = Path(path)
        self.mode: CassetteMode = mode
        self.models = dict(models)
        self._inner = inner
        self._redact = Redactor(secrets)
        self._lock = threading.Lock()
        self._recorded: dict[str, list[LLMResponse]] = {}
        self._served: dict[str, int] = {}
        if mode == "replay":
            self._load()

    @property
    def inner(self) -> ILLMClient | None:
        """The client a recording cassette records (None when it replays)."""
        return self._inner

    def _load(self) -> None:
        if not self.path.is_file():
            raise ConfigError(f"llm.cassette: no cassette to replay at {self.path}")
        data = read_named_file(
            self.path,
            what="cassette",
            limit=MAX_CASSETTE_BYTES,
            error=lambda problem: ConfigError(f"llm.cassette: {self.path}: {problem}"),
        )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ConfigError(f"llm.cassette: {self.path}: not UTF-8 text: {e}") from e
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key = str(entry["request_hash"])
                response = LLMResponse.model_validate(entry["response"])
            except (ValueError, KeyError, TypeError, ValidationError) as e:
                raise ConfigError(
                    f"llm.cassette: {self.path}:{number}: unreadable entry: {e}"
                ) from e
            self._recorded.setdefault(key, []).append(response)

    def server(self) -> str:
        """The server a recording cassette records from, or the cassette replayed."""
        if self._inner is not None and self.mode == "record":
            return f"{self._inner.server()} (recorded to {self.path})"
        return f"the cassette {self.path}"

    def report_unusable(self, request: LLMRequest) -> None:
        """Passed on to the client a recording cassette records (its circuit breaker)."""
        if self._inner is not None:
            self._inner.report_unusable(request)

    def complete(self, request: LLMRequest) -> LLMResponse:
        """Record the inner client's answer, or replay the recorded one."""
        model = model_for_role(self.models, request.role)
        key = request_hash(request, model)
        if self._inner is not None and self.mode == "record":
            response = self._inner.complete(request)
            entry = {
                "request_hash": key,
                "role": request.role,
                "model": model,
                "request": request_payload(request, model),
                "response": response.model_dump(mode="json"),
            }
            append_line(self.path, self._redact(canonical_json(entry)), self._lock)
            return response
        with self._lock:
            answers = self._recorded.get(key)
            if not answers:
                raise CassetteMissError(
                    f"cassette {self.path}: no recorded answer for request {key} "
                    f"(role {request.role!r}, model {model!r}); "
                    f"prompt starts: {first_prompt_line(request)!r}"
                )
            index = self._served.get(key, 0)
            self._served[key] = index + 1
            return answers[min(index, len(answers) - 1)].model_copy(deep=True)
