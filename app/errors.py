"""The one error hierarchy of cairn; every error cairn raises on purpose is a CairnError."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class CairnError(Exception):
    """Base class of every error cairn raises on purpose."""


class ConfigError(CairnError):
    """Raised at start-up when a setting is missing or invalid; the message names the setting."""


class MissingExtraError(ConfigError):
    """Raised when a feature needs an optional dependency that is not installed; the message
    names the extra to install (`pip install 'cairn[jericho]'`)."""


class UnknownCommandError(CairnError):
    """Raised by the bus when a command has no registered handler."""


class InvalidLocationError(CairnError):
    """Raised when a location id is not an integer or names no known location."""


class InvalidMemoryError(CairnError, ValueError):
    """Raised by the library API (`cairn.Memory`) when an argument cannot make a memory (empty
    text, an importance outside 1..1000, an unknown category or scope); the message names the
    method and the argument. A ValueError too, as the argument's value is what is wrong."""


class StoreError(CairnError):
    """Raised when a memory store cannot be read or written."""


class StoreLockedError(StoreError):
    """Raised when the store's lock could not be taken within the configured timeout."""


class MemoryFileEncodingError(StoreError):
    """Raised when a markdown store's file holds bytes that are not UTF-8 (saved as Latin-1 or
    UTF-16, say): the store refuses it, leaving it untouched, rather than read it as fewer
    memories; the message names the file, the line and the byte offset of the first such byte."""


class MemoryNotFoundError(StoreError):
    """Raised when an operation names a memory id the store does not hold."""


class CheckpointError(CairnError):
    """Raised when a game cannot go back to a memory checkpoint: `RestoreGame` without one
    (none given, none in the game state), or `cairn.Memory.checkpoint` inside a unit of work
    that has not committed (the checkpoint is taken when it does)."""


class SummarizerError(CairnError):
    """Raised by a summarizer when it cannot produce a summary or synthesis."""


class LLMError(CairnError):
    """Base class of the errors a language-model call raises; the message names role and model."""


class LLMUnavailableError(LLMError):
    """Raised when the LLM API cannot be reached or kept answering 5xx/529 after all retries."""


class LLMCircuitOpenError(LLMUnavailableError):
    """Raised at once, without a call, while the circuit breaker is open (the model failed
    repeatedly); the offline stand-ins play on."""


class LLMRateLimitedError(LLMError):
    """Raised when the LLM API still answered 429 (rate limited) after all retries."""


class LLMTimeoutError(LLMError):
    """Raised when an LLM call did not answer within the configured timeout (after retries)."""


class LLMBadResponseError(LLMError):
    """Raised when an LLM answer is unusable: a malformed or wrong-shaped body, or a tool
    input that still breaks its schema after the one repair attempt."""


class LLMUnusableAnswerError(LLMBadResponseError):
    """Raised above the client when the model answered but its answer cannot be used: a tool
    input that still breaks its schema after the one repair attempt, no known memory id, an
    empty summary. Each such answer was reported to the client (`report_unusable`: counted
    once as a failure, by the meter and the circuit breaker); a malformed body is
    `LLMBadResponseError` itself, a call the client counted as failed."""


class LLMRequestError(LLMError):
    """Raised when the LLM API rejects the request itself (a 4xx other than 429: bad request,
    authentication, permission, not found, too large); retrying the same request will not help."""


class LLMAuthError(LLMRequestError):
    """Raised when the LLM API refuses the key itself (401 authentication, 403 permission): a
    bad key will not fix itself, so the circuit breaker opens at once."""


class ModelNotAnsweringError(LLMError):
    """Raised by `cairn play` (`run_play`) after a run whose model never gave a usable answer,
    or that stopped because the model stopped answering (its circuit opened) while the
    `llm_fallback` setting is "none". The run's files are written first; the message is one
    line naming the server; `result` is the run's `PlayResult` (its report says how far it
    got)."""

    result: Any = None


class CassetteMissError(LLMError):
    """Raised by a replaying cassette when it holds no answer for a request; the message names
    the request hash and the first line of the prompt."""


class UnknownPromptError(CairnError):
    """Raised by the context service when asked to assemble a prompt kind it has no builders for."""


class MapFileError(CairnError):
    """Raised when a saved map cannot be read, parsed or written; names the file and the problem.

    `path` is None when the data did not come from a file (`MapGraph.from_dict`).
    """

    def __init__(self, path: Path | None, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path is not None else message)


class GameError(CairnError):
    """Raised when a game cannot be built, loaded or played (e.g. the demo world won't compile)."""


class ScenarioError(CairnError):
    """Raised when a replay scenario cannot be loaded or run; names the file, line and field."""


class ReportError(CairnError):
    """Raised when a report or comparison cannot be made: a workdir without report.json, an
    unreadable or malformed report.json, a baseline folder that is missing; names the file."""


class WorkdirError(CairnError):
    """Raised by the command line before anything is written or read when a workdir cannot be
    used: a folder a command would write into that is neither new, empty nor made by cairn
    (`/`, a home folder), a folder holding another game's run, a folder another play is
    running in (its run lock is held), or a missing folder given to a command that reads.
    Names the folder and how to choose another."""
