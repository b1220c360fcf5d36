"""A validated scenario with the file it came from: the lines of its fields, and every path it
names resolved inside its own folder."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cairn.errors import ScenarioError
from cairn.replay.scenario_models import JerichoScenario, Scenario
from cairn.replay.scenario_yaml import Problem, SourceMap, format_loc, scenario_error


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
