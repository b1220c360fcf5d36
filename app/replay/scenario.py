"""Replay scenarios: YAML files validated by pydantic; every error names the file, line and field.

Two kinds share one header (`name`, `description`, `seed`, `llm`, `settings`, `expect`):

- `narrative`: `locations`, `npcs`, `quests`, `acts`, `encounters`, then `steps`, each a mapping
  with one action key (`move`, `say`, `npc`, `note`, `turn`, `complete_objective`,
  `complete_quest`, `progress_act`, `update_location`, `end_episode`, `save`, `restore`) sent
  as an engine would.
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

This module reads a file and checks what pydantic cannot (settings, paths, references); the
models are in `scenario_models`, the bounded YAML reader and `file:line` problems in
`scenario_yaml`, the validated document in `scenario_document`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cairn.adapters.input_files import read_named_file
from cairn.replay.limits import MAX_SCENARIO_BYTES
from cairn.replay.scenario_document import ScenarioDocument
from cairn.replay.scenario_models import (
    FILE_SETTING_SUFFIX,
    KINDS,
    ActStep,
    LocationStateStep,
    MoveStep,
    NarrativeScenario,
    NoteStep,
    NpcStep,
    ObjectiveStep,
    QuestStep,
    ReplaySettings,
    RestoreStep,
    SaveStep,
    SayStep,
    StepBase,
    TurnStep,
)
from cairn.replay.scenario_yaml import (
    Loc,
    Problem,
    SourceMap,
    compose,
    duplicates,
    format_loc,
    scenario_error,
)


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
    node, data = compose(text, path)
    source = SourceMap(node)
    repeated = duplicates(node)
    if repeated:
        raise scenario_error(path, repeated)
    if not isinstance(data, dict):
        raise scenario_error(path, [Problem(1, "(document)", "a scenario is a YAML mapping")])
    kind = data.get("kind")
    model = KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = " or ".join(KINDS)
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
        data = read_named_file(
            path,
            what="scenario",
            limit=MAX_SCENARIO_BYTES,
            error=lambda problem: scenario_error(path, [Problem(1, "(file)", problem)]),
        )
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
    saves: set[str] = set()
    for i, step in enumerate(scenario.steps):
        at: Loc = ("steps", i)
        if isinstance(step, SaveStep):
            saves.add(step.save)
        elif isinstance(step, RestoreStep) and step.restore not in saves:
            bad((*at, "restore"), f"no step before it saves {step.restore!r}")
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


def _location_refs(step: StepBase) -> list[tuple[str, int | None]]:
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


def _npc_refs(step: StepBase) -> list[tuple[str, list[str]]]:
    if isinstance(step, SayStep):
        return [("present", step.present), ("mentioned", step.mentioned)]
    if isinstance(step, NpcStep):
        return [("npc", [step.npc])]
    return []
