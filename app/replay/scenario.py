"""Replay scenarios: YAML files validated by pydantic; every error names the file, line and field.

Two kinds share one header (`name`, `description`, `seed`, `llm`, `settings`, `expect`):

- `narrative`: `locations`, `npcs`, `quests`, `acts`, `encounters`, then `steps`, each a mapping
  with one action key (`move`, `say`, `npc`, `note`, `turn`, `complete_objective`,
  `complete_quest`, `progress_act`, `update_location`, `end_episode`) sent as an engine would.
- `jericho`: a `story` file, then `actions`, or `walkthrough: true` / `walkthrough_steps: N`,
  and `episodes`.

YAML is read with PyYAML's safe constructor over libyaml's parser (PyYAML's own when libyaml
is absent); the composed node tree keeps each key's line, so a pydantic error location
(`steps[3].present`) is mapped back to `file:line`. Anchors and aliases are rejected (a
scenario needs none; they make billion-laughs and self-referencing documents), and so is a
document past a bound of `cairn.replay.limits` (size, items per list, values, nesting), at the
point it crosses it.

Nothing a scenario names leaves its folder: `*_file` settings are plain file names (in the
replay workdir); `cassette:PATH` / `record:PATH`, expected prompt files and a story path
resolve inside the scenario's folder (a story given by name is also looked up in the roms
folder, and stays inside that).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from cairn.errors import ScenarioError
from cairn.replay.expectations import Expectations
from cairn.replay.limits import (
    MAX_ITEMS,
    MAX_SCENARIO_BYTES,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    ScenarioLocationId,
)
from cairn.settings import CairnSettings

Loc = tuple[str | int, ...]
"""A field location inside a scenario, as pydantic reports it: ("steps", 3, "present")."""

_TAG = "step:"
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


class _Step(_Model):
    id: str | None = None
    """Optional label; a prompt expectation's `at` names it to snapshot the prompt there."""


class MoveStep(_Step):
    """`ChangeLocation`: summarizes the visit being left, then moves (`via`: the exit taken)."""

    move: ScenarioLocationId
    via: str | None = None


class SayStep(_Step):
    """A message added to the history at the current location (or at `location`)."""

    say: str
    role: str = "narrator"
    present: list[str] = Field(default_factory=list)
    mentioned: list[str] = Field(default_factory=list)
    location: ScenarioLocationId | None = None


class NpcStep(_Step):
    """The engine moves an NPC (`to: null`: it leaves every location); no command is sent."""

    npc: str
    to: ScenarioLocationId | None


class NoteStep(_Step):
    """`RememberNote`: an agent note with its importance."""

    note: str
    importance: int = Field(500, ge=1, le=1000)
    location: ScenarioLocationId | None = None
    world: bool = False


class TurnStep(_Step):
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


class ObjectiveStep(_Step):
    """`CompleteObjective` of a declared quest."""

    complete_objective: str
    quest: str
    tags: list[str] = Field(default_factory=list)


class QuestStep(_Step):
    """`CompleteQuest`."""

    complete_quest: str
    tags: list[str] = Field(default_factory=list)


class ActStep(_Step):
    """`ProgressAct`."""

    progress_act: str
    tags: list[str] = Field(default_factory=list)


class LocationStateStep(_Step):
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


class EndEpisodeStep(_Step):
    """`EndEpisode` (`end_episode: {}` or `end_episode: {won: true}`)."""

    end_episode: EpisodeEnd

    @field_validator("end_episode", mode="before")
    @classmethod
    def _empty(cls, value: Any) -> Any:
        return {} if value is None else value


_STEP_TYPES: dict[str, type[_Step]] = {
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
}
STEP_KEYS = tuple(_STEP_TYPES)


def _step_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        key = next((k for k in value if k in _STEP_TYPES), None)
        return None if key is None else _TAG + key
    for key, cls in _STEP_TYPES.items():
        if isinstance(value, cls):
            return _TAG + key
    return None


Step = Annotated[
    Annotated[MoveStep, Tag(_TAG + "move")]
    | Annotated[SayStep, Tag(_TAG + "say")]
    | Annotated[NpcStep, Tag(_TAG + "npc")]
    | Annotated[NoteStep, Tag(_TAG + "note")]
    | Annotated[TurnStep, Tag(_TAG + "turn")]
    | Annotated[ObjectiveStep, Tag(_TAG + "complete_objective")]
    | Annotated[QuestStep, Tag(_TAG + "complete_quest")]
    | Annotated[ActStep, Tag(_TAG + "progress_act")]
    | Annotated[LocationStateStep, Tag(_TAG + "update_location")]
    | Annotated[EndEpisodeStep, Tag(_TAG + "end_episode")],
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
    """NPC names to detect (default: the `game_npcs` setting for the story's stem)."""

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
_KINDS: dict[str, type[NarrativeScenario] | type[JerichoScenario]] = {
    "narrative": NarrativeScenario,
    "jericho": JerichoScenario,
}


# -- YAML with line numbers -------------------------------------------------------------------


class SourceMap:
    """Line numbers (1-based) of the keys and items of a composed YAML document."""

    def __init__(self, root: yaml.Node | None) -> None:
        self._root = root

    def line(self, loc: Sequence[str | int]) -> int:
        """The line of the deepest node `loc` reaches; segments that name nothing are skipped
        (union tags, fields that are missing), so a missing field points at its parent."""
        node = self._root
        if node is None:
            return 1
        line = node.start_mark.line
        for seg in loc:
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    if isinstance(key, yaml.ScalarNode) and key.value == str(seg):
                        line, node = key.start_mark.line, value
                        break
            elif (
                isinstance(node, yaml.SequenceNode)
                and isinstance(seg, int)
                and 0 <= seg < len(node.value)
            ):
                node = node.value[seg]
                line = node.start_mark.line
        return line + 1


def format_loc(loc: Sequence[str | int]) -> str:
    """`steps[3].present` from ("steps", 3, "step:say", "present"); a mapping's key that is
    wrong itself is `...locations[99] (key)` (before pydantic's "[key]" segment)."""
    out = ""
    for i, seg in enumerate(loc):
        key = i + 1 < len(loc) and loc[i + 1] == "[key]"
        if isinstance(seg, int) or key:
            out += f"[{seg}]" + (" (key)" if key else "")
        elif seg != "[key]" and not seg.startswith(_TAG):
            out += f".{seg}" if out else seg
    return out or "(document)"


@dataclass(frozen=True)
class Problem:
    """One problem of a scenario file: its line, the field and what is wrong."""

    line: int
    field: str
    message: str


class ScenarioFileError(ScenarioError):
    """A ScenarioError with its problems: one `file:line: field: message` line each."""

    def __init__(self, path: Path | None, problems: Sequence[Problem]) -> None:
        self.path = path
        self.problems = list(problems)
        where = str(path) if path is not None else "<scenario>"
        super().__init__("\n".join(f"{where}:{p.line}: {p.field}: {p.message}" for p in problems))


def scenario_error(path: Path | None, problems: Sequence[Problem]) -> ScenarioFileError:
    """A ScenarioError listing each problem as `file:line: field: message`."""
    return ScenarioFileError(path, problems)


def path_inside(folder: Path, relative: str, *, follow_symlinks: bool = True) -> bool:
    """Whether `relative` names something inside `folder` (not the folder itself): the one
    check every path a scenario names goes through. Symlinks are followed (a scenario's folder
    comes with the scenario, links included), or not (`follow_symlinks=False`: the roms folder
    is the user's own, and a link they put there is theirs)."""
    if not relative or "\0" in relative or Path(relative).is_absolute():
        return False
    if follow_symlinks:
        inside, target = folder.resolve(), (folder / relative).resolve()
    else:
        inside = Path(os.path.normpath(folder.absolute()))
        target = Path(os.path.normpath(folder.absolute() / relative))
    return target != inside and target.is_relative_to(inside)


@dataclass
class ScenarioDocument:
    """A validated scenario with the file it came from and the lines of its fields."""

    scenario: Scenario
    path: Path | None = None
    source: SourceMap = field(default_factory=lambda: SourceMap(None))

    @property
    def name(self) -> str:
        """The scenario's `name`, else the file's stem."""
        if self.scenario.name:
            return self.scenario.name
        return self.path.stem if self.path is not None else "scenario"

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in the scenario are resolved against."""
        return self.path.parent if self.path is not None else Path.cwd()

    def line(self, *loc: str | int) -> int:
        """The line of a field (1 when the scenario was not read from a file)."""
        return self.source.line(loc)

    def where(self, *loc: str | int) -> str:
        """`file:line` of a field, for messages."""
        return f"{self.path or '<scenario>'}:{self.line(*loc)}"

    def error(self, loc: Sequence[str | int], message: str) -> ScenarioError:
        """A ScenarioError for one field."""
        return scenario_error(self.path, [Problem(self.line(*loc), format_loc(loc), message)])

    def resolve(self, relative: str) -> Path:
        """A path from the scenario, relative to its folder unless absolute."""
        path = Path(relative)
        return path if path.is_absolute() else self.base_dir / path

    def resolve_inside(self, relative: str, loc: Sequence[str | int]) -> Path:
        """A path relative to the scenario's folder that stays inside it (symlinks followed);
        else a ScenarioError naming the field `loc`."""
        if not path_inside(self.base_dir, relative):
            raise self.error(loc, f"must be a path inside the scenario's folder, got {relative!r}")
        return self.base_dir / relative

    def llm_path(self) -> Path | None:
        """The `cassette:PATH` / `record:PATH` file, checked to be inside the scenario's folder."""
        kind, _, path = self.scenario.llm.partition(":")
        if kind not in ("cassette", "record"):
            return None
        return self.resolve_inside(path, ("llm",))

    def prompt_paths(self) -> list[Path]:
        """The expected prompt files (`expect.prompts[i].file`), each checked to be inside the
        scenario's folder: a replay reads them, and `--update-expected` writes them. Raises a
        ScenarioError naming every one that is not."""
        problems: list[Problem] = []
        for i, prompt in enumerate(self.scenario.expect.prompts):
            if not path_inside(self.base_dir, prompt.file):
                loc = ("expect", "prompts", i, "file")
                message = f"must be a path inside the scenario's folder, got {prompt.file!r}"
                problems.append(Problem(self.line(*loc), format_loc(loc), message))
        if problems:
            raise scenario_error(self.path, problems)
        return [self.base_dir / prompt.file for prompt in self.scenario.expect.prompts]

    def check_story(self) -> None:
        """A jericho scenario's story path stays inside the scenario's folder (it is looked up
        there, then in the roms folder; `demo:SEED` names no file). Checked when a scenario
        file is read: `walkthrough_document` names the --game file by its absolute path."""
        spec = self.scenario
        if isinstance(spec, JerichoScenario) and not spec.story.startswith("demo:"):
            self.resolve_inside(spec.story, ("story",))


if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    _EventSource: type[Any] = CParser
else:  # pragma: no cover - PyYAML built without libyaml

    class _PyEventSource(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)

    _EventSource = _PyEventSource


class _TooLarge(Exception):
    """A document past a bound of `cairn.replay.limits`, at the node that crossed it."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class _ScenarioLoader(yaml.composer.Composer, _EventSource, SafeConstructor, Resolver):  # type: ignore[misc]
    """PyYAML's composer and safe constructor over libyaml's events (PyYAML's own scanner and
    parser took most of the 22 s a 200,000-step scenario took to load), without anchors or
    aliases, and with nesting, items per list or mapping and values in all bounded while
    composing: a billion-laughs, self-referencing or oversized document fails at the node
    that crosses a bound, in linear time."""

    def __init__(self, stream: str) -> None:
        _EventSource.__init__(self, stream)
        yaml.composer.Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._depth = 0
        self._nodes = 0
        self._path: list[tuple[str | int, int]] = []
        """The field being composed, with the (0-based) line that names it."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            message = "anchors and aliases (&name, *name) are not allowed in a scenario"
            raise yaml.composer.ComposerError(None, None, message, event.start_mark)
        if self._depth >= MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", event.start_mark
            )
        self._check_items(parent, index)
        segment: tuple[str | int, int] | None = None
        if isinstance(parent, yaml.SequenceNode):
            segment = (index, event.start_mark.line)
        elif isinstance(parent, yaml.MappingNode) and isinstance(index, yaml.Node):
            name = index.value if isinstance(index, yaml.ScalarNode) else "?"
            segment = (str(name), index.start_mark.line)
        if segment is not None:
            self._path.append(segment)
        self._depth += 1
        try:
            self._nodes += 1
            if self._nodes > MAX_YAML_NODES:
                message = f"more than {MAX_YAML_NODES:,} YAML values in the scenario"
                raise _TooLarge(Problem(event.start_mark.line + 1, self._where(), message))
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1
            if segment is not None:
                self._path.pop()

    def _where(self) -> str:
        return format_loc([seg for seg, _ in self._path])

    def _check_items(self, parent: yaml.Node | None, index: Any) -> None:
        """Refuse an item past MAX_ITEMS in its list or mapping (`parent`), named by the field
        that holds that list or mapping, at that field's line."""
        if isinstance(parent, yaml.SequenceNode):
            count = index
        elif isinstance(parent, yaml.MappingNode) and index is None:
            count = len(parent.value)  # a key: the pairs composed so far
        else:
            return
        if count >= MAX_ITEMS:
            line = self._path[-1][1] + 1 if self._path else 1
            message = (
                f"more than {MAX_ITEMS:,} items (a list or mapping in a scenario holds at most "
                f"{MAX_ITEMS:,}; split the scenario)"
            )
            raise _TooLarge(Problem(line, self._where(), message))


def _compose(text: str, path: Path) -> tuple[yaml.Node | None, Any]:
    loader = _ScenarioLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except _TooLarge as exc:
        raise scenario_error(path, [exc.problem]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        context_mark = getattr(exc, "context_mark", None)
        if context and context_mark is not None and context_mark.line + 1 != line:
            context += f" that started at line {context_mark.line + 1}"
        message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
        raise scenario_error(path, [Problem(line, "(yaml)", message)]) from exc
    finally:
        loader.dispose()
    return node, data


def _duplicates(node: yaml.Node | None, loc: Loc = ()) -> list[Problem]:
    problems: list[Problem] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
            if name in seen:
                field_name = format_loc((*loc, name))
                problems.append(Problem(key.start_mark.line + 1, field_name, "duplicate key"))
            seen.add(name)
            problems += _duplicates(value, (*loc, name))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            problems += _duplicates(item, (*loc, i))
    return problems


def _problems(exc: ValidationError, source: SourceMap, prefix: Loc = ()) -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = (*prefix, *err["loc"])
        message = "unknown field" if err["type"] == "extra_forbidden" else err["msg"]
        message = message.removeprefix("Value error, ")
        problems.append(Problem(source.line(loc), format_loc(loc), message))
    return sorted(problems, key=lambda p: p.line)


def parse_scenario(text: str, path: Path) -> ScenarioDocument:
    """Validate scenario YAML text; raise ScenarioError naming `path`, line and field."""
    if len(text) > MAX_SCENARIO_BYTES:  # characters: each is at least a byte
        raise scenario_error(path, [_too_big()])
    node, data = _compose(text, path)
    source = SourceMap(node)
    duplicates = _duplicates(node)
    if duplicates:
        raise scenario_error(path, duplicates)
    if not isinstance(data, dict):
        raise scenario_error(path, [Problem(1, "(document)", "a scenario is a YAML mapping")])
    kind = data.get("kind")
    model = _KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = " or ".join(_KINDS)
        line = source.line(("kind",))
        raise scenario_error(path, [Problem(line, "kind", f"expected {known}, got {kind!r}")])
    try:
        scenario = model.model_validate(data)
    except ValidationError as exc:
        raise scenario_error(path, _problems(exc, source)) from exc
    document = ScenarioDocument(scenario, path, source)
    check_settings(document)
    document.llm_path()
    document.prompt_paths()
    document.check_story()
    if isinstance(scenario, NarrativeScenario):
        check_references(document, scenario)
    else:
        for i, prompt in enumerate(scenario.expect.prompts):
            if prompt.at is not None:
                loc = ("expect", "prompts", i, "at")
                raise document.error(loc, "a jericho scenario has no step ids; leave `at` out")
    return document


def load_scenario(path: Path | str) -> ScenarioDocument:
    """Read and validate a scenario file (at most MAX_SCENARIO_BYTES of it are read)."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SCENARIO_BYTES + 1)
        if len(data) > MAX_SCENARIO_BYTES:
            raise scenario_error(path, [_too_big()])
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise scenario_error(path, [Problem(1, "(file)", f"cannot read: {exc}")]) from exc
    return parse_scenario(text, path)


def _too_big() -> Problem:
    message = f"larger than {MAX_SCENARIO_BYTES:,} bytes (the most a scenario may hold)"
    return Problem(1, "(file)", message)


def check_settings(document: ScenarioDocument) -> None:
    """Validate `settings` against CairnSettings now, so a bad key names its line; a `*_file`
    setting must be a plain file name, so every file the replay writes is in its workdir."""
    problems = [
        Problem(document.line("settings", key), format_loc(("settings", key)), message)
        for key, value in document.scenario.settings.items()
        if key.endswith(FILE_SETTING_SUFFIX) and (message := _not_plain_name(value))
    ]
    if problems:
        raise scenario_error(document.path, sorted(problems, key=lambda p: p.line))
    try:
        ReplaySettings(**document.scenario.settings)
    except ValidationError as exc:
        raise scenario_error(document.path, _problems(exc, document.source, ("settings",))) from exc


def _not_plain_name(value: Any) -> str:
    """Why `value` is not a plain file name ("" when it is one)."""
    if not isinstance(value, str):
        return f"must be a file name, got {value!r}"
    plain = (
        value not in ("", ".", "..")
        and not any(c in value for c in "/\\\0:")
        and Path(value).name == value
        and not Path(value).is_absolute()
    )
    return "" if plain else f"must be a plain file name inside the workdir, got {value!r}"


def check_references(document: ScenarioDocument, scenario: NarrativeScenario) -> None:
    """Every id a step or expectation names is declared in the world (typos fail at load)."""
    locations = {loc.id for loc in scenario.locations}
    npcs = {npc.id for npc in scenario.npcs}
    quests = {q.id: {o.id for o in q.objectives} for q in scenario.quests}
    encounters = {e.id: e.location for e in scenario.encounters}
    problems: list[Problem] = []

    def bad(loc: Loc, message: str) -> None:
        problems.append(Problem(document.line(*loc), format_loc(loc), message))

    for name, items in (
        ("locations", scenario.locations),
        ("npcs", scenario.npcs),
        ("quests", scenario.quests),
        ("acts", scenario.acts),
        ("encounters", scenario.encounters),
    ):
        declared: set[str | int] = set()
        for i, item_id in enumerate([item.id for item in items]):
            if item_id in declared:
                bad((name, i, "id"), f"id {item_id!r} declared twice")
            declared.add(item_id)
    for i, npc in enumerate(scenario.npcs):
        if npc.location is not None and npc.location not in locations:
            bad(("npcs", i, "location"), f"no location {npc.location} declared")
    step_ids: set[str] = set()
    for i, step in enumerate(scenario.steps):
        at: Loc = ("steps", i)
        if step.id is not None:
            if step.id in step_ids:
                bad((*at, "id"), f"step id {step.id!r} used twice")
            step_ids.add(step.id)
        for key, value in _location_refs(step):
            if value is not None and value not in locations:
                bad((*at, key), f"no location {value} declared")
        for key, names in _npc_refs(step):
            for name in names:
                if name not in npcs:
                    bad((*at, key), f"no NPC {name!r} declared")
        if isinstance(step, ObjectiveStep):
            if step.quest not in quests:
                bad((*at, "quest"), f"no quest {step.quest!r} declared")
            elif step.complete_objective not in quests[step.quest]:
                bad((*at, "complete_objective"), f"quest {step.quest!r} has no such objective")
        elif isinstance(step, QuestStep) and step.complete_quest not in quests:
            bad((*at, "complete_quest"), f"no quest {step.complete_quest!r} declared")
        elif isinstance(step, ActStep) and step.progress_act not in {a.id for a in scenario.acts}:
            bad((*at, "progress_act"), f"no act {step.progress_act!r} declared")
        elif isinstance(step, LocationStateStep) and step.complete_encounter is not None:
            where = encounters.get(step.complete_encounter)
            if where != step.update_location:
                bad((*at, "complete_encounter"), "no such encounter declared at this location")
    for i, prompt in enumerate(scenario.expect.prompts):
        if prompt.at is not None and prompt.at not in step_ids:
            bad(("expect", "prompts", i, "at"), f"no step has id {prompt.at!r}")
    if problems:
        raise scenario_error(document.path, sorted(problems, key=lambda p: p.line))


def _location_refs(step: _Step) -> list[tuple[str, int | None]]:
    if isinstance(step, MoveStep):
        return [("move", step.move)]
    if isinstance(step, NpcStep):
        return [("to", step.to)]
    if isinstance(step, SayStep | NoteStep):
        return [("location", step.location)]
    if isinstance(step, TurnStep):
        return [("location_after", step.location_after)]
    if isinstance(step, LocationStateStep):
        return [("update_location", step.update_location)]
    return []


def _npc_refs(step: _Step) -> list[tuple[str, list[str]]]:
    if isinstance(step, SayStep):
        return [("present", step.present), ("mentioned", step.mentioned)]
    if isinstance(step, NpcStep):
        return [("npc", [step.npc])]
    return []
