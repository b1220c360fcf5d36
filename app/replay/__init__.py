"""Scenario replays: YAML scenarios run through the container and bus, with checked outcomes."""

from cairn.replay.expectations import CheckResult, Expectations, ReplayOutcome
from cairn.replay.runner import (
    ROMS_VARIABLE,
    ReplayReport,
    find_story,
    prepare_workdir,
    replay_files,
    run_scenario,
)
from cairn.replay.scenario import (
    JerichoScenario,
    NarrativeScenario,
    Scenario,
    ScenarioDocument,
    ScenarioFileError,
    load_scenario,
    parse_scenario,
)

__all__ = [
    "ROMS_VARIABLE",
    "CheckResult",
    "Expectations",
    "JerichoScenario",
    "NarrativeScenario",
    "ReplayOutcome",
    "ReplayReport",
    "Scenario",
    "ScenarioDocument",
    "ScenarioFileError",
    "find_story",
    "load_scenario",
    "parse_scenario",
    "prepare_workdir",
    "replay_files",
    "run_scenario",
]
