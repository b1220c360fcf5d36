"""Scenario replays: YAML scenarios run through the container and bus, with checked outcomes.

The names below are imported on first use (`cairn replay --help` stays cheap)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.lazy_names import lazy_getattr

if TYPE_CHECKING:
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

_WHERE = {
    "CheckResult": "expectations",
    "Expectations": "expectations",
    "ReplayOutcome": "expectations",
    "ROMS_VARIABLE": "runner",
    "ReplayReport": "runner",
    "find_story": "runner",
    "prepare_workdir": "runner",
    "replay_files": "runner",
    "run_scenario": "runner",
    "JerichoScenario": "scenario",
    "NarrativeScenario": "scenario",
    "Scenario": "scenario",
    "ScenarioDocument": "scenario",
    "ScenarioFileError": "scenario",
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
