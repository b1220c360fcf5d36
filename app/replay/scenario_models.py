"""The pydantic models a scenario is validated against: the header both kinds share, the
narrative world and its steps, and the jericho script (`cairn.replay.scenario` reads the YAML
and maps each error back to its line)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from cairn.replay.expectations import Expectations
from cairn.replay.limits import ScenarioLocationId
from cairn.settings import CairnSettings

STEP_TAG = "step:"
"""The prefix of a step's union tag in pydantic's error locations (`step:say`)."""
RESERVED_SETTINGS = frozenset({"workdir", "deterministic_seed", "llm"})
"""Settings a scenario sets through its own fields (`seed`, `llm`) or the replay decides."""
FILE_SETTING_SUFFIX = "_file"
"""Settings named `*_file` (`memory_file`, `map_file`, ...) name a file in the replay workdir."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReplaySettings(CairnSettings):
    """CairnSettings from explicit values only: a replay reads neither `[tool.cairn]` nor
    CAIRN_* variables, so it behaves the same wherever it runs."""

    # None, not a header: no pyproject source here, so pydantic-settings does not warn about it
    model_config = SettingsConfigDict(pyproject_toml_table_header=None)  # type: ignore[typeddict-item]

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


# -- the narrative world ----------------------------------------------------------------------


class LocationSpec(_Model):
    """A location of the narrative world (an integer id, like Jericho's: 0 to MAX_LOCATION_ID)."""

    id: ScenarioLocationId
    name: str = ""
    danger_level: str | None = None


class NpcSpec(_Model):
    """An NPC and where it starts (`location: null`: not in any location)."""

    id: str = Field(min_length=1)
    name: str = ""
    location: ScenarioLocationId | None = None


class NamedSpec(_Model):
    """An objective or an act: its id and the name memories show (a plain string: an id)."""

    id: str = Field(min_length=1)
    name: str = ""


def _named(value: Any) -> Any:
    """`[clear-cellar, {id: deliver, name: Deliver the letter}]`: plain ids become specs."""
    if isinstance(value, list):
        return [{"id": item} if isinstance(item, str) else item for item in value]
    return value


class QuestSpec(_Model):
    """A quest and its objectives."""

    id: str = Field(min_length=1)
    name: str = ""
    objectives: list[NamedSpec] = Field(default_factory=list)

    _objective_ids = field_validator("objectives", mode="before")(_named)


class EncounterSpec(_Model):
    """An encounter that can be completed at one location."""

    id: str = Field(min_length=1)
    location: ScenarioLocationId


# -- narrative steps --------------------------------------------------------------------------


class StepBase(_Model):
    """What every step has: an optional label."""

    id: str | None = None
    """Optional label; a prompt expectation's `at` names it to snapshot the prompt there."""


class MoveStep(StepBase):
    """`ChangeLocation`: summarizes the visit being left, then moves (`via`: the exit taken)."""

    move: ScenarioLocationId
    via: str | None = None


class SayStep(StepBase):
    """A message added to the history at the current location (or at `location`)."""

    say: str
    role: str = "narrator"
    present: list[str] = Field(default_factory=list)
    mentioned: list[str] = Field(default_factory=list)
    location: ScenarioLocationId | None = None


class NpcStep(StepBase):
    """The engine moves an NPC (`to: null`: it leaves every location); no command is sent."""

    npc: str
    to: ScenarioLocationId | None


class NoteStep(StepBase):
    """`RememberNote`: an agent note with its importance."""

    note: str
    importance: int = Field(500, ge=1, le=1000)
    location: ScenarioLocationId | None = None
    world: bool = False


class TurnStep(StepBase):
    """`RecordTurn`: one game turn at the current location (a move first when it moved)."""

    turn: str
    response: str
    location_after: ScenarioLocationId | None = None
    score_before: int | None = None
    score_after: int | None = None
    inventory_before: list[str] = Field(default_factory=list)
    inventory_after: list[str] = Field(default_factory=list)
    died: bool = False
    won: bool = False
    reasoning: str = ""


class ObjectiveStep(StepBase):
    """`CompleteObjective` of a declared quest."""

    complete_objective: str
    quest: str
    tags: list[str] = Field(default_factory=list)


class QuestStep(StepBase):
    """`CompleteQuest`."""

    complete_quest: str
    tags: list[str] = Field(default_factory=list)


class ActStep(StepBase):
    """`ProgressAct`."""

    progress_act: str
    tags: list[str] = Field(default_factory=list)


class LocationStateStep(StepBase):
    """`UpdateLocationState`: a danger level (`CLEARED` is a world event) and/or an encounter."""

    update_location: ScenarioLocationId
    danger_level: str | None = None
    complete_encounter: str | None = None

    @model_validator(mode="after")
    def _something(self) -> LocationStateStep:
        if self.danger_level is None and self.complete_encounter is None:
            raise ValueError("update_location needs danger_level and/or complete_encounter")
        return self


class EpisodeEnd(_Model):
    """How an episode ended."""

    won: bool = False
    died: bool = False


class EndEpisodeStep(StepBase):
    """`EndEpisode` (`end_episode: {}` or `end_episode: {won: true}`)."""

    end_episode: EpisodeEnd

    @field_validator("end_episode", mode="before")
    @classmethod
    def _empty(cls, value: Any) -> Any:
        return {} if value is None else value


class SaveStep(StepBase):
    """`SaveGame`, then the game state (its checkpoint in it) kept under a name, serialised as
    an engine's save file would be (`save: before-quest`); saving under a name again replaces
    that save."""

    save: str = Field(min_length=1)


class RestoreStep(StepBase):
    """Load the game state saved under a name, then `RestoreGame` (`restore: before-quest`)."""

    restore: str = Field(min_length=1)


_STEP_TYPES: dict[str, type[StepBase]] = {
    "move": MoveStep,
    "say": SayStep,
    "npc": NpcStep,
    "note": NoteStep,
    "turn": TurnStep,
    "complete_objective": ObjectiveStep,
    "complete_quest": QuestStep,
    "progress_act": ActStep,
    "update_location": LocationStateStep,
    "end_episode": EndEpisodeStep,
    "save": SaveStep,
    "restore": RestoreStep,
}
STEP_KEYS = tuple(_STEP_TYPES)


def _step_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        key = next((k for k in value if k in _STEP_TYPES), None)
        return None if key is None else STEP_TAG + key
    for key, cls in _STEP_TYPES.items():
        if isinstance(value, cls):
            return STEP_TAG + key
    return None


Step = Annotated[
    Annotated[MoveStep, Tag(STEP_TAG + "move")]
    | Annotated[SayStep, Tag(STEP_TAG + "say")]
    | Annotated[NpcStep, Tag(STEP_TAG + "npc")]
    | Annotated[NoteStep, Tag(STEP_TAG + "note")]
    | Annotated[TurnStep, Tag(STEP_TAG + "turn")]
    | Annotated[ObjectiveStep, Tag(STEP_TAG + "complete_objective")]
    | Annotated[QuestStep, Tag(STEP_TAG + "complete_quest")]
    | Annotated[ActStep, Tag(STEP_TAG + "progress_act")]
    | Annotated[LocationStateStep, Tag(STEP_TAG + "update_location")]
    | Annotated[EndEpisodeStep, Tag(STEP_TAG + "end_episode")]
    | Annotated[SaveStep, Tag(STEP_TAG + "save")]
    | Annotated[RestoreStep, Tag(STEP_TAG + "restore")],
    Discriminator(
        _step_tag,
        custom_error_type="invalid_step",
        custom_error_message=f"a step needs one of the keys {', '.join(STEP_KEYS)}",
    ),
]


# -- scenarios --------------------------------------------------------------------------------


class _Scenario(_Model):
    name: str = ""
    description: str = ""
    seed: int = 0
    """The `deterministic_seed`: ids and timestamps repeat, so replays are byte-identical."""
    llm: str = "offline"
    """`offline` (rule-based stand-ins), `cassette:PATH` (replay a recorded exchange file,
    relative to the scenario) or `record:PATH` (call the configured API and record to PATH)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Other CairnSettings fields; `[tool.cairn]` and CAIRN_* are not read by replays."""
    expect: Expectations = Field(default_factory=Expectations)

    @field_validator("llm")
    @classmethod
    def _llm(cls, value: str) -> str:
        kind, _, path = value.partition(":")
        if value != "offline" and (kind not in ("cassette", "record") or not path):
            raise ValueError(f"expected 'offline', 'cassette:PATH' or 'record:PATH', got {value!r}")
        return value

    @field_validator("settings")
    @classmethod
    def _not_reserved(cls, value: dict[str, Any]) -> dict[str, Any]:
        reserved = sorted(RESERVED_SETTINGS & set(value))
        if reserved:
            raise ValueError(f"{', '.join(reserved)}: set by the replay (use seed / llm)")
        return value


class NarrativeScenario(_Scenario):
    """A narrative engine's session: a world, then steps sent through the bus."""

    kind: Literal["narrative"]
    locations: list[LocationSpec] = Field(min_length=1)
    npcs: list[NpcSpec] = Field(default_factory=list)
    quests: list[QuestSpec] = Field(default_factory=list)
    acts: list[NamedSpec] = Field(default_factory=list)
    encounters: list[EncounterSpec] = Field(default_factory=list)
    steps: list[Step] = Field(min_length=1)

    _act_ids = field_validator("acts", mode="before")(_named)


class JerichoScenario(_Scenario):
    """A story file played by a scripted list of actions or its walkthrough."""

    kind: Literal["jericho"]
    story: str = Field(min_length=1)
    """Relative to the scenario file, else looked up in the roms folder; `demo:SEED` is the
    built-in demo world."""
    npcs: list[str] | None = None
    """NPC names to detect, overriding the characters found from the game (default: the
    `game_npcs` setting for the story's stem, else the characters found)."""

    @field_validator("story")
    @classmethod
    def _demo_seed(cls, value: str) -> str:
        if value.startswith("demo:") and not value.removeprefix("demo:").isdigit():
            raise ValueError(f"demo world: expected demo:SEED with an integer seed, got {value!r}")
        return value

    actions: list[str] = Field(default_factory=list)
    walkthrough: bool = False
    walkthrough_steps: int | None = Field(None, ge=1)
    episodes: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _one_script(self) -> JerichoScenario:
        scripted = bool(self.actions)
        walked = self.walkthrough or self.walkthrough_steps is not None
        if scripted == walked:
            raise ValueError("give either actions or walkthrough / walkthrough_steps")
        return self


Scenario = NarrativeScenario | JerichoScenario
KINDS: dict[str, type[NarrativeScenario] | type[JerichoScenario]] = {
    "narrative": NarrativeScenario,
    "jericho": JerichoScenario,
}
