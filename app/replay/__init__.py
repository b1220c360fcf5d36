"""Scenario replays: YAML scenarios run through the container and bus, with checked outcomes.

The names below are imported on first use (`cairn replay --help` stays cheap)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.lazy_names import lazy_getattr

if TYPE_CHECKING:
    from cairn.replay.expectations import CheckResult, Expectations, ReplayOutcome
    from cairn.replay.prepare import ROMS_VARIABLE, find_story, prepare_workdir
    from cairn.replay.results import ReplayReport
    from cairn.replay.runner import replay_files, run_scenario
    from cairn.replay.scenario import load_scenario, parse_scenario
    from cairn.replay.scenario_document import ScenarioDocument
    from cairn.replay.scenario_models import JerichoScenario, NarrativeScenario, Scenario
    from cairn.replay.scenario_yaml import ScenarioFileError

_WHERE = {
    "CheckResult": "expectations",
    "Expectations": "expectations",
    "ReplayOutcome": "expectations",
    "ROMS_VARIABLE": "prepare",
    "ReplayReport": "results",
    "find_story": "prepare",
    "prepare_workdir": "prepare",
    "replay_files": "runner",
    "run_scenario": "runner",
    "JerichoScenario": "scenario_models",
    "NarrativeScenario": "scenario_models",
    "Scenario": "scenario_models",
    "ScenarioDocument": "scenario_document",
    "ScenarioFileError": "scenario_yaml",
    "load_scenario": "scenario",
    "parse_scenario": "scenario",
}

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


__getattr__ = lazy_getattr("cairn.replay", _WHERE)
