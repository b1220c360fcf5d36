"""What a replay is given before it runs: the scenario files a command line names, a fresh
folder, settings from the scenario only, and the story file it plays."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from cairn.adapters.game.game_opener import open_game
from cairn.errors import ScenarioError
from cairn.interfaces.game import IGame
from cairn.replay.expectations import Expectations
from cairn.replay.scenario_document import ScenarioDocument, path_inside
from cairn.replay.scenario_models import JerichoScenario, ReplaySettings

ROMS_VARIABLE = "CAIRN_ROMS"
"""Where story files are looked up when no --roms is given (beside the scenario first)."""


def roms_folder(roms: Path | None = None) -> Path | None:
    """`roms` when given, else $CAIRN_ROMS, else None (story files only beside the scenario)."""
    if roms is not None:
        return roms
    value = os.environ.get(ROMS_VARIABLE)
    return Path(value) if value else None


MARKER = ".cairn-replay"
"""Marks a folder a replay made, so the next replay of that scenario may clear it."""


SCENARIO_SUFFIXES = (".yaml", ".yml")
"""What a scenario file's name ends with, among a folder's files."""


def scenario_files(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """The scenario files `paths` name, in order: a file as given; for a folder, the scenario
    files directly inside it (SCENARIO_SUFFIXES, not hidden), sorted by name. Also the folders
    that hold none (`scenarios/cassettes` of a `scenarios/*` glob): skipped, for a note."""
    files: list[Path] = []
    empty: list[Path] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        found = sorted(
            p
            for p in path.iterdir()
            if p.suffix in SCENARIO_SUFFIXES and not p.name.startswith(".") and p.is_file()
        )
        files += found
        if not found:
            empty.append(path)
    return files, empty


def walkthrough_document(story: Path, episodes: int = 1) -> ScenarioDocument:
    """A jericho scenario replaying `story`'s whole walkthrough; it checks that every memory
    is keyed by a location the game reported."""
    spec = JerichoScenario(
        kind="jericho",
        name=f"{story.stem}-walkthrough",
        story=str(story.resolve()),
        walkthrough=True,
        episodes=episodes,
        expect=Expectations(memory_locations_reported=True),
    )
    return ScenarioDocument(spec)


def prepare_workdir(root: Path, name: str) -> Path:
    """`root/name`, emptied when an earlier replay made it; a foreign non-empty folder is an
    error (a replay never deletes what it did not write)."""
    folder = root / name
    if folder.exists():
        if (folder / MARKER).is_file():
            shutil.rmtree(folder)
        elif not folder.is_dir() or any(folder.iterdir()):
            raise ScenarioError(f"{folder}: exists and was not made by a replay; not clearing it")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text("made by cairn replay; cleared by the next one\n")
    return folder


def replay_settings(document: ScenarioDocument, workdir: Path) -> ReplaySettings:
    """The scenario's settings, its seed as `deterministic_seed`, a cassette path resolved
    (inside the scenario's folder); CairnSettings keeps every `*_file` a plain name."""
    spec = document.scenario
    llm = spec.llm
    llm_path = document.llm_path()
    if llm_path is not None:
        llm = f"{llm.partition(':')[0]}:{llm_path}"
    values = {"memory_space": document.name, **spec.settings}  # the scenario's own space
    return ReplaySettings(**values, workdir=workdir, deterministic_seed=spec.seed, llm=llm)


def find_story(document: ScenarioDocument, roms: Path | None = None) -> Path | None:
    """A jericho scenario's story file: next to the scenario, else in `roms`; None if absent."""
    spec = document.scenario
    if not isinstance(spec, JerichoScenario):
        return None
    folder = roms_folder(roms)
    candidates = [document.resolve(spec.story)]
    if folder is not None and path_inside(folder, spec.story, follow_symlinks=False):
        candidates.append(folder / spec.story)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def open_story(
    document: ScenarioDocument,
    spec: JerichoScenario,
    roms: Path | None,
    game_npcs: dict[str, list[str]] | None = None,
) -> IGame:
    """The scenario's story file in Jericho, with the NPC names to detect (the scenario's
    `npcs`, else `game_npcs` for the story's stem; with neither, the characters are found from
    the game itself). `story: demo:SEED` is the built-in demo
    world, compiled on first use into cairn's cache folder (the same one `cairn play` uses)."""
    if spec.story.startswith("demo:"):
        return open_game(None, demo_seed=int(spec.story.removeprefix("demo:") or 1))
    path = find_story(document, roms)
    if path is None:
        folder = roms_folder(roms)
        where = (
            f"in neither {document.base_dir} nor {folder}"
            if folder is not None
            else f"not in {document.base_dir} (give --roms DIR or set {ROMS_VARIABLE})"
        )
        raise document.error(("story",), f"{spec.story} is {where}")

    known = game_npcs if game_npcs is not None else ReplaySettings().game_npcs
    names = spec.npcs if spec.npcs is not None else known.get(path.stem)
    return open_game(path, npc_names=names)
