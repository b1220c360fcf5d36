"""CairnSettings: one pydantic settings model from [tool.cairn], CAIRN_* variables and overrides."""

from __future__ import annotations

import logging
import os
import stat
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    PyprojectTomlConfigSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from cairn import defaults
from cairn.errors import ConfigError
from cairn.file_names import file_name_clash

log = logging.getLogger(__name__)


class ModelPrice(BaseModel):
    """One model's prices in US dollars per million tokens: plain input, input read from the
    prompt cache, input written to it, and output (the `llm_prices` setting's entries); each a
    finite number (a price of inf would make every cost infinite)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    input: float = Field(ge=0)
    cache_read: float = Field(ge=0)
    cache_write: float = Field(ge=0)
    """OpenAI bills no premium for caching: its models' write price is their input price."""
    output: float = Field(ge=0)


class CairnSettings(BaseSettings):
    """Every setting of cairn. Precedence: overrides > CAIRN_* environment > [tool.cairn]."""

    model_config = SettingsConfigDict(
        env_prefix="CAIRN_",
        extra="forbid",
        pyproject_toml_table_header=("tool", "cairn"),
    )

    workdir: Path = Path(defaults.WORKDIR)
    """Where memories, map, knowledge base and reports go: a named folder, never the current
    folder itself. When it is not set, `cairn play` uses one folder per game under it
    (`cairn-runs/<game>`, see `cairn.workdir`)."""
    store: Literal["markdown", "sqlite", "postgres"] = "markdown"
    memory_file: str = "Memories.md"
    sqlite_file: str = "memories.sqlite3"
    backup_count: int = Field(3, ge=0, le=100)
    database_url: SecretStr | None = None
    """The postgres store's server, `postgresql://user:password@host:port/dbname`
    (CAIRN_DATABASE_URL); shown nowhere."""
    memory_space: str | None = Field(None, min_length=1)
    """The postgres store's memory space; default: the story file's hash (`cairn play`), the
    scenario's name (`cairn replay`), else "default"."""
    statement_timeout: float = Field(10.0, gt=0)
    """The postgres store: the longest a statement, or a wait for a lock, may take (seconds)."""
    reconnect_timeout: float = Field(30.0, ge=0)
    """The postgres store: how long a lost connection is retried before a unit of work fails."""
    lock_timeout: float = Field(30.0, gt=0)
    memory_history_window: int = Field(3, ge=1)
    world_message_window: int = Field(30, ge=1)
    long_response_chars: int = Field(100, ge=0)
    max_supersessions: int = Field(3, ge=0)
    cap_per_location: int = Field(40, ge=1)
    cap_per_npc: int = Field(20, ge=1)
    cap_world: int = Field(50, ge=1)
    superseded_kept_per_key: int = Field(100, ge=0)
    narrative_entries_per_scope: int = Field(3, ge=1)
    max_successes_shown: int = Field(5, ge=0)
    max_failures_shown: int = Field(12, ge=0)
    max_other_shown: int = Field(3, ge=0)
    location_memory_max_tokens: int = Field(500, ge=50)
    prompt_token_budget: int = Field(2000, ge=100)
    objective_token_budget: int = Field(12000, ge=100)
    """The objective prompt's budget (every 20 turns): 10-15K tokens leave room for memories,
    map and knowledge."""
    knowledge_max_tokens: int = Field(5000, ge=100)
    """The knowledge base's own share of the objective prompt (2-5K)."""
    map_moves: int = Field(3, ge=0)
    """The objective prompt's map shows every room within this many moves, then a count."""
    llm: str = "offline"
    """offline, anthropic, openai, cassette:PATH or record:PATH (`cairn.adapters.llm.factory`)."""
    llm_api: Literal["anthropic", "openai"] = "anthropic"
    """The API `record:PATH` calls, and so whose per-role models (`models` or `openai_models`)
    a `cassette:PATH` is replayed with (the model is part of each recorded request's hash)."""
    llm_base_url: str | None = None
    """The Anthropic API's base URL (`--llm anthropic`); default: the SDK's."""
    llm_timeout: float = Field(30.0, gt=0)
    """The most one model call may take in all, in seconds: every attempt, read and retry wait
    included (a server sending a byte a second is cut off here)."""
    llm_max_retries: int = Field(1, ge=0)
    """With the circuit breaker, a hanging API costs one call's timeouts, not one per turn."""
    llm_max_retry_after: float = Field(60.0, ge=0)
    """The longest retry-after (seconds) a model server's 429 or 5xx is waited for; one asking
    for longer fails the call at once, as rate limited or unavailable."""
    llm_fallback: Literal["none", "offline"] = "none"
    """What plays when the model stops answering (its circuit breaker opens: repeated
    failures, a timeout, a refused key): "none" stops the run after that turn, with its files
    written, a non-zero exit and one line naming the server; "offline" (`--llm-fallback
    offline`) lets the offline stand-ins play on. A single failed call is played by the
    stand-in either way, and counted (`stand_in_turns`). A model that never gave a usable
    answer fails the run with either."""
    llm_log_file: str = "llm.jsonl"
    story_load_timeout: float = Field(20.0, gt=0)
    """Seconds a story file's load may take (tried in a child process first); a damaged file
    whose load never ends is refused after them."""
    models: dict[str, str] = Field(
        default_factory=lambda: {
            "adventurer": "claude-sonnet-4-6",
            "synthesis": "claude-haiku-4-5",
            "summary": "claude-haiku-4-5",
            "objective": "claude-sonnet-4-6",
            "query": "claude-haiku-4-5",
        }
    )
    """The Anthropic model of each role."""
    openai_base_url: str | None = None
    """`--llm openai`: the server, e.g. http://localhost:11434/v1 for Ollama; default: the
    OPENAI_BASE_URL variable, else OpenAI's own API."""
    openai_api_key: SecretStr | None = None
    """`--llm openai`: the API key (CAIRN_OPENAI_API_KEY), shown nowhere; default: the
    OPENAI_API_KEY variable. A local server given by its base URL needs none."""
    openai_models: dict[str, str] = Field(default_factory=dict)
    """`--llm openai`: the model of each role. A local server needs its names, e.g.
    "qwen3:8b" (none set is an error naming this setting); OpenAI's own API defaults to
    gpt-4.1 and gpt-4.1-mini (`cairn.adapters.llm.factory.OPENAI_DEFAULT_MODELS`)."""
    llm_prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """US dollars per million tokens by model, over the built-in list prices
    (`cairn.adapters.llm.prices`): `input`, `cache_read`, `cache_write` and `output` each, e.g.
    `[tool.cairn.llm_prices.qwen3-8b]` or CAIRN_LLM_PRICES as JSON. A model with no price has
    its cost shown as unknown."""
    deterministic_seed: int | None = None
    map_file: str = "map.json"
    knowledge_file: str = "knowledgebase.md"
    report_file: str = "report.json"
    use_memory: bool = True
    """False is the --no-memory baseline: the same run with no memory in any prompt."""
    play_seed: int = 0
    """The offline player's seed (and the game's, when the game takes one)."""
    play_episodes: int = Field(defaults.PLAY_EPISODES, ge=1)
    play_max_turns: int = Field(defaults.PLAY_MAX_TURNS, ge=1)
    objective_every: int = Field(20, ge=1)
    demo_seed: int = 1
    game_npcs: dict[str, list[str]] = Field(default_factory=dict)
    """An optional override, by story file stem: these NPC names, matched against the room's
    objects and the text, replace the characters cairn finds from the game itself (the object
    tree and the parser's answers; an empty list means no NPCs for that game)."""

    @field_validator(
        "memory_file", "sqlite_file", "llm_log_file", "map_file", "knowledge_file", "report_file"
    )
    @classmethod
    def _plain_file_name(cls, value: str) -> str:
        """Files cairn writes are named inside the workdir: a plain name, never a path."""
        if not value or value in (".", "..") or any(c in value for c in "/\\\0"):
            raise ValueError(f"must be a plain file name inside the workdir, got {value!r}")
        return value

    @field_validator("llm_base_url", "openai_base_url")
    @classmethod
    def _plain_base_url(cls, value: str | None) -> str | None:
        """A server's address (`base_url_problem`): checked here, named by its setting,
        before an HTTP library refuses it with a traceback."""
        problem = None if value is None else base_url_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _base_url_variables(self) -> CairnSettings:
        """The SDKs' own base URL variables (OPENAI_BASE_URL, ANTHROPIC_BASE_URL), checked as
        the settings are when the chosen LLM would read one."""
        kind = self.llm.partition(":")[0]
        api = kind if kind in ("anthropic", "openai") else self.llm_api
        if kind not in ("anthropic", "openai", "record"):
            return self
        setting = self.llm_base_url if api == "anthropic" else self.openai_base_url
        variable = f"{api.upper()}_BASE_URL"
        value = os.environ.get(variable)
        problem = base_url_problem(value) if setting is None and value else None
        if problem:
            raise ValueError(f"{variable} (the environment variable): {problem}")
        return self

    @model_validator(mode="after")
    def _distinct_files(self) -> CairnSettings:
        """No two settings name one file in the workdir (`cairn.file_names`)."""
        clash = file_name_clash(self)
        if clash:
            raise ValueError(clash)
        return self

    @field_validator("memory_history_window")
    @classmethod
    def _warn_large_window(cls, value: int) -> int:
        if value > 10:
            log.warning("memory_history_window=%d is above 10: large prompts, little gain", value)
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, PyprojectTomlConfigSettingsSource(settings_cls))


MAX_BASE_URL = 8192
"""The longest base URL taken (characters): any server's address fits many times over."""


def base_url_problem(value: str) -> str | None:
    """What is wrong with a base URL (None: nothing): it must be an http(s) URL with a host, of
    at most MAX_BASE_URL characters, without spaces or control characters (a CR/LF would
    split the request's lines)."""
    if len(value) > MAX_BASE_URL:
        return f"must be at most {MAX_BASE_URL:,} characters, got {len(value):,}"
    bad = next((c for c in value if c.isspace() or not c.isprintable()), None)
    if bad is not None:
        return f"must hold no spaces or control characters, got {bad!r} at {value.index(bad)}"
    scheme, _, rest = value.partition("://")
    if scheme.lower() not in ("http", "https") or not rest.split("/", 1)[0]:
        return f"must be an http:// or https:// URL with a host, got {value[:80]!r}"
    return None


KNOWN_ENV = frozenset(["CAIRN_CACHE_DIR", "CAIRN_ROMS", "CAIRN_PG_BINDIR"])
"""CAIRN_ variables that are not settings but are read elsewhere (the demo-world cache, the
story files folder of `cairn replay`, the PostgreSQL binaries of `cairn.testing`'s server)."""


def load_settings(**overrides: object) -> CairnSettings:
    """Build settings, turning validation errors into a ConfigError that names each field.

    An unknown `CAIRN_*` variable is warned about (a typo would otherwise be silently ignored);
    a variable or a [tool.cairn] table that cannot be parsed is a ConfigError naming it.
    """
    fields = {f"CAIRN_{name.upper()}" for name in CairnSettings.model_fields}
    for name in sorted(os.environ):
        if name.startswith("CAIRN_") and name not in fields and name not in KNOWN_ENV:
            log.warning("%s is not a cairn setting; ignored", name)
    clean = {k: v for k, v in overrides.items() if v is not None}
    _check_pyproject(Path("pyproject.toml"))
    try:
        return CairnSettings(**clean)  # type: ignore[arg-type]
    except SettingsError as exc:
        raise ConfigError(f"cannot read the cairn settings: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"pyproject.toml: [tool.cairn] is not valid TOML: {exc}") from exc
    except (TypeError, AttributeError) as exc:  # e.g. `[tool] cairn = 5`
        raise ConfigError(f"pyproject.toml: [tool.cairn] must be a table: {exc}") from exc
    except ValidationError as exc:
        problems = "; ".join(_problem(err) for err in exc.errors())
        raise ConfigError(f"invalid cairn settings: {problems}") from exc


def _problem(err: ErrorDetails) -> str:
    """`field: message`; a check of several fields (no location) gives its own message."""
    if not err["loc"]:
        cause = err.get("ctx", {}).get("error")
        return str(cause) if cause is not None else err["msg"]
    return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"


MAX_PYPROJECT_BYTES = 4 * 1024 * 1024
"""The most a pyproject.toml holding `[tool.cairn]` may weigh (a project's own file: a few KB)."""


def _check_pyproject(path: Path) -> None:
    """ConfigError naming `path` when it exists but is no regular file (a FIFO would make the
    settings' read wait for a writer forever) or is over MAX_PYPROJECT_BYTES."""
    try:
        info = path.stat()
    except OSError:
        return  # none here (or unreadable: the settings' own read says so)
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: not a regular file; cairn reads [tool.cairn] from files only")
    if info.st_size > MAX_PYPROJECT_BYTES:
        raise ConfigError(
            f"{path}: larger than {MAX_PYPROJECT_BYTES:,} bytes; cairn reads [tool.cairn] from it"
        )
