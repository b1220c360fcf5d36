"""Scenario replays end to end: every shipped scenario through the API and `cairn replay`."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cairn.cli import main
from cairn.errors import ScenarioError
from cairn.interfaces.game import GameObservation, IGame
from cairn.models.memory import MemoryScope
from cairn.replay import (
    ScenarioDocument,
    find_story,
    load_scenario,
    parse_scenario,
    prepare_workdir,
    run_scenario,
)
from cairn.replay.prepare import replay_settings, scenario_files
from cairn.replay.scenario_models import JerichoScenario
from cairn.replay.scenario_yaml import ScenarioFileError
from tests.conftest import SHARED_ROMS

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))
TAVERN = ROOT / "scenarios" / "tavern_session.yaml"


def _jericho_missing() -> str | None:
    try:
        importlib.import_module("cairn.adapters.game.jericho_game")
    except ImportError as exc:
        return f"cairn.adapters.game.jericho_game is not importable yet ({exc})"
    return None


def _skip_unplayable(document: ScenarioDocument) -> None:
    """Skip a jericho scenario whose story file or adapter is not available here."""
    if not isinstance(document.scenario, JerichoScenario):
        return
    reason = _jericho_missing()
    if reason:
        pytest.skip(reason)
    if not _story_available(document):
        pytest.skip(f"{document.scenario.story} not found: not in {SHARED_ROMS}")


def _story_available(document: ScenarioDocument) -> bool:
    """The demo world is built on demand; story files must be on disk."""
    spec = document.scenario
    demo = isinstance(spec, JerichoScenario) and spec.story.startswith("demo:")
    return demo or find_story(document, SHARED_ROMS) is not None


def invoke_replay(args: Sequence[str]) -> Result:
    """`cairn replay ARGS` through cairn.cli.main (which imports the command when it runs)."""
    return CliRunner().invoke(main, ["replay", *args])


# -- every shipped scenario -------------------------------------------------------------------


def test_scenarios_are_shipped() -> None:
    names = {p.stem for p in SCENARIOS}
    assert {
        "tavern_session",
        "zork1_window",
        "zork1_walkthrough",
        "zork1_troll",
        "demo_key_discovery",
    } <= names


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_shipped_scenario_passes_through_the_api(path: Path, tmp_path: Path) -> None:
    document = load_scenario(path)
    _skip_unplayable(document)
    report = run_scenario(document, tmp_path)
    assert report.passed, report.render()
    assert report.checks and report.outcome is not None
    assert report.outcome.entries, "a replay that stores nothing proves nothing"


def test_every_shipped_scenario_passes_through_the_cli(tmp_path: Path) -> None:
    playable: list[str] = []
    for path in SCENARIOS:
        document = load_scenario(path)
        if isinstance(document.scenario, JerichoScenario) and (
            _jericho_missing() or not _story_available(document)
        ):
            continue
        playable.append(str(path))
    result = invoke_replay([*playable, "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"{len(playable)} scenario(s): {len(playable)} passed, 0 failed" in result.output
    assert "FAIL" not in result.output
    for name in playable:  # each in its own fresh subfolder
        assert (tmp_path / Path(name).stem / ".cairn-replay").is_file()


def _all_playable() -> None:
    """Skip unless every shipped scenario can be played here (Jericho and the story files)."""
    for path in SCENARIOS:
        _skip_unplayable(load_scenario(path))


def _expect_every_shipped_scenario_passed(result: Result) -> None:
    assert result.exit_code == 0, result.output
    n = len(SCENARIOS)
    assert f"{n} scenario(s): {n} passed, 0 failed" in result.output
    for path in SCENARIOS:
        assert f"({path}): " in result.output  # each replayed, once


def test_a_glob_over_the_scenarios_folder_replays_its_scenarios(tmp_path: Path) -> None:
    _all_playable()
    argv = sorted(str(p) for p in (ROOT / "scenarios").glob("*"))  # `scenarios/*`, as a shell
    assert any(Path(arg).is_dir() for arg in argv)  # cassettes/, expected/

    result = invoke_replay([*argv, "--workdir", str(tmp_path)])

    _expect_every_shipped_scenario_passed(result)
    for folder in ("cassettes", "expected"):
        note = f"{ROOT / 'scenarios' / folder} holds no scenario file (*.yaml, *.yml); skipped"
        assert f"note: {note}" in result.stderr


def test_a_folder_replays_the_scenarios_directly_in_it_in_name_order() -> None:
    _all_playable()
    result = invoke_replay([str(ROOT / "scenarios")])
    _expect_every_shipped_scenario_passed(result)
    order = [result.output.index(f"({path}): ") for path in SCENARIOS]
    assert order == sorted(order)
    assert result.stderr == ""  # the folder itself holds scenarios: no note


def test_scenario_files_takes_a_folders_scenarios_only(tmp_path: Path) -> None:
    for name in ("b.yaml", "a.yml", ".hidden.yaml", "notes.txt", "sub/c.yaml"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("kind: narrative\n")
    (tmp_path / "empty").mkdir()
    files, skipped = scenario_files([tmp_path, tmp_path / "notes.txt", tmp_path / "empty"])
    assert files == [tmp_path / "a.yml", tmp_path / "b.yaml", tmp_path / "notes.txt"]
    assert skipped == [tmp_path / "empty"]


def test_a_folder_with_no_scenario_alone_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke_replay([str(ROOT / "scenarios" / "cassettes")])
    assert result.exit_code == 2
    assert "no scenario files in" in result.output


def test_the_tavern_session_covers_seed_004(tmp_path: Path) -> None:
    report = run_scenario(TAVERN, tmp_path)
    assert report.passed, report.render()
    assert report.outcome is not None
    kinds = {t for e in report.outcome.entries for t in e.tags if t.startswith("world:")}
    assert kinds == {
        "world:objective_completed",
        "world:quest_completed",
        "world:act_progressed",
        "world:location_cleared",
        "world:encounter_completed",
    }
    cursors = report.outcome.game_state.scenario
    assert cursors.last_world_message_index == 12
    assert cursors.last_location_message_index == {1: 10, 2: 12, 3: 9}
    lia_in_tavern = [
        e
        for e in report.outcome.entries
        if e.scope is MemoryScope.NPC and e.npc_ids == ["lia"] and e.location_id == 1
    ]
    assert len(lia_in_tavern) == 1  # she left before the player did and is still remembered


# -- failures are readable --------------------------------------------------------------------


def _tavern_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "scenarios"
    shutil.copytree(ROOT / "scenarios" / "expected", folder / "expected")
    shutil.copy(TAVERN, folder / TAVERN.name)
    return folder / TAVERN.name


def test_a_wrong_expectation_fails_with_a_readable_diff(tmp_path: Path) -> None:
    scenario = _tavern_copy(tmp_path)
    expected = scenario.parent / "expected" / "tavern_session.end.txt"
    true_text = expected.read_text()
    expected.write_text(true_text.replace("Reached act 'The conspiracy'.", "Left act 1."))
    text = scenario.read_text().replace(
        "text_contains: burns the letter", "text_contains: slays the dragon"
    )
    scenario.write_text(text)

    report = run_scenario(scenario, tmp_path / "run")

    assert not report.passed
    failed = {check.name: check for check in report.failures}
    assert set(failed) == {"memories[16]", "prompts[1]"}
    diff = failed["prompts[1]"].detail
    assert "(expected)" in diff and "+++ actual prompt" in diff
    assert "-- 2026-01-01 Left act 1. Ovo burns the letter." in diff
    assert "+- 2026-01-01 Reached act 'The conspiracy'. Ovo burns the letter." in diff
    memory = failed["memories[16]"].detail
    assert "expected exactly 1 memory: scope world, visible, text contains 'slays the dragon'" in (
        memory
    )
    assert "closest:" in memory
    assert "[NOTE] Reached act 'The conspiracy' (world, ACTIVE)" in memory
    assert "differs: text lacks 'slays the dragon'" in memory
    line = text.splitlines().index(next(ln for ln in text.splitlines() if "slays the dragon" in ln))
    assert failed["memories[16]"].line == line + 1

    result = invoke_replay([str(scenario), "--workdir", str(tmp_path / "cli")])
    assert result.exit_code == 1
    assert f"FAIL memories[16] ({scenario}:{line + 1})" in result.output
    assert "+- 2026-01-01 Reached act 'The conspiracy'. Ovo burns the letter." in result.output
    assert "1 scenario(s): 0 passed, 1 failed" in result.output


def test_update_expected_rewrites_prompt_files(tmp_path: Path) -> None:
    scenario = _tavern_copy(tmp_path)
    expected = scenario.parent / "expected" / "tavern_session.street.txt"
    true_text = expected.read_text()
    expected.write_text("stale\n")
    (scenario.parent / "expected" / "tavern_session.end.txt").unlink()

    result = invoke_replay([str(scenario), "--update-expected", "--workdir", str(tmp_path / "a")])

    assert result.exit_code == 0, result.output
    assert "updated" in result.output and "written" in result.output
    assert expected.read_text() == true_text
    assert run_scenario(scenario, tmp_path / "b").passed


def test_a_missing_prompt_file_says_how_to_make_it(tmp_path: Path) -> None:
    scenario = _tavern_copy(tmp_path)
    (scenario.parent / "expected" / "tavern_session.end.txt").unlink()
    report = run_scenario(scenario, tmp_path / "run")
    (failure,) = report.failures
    assert "missing expected prompt file" in failure.summary
    assert "--update-expected" in failure.summary
    assert "## World Memory" in failure.detail  # the prompt it would have written


# -- file:line errors -------------------------------------------------------------------------

NARRATIVE_HEAD = "kind: narrative\nlocations:\n  - {id: 1, name: Hall}\nsteps:\n  - move: 1\n"


def test_malformed_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(NARRATIVE_HEAD + "  - say: fine\n   role: npc\n")  # line 7: bad indent
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value).startswith(f"{path}:7: (yaml): invalid YAML")

    result = invoke_replay([str(path), "--workdir", str(tmp_path / "run")])
    assert result.exit_code == 2  # refused: nothing replayed
    assert result.stderr.startswith(f"{path}:7: (yaml): invalid YAML")
    assert not (tmp_path / "run").exists()


def test_an_unknown_field_names_the_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(
        NARRATIVE_HEAD
        + "  - say: Bram waves.\n"  # line 6
        + "    role: npc\n"  # line 7
        + "    presnt: [bram]\n"  # line 8: the typo
        + "expect:\n"
        + "  memories:\n"
        + "    - {scope: world, colour: red}\n"  # line 11
    )
    with pytest.raises(ScenarioFileError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert "typo.yaml:8: steps[1].presnt: unknown field" in message
    assert "typo.yaml:11: expect.memories[0].colour: unknown field" in message
    assert [p.line for p in caught.value.problems] == [8, 11]


@pytest.mark.parametrize(
    ("body", "line", "field", "message"),
    [
        ("  - move: '2'\n", 6, "steps[1].move", "valid integer"),
        ("  - move: 9\n", 6, "steps[1].move", "no location 9 declared"),
        ("  - jump: 2\n", 6, "steps[1]", "a step needs one of the keys move, say"),
        ("  - say: hi\n    present: [bob]\n", 7, "steps[1].present", "no NPC 'bob'"),
        ("  - complete_quest: q\n", 6, "steps[1].complete_quest", "no quest 'q'"),
        ("  - say: a\n  - say: b\n    say: c\n", 8, "steps[2].say", "duplicate key"),
        ("settings:\n  backup_count: -1\n", 7, "settings.backup_count", "greater than"),
        ("settings:\n  llm: offline\n", 6, "settings", "llm: set by the replay"),
        ("llm: anthropic\n", 6, "llm", "expected 'offline', 'cassette:PATH' or 'record:PATH'"),
        ("npcs:\n  - {id: a}\n  - {id: a}\n", 8, "npcs[1].id", "declared twice"),
    ],
)
def test_invalid_scenarios_name_line_and_field(
    tmp_path: Path, body: str, line: int, field: str, message: str
) -> None:
    with pytest.raises(ScenarioError, match=r"x\.yaml") as caught:
        parse_scenario(NARRATIVE_HEAD + body, tmp_path / "x.yaml")
    assert f"x.yaml:{line}: {field}: " in str(caught.value)
    assert message in str(caught.value)


def test_settings_come_from_the_scenario_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAIRN_STORE", "sqlite")  # ignored: a replay is the same everywhere
    text = NARRATIVE_HEAD + "seed: 5\nllm: cassette:rec/x.jsonl\nsettings: {backup_count: 1}\n"
    document = parse_scenario(text, tmp_path / "s.yaml")
    settings = replay_settings(document, tmp_path / "run")
    assert settings.store == "markdown" and settings.backup_count == 1
    assert settings.deterministic_seed == 5 and settings.workdir == tmp_path / "run"
    assert settings.llm == f"cassette:{tmp_path / 'rec' / 'x.jsonl'}"


def test_a_jericho_scenario_needs_one_script_and_a_known_story(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="give either actions or walkthrough"):
        parse_scenario("kind: jericho\nstory: x.z5\n", tmp_path / "j.yaml")
    document = parse_scenario(
        "kind: jericho\nname: j\nstory: nowhere.z5\nactions: [look]\n", tmp_path / "j.yaml"
    )
    with pytest.raises(ScenarioError, match=r"j\.yaml:3: story: nowhere\.z5 is in neither"):
        run_scenario(document, tmp_path / "run", roms=tmp_path)


def test_story_files_have_no_development_only_default_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAIRN_ROMS", raising=False)
    document = parse_scenario(
        "kind: jericho\nname: j\nstory: zork1.z5\nactions: [look]\n", tmp_path / "j.yaml"
    )
    assert find_story(document) is None  # not found in ../shared/roms behind the user's back
    with pytest.raises(ScenarioError, match="give --roms DIR or set CAIRN_ROMS"):
        run_scenario(document, tmp_path / "run")


# -- determinism ------------------------------------------------------------------------------


def test_two_replays_are_byte_identical(tmp_path: Path) -> None:
    first = run_scenario(TAVERN, tmp_path / "one")
    second = run_scenario(TAVERN, tmp_path / "two")
    files = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert "Memories.md" in files
    assert files == sorted(p.name for p in (tmp_path / "two").iterdir())
    for name in files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert first.outcome is not None and second.outcome is not None
    assert first.outcome.prompts == second.outcome.prompts
    assert len(first.outcome.prompts) == 2


ARCHIVING = """kind: narrative
name: archiving
settings: {cap_world: 1, store: STORE}
locations:
  - {id: 1, name: Hall}
steps:
  - move: 1
  - {note: The lamp is lit., world: true}
  - {note: The bell rang., world: true}
  - {note: The door is shut., world: true}
  - end_episode: {}
  - {note: The well is dry., world: true}
  - {note: The gate is open., world: true}
  - end_episode: {}
expect:
  counts: {superseded: 0, world: 1}
"""
"""World memories past `cap_world` are retired, and each episode's end moves them to
Memories.archive.md (twice: the second episode's memories are stamped after the first move)."""


def _set_wall_clock(monkeypatch: pytest.MonkeyPatch, when: datetime) -> None:
    """Every cairn module's `utc_now` (cairn's one reading of the wall clock) returns `when`."""
    from cairn.models import memory

    real = memory.utc_now
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("cairn", "app") and getattr(module, "utc_now", None) is real:
            monkeypatch.setattr(module, "utc_now", lambda: when)


def _all_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("store", ["markdown", "sqlite"])
def test_replays_that_archive_are_byte_identical_whatever_the_wall_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str
) -> None:
    scenario = tmp_path / "archiving.yaml"
    scenario.write_text(ARCHIVING.replace("STORE", store), encoding="utf-8")
    for name, when in (
        ("one", datetime(2030, 1, 1, 8, 0, 0, tzinfo=UTC)),
        ("two", datetime(2031, 7, 15, 17, 45, 30, tzinfo=UTC)),
    ):
        _set_wall_clock(monkeypatch, when)
        report = run_scenario(scenario, tmp_path / name)
        assert report.passed, report.render()

    one, two = _all_files(tmp_path / "one"), _all_files(tmp_path / "two")
    if store == "markdown":
        assert "Memories.archive.md" in one
        assert b"moved here 2026-01-01" in one["Memories.archive.md"]  # the replay's clock
    else:
        assert "memories.sqlite3" in one and "Memories.archive.md" not in one
    assert one.keys() == two.keys()
    for name, data in one.items():
        assert data == two[name], name


def test_a_replay_folder_is_cleared_but_a_foreign_one_is_not(tmp_path: Path) -> None:
    folder = prepare_workdir(tmp_path, "tavern")
    (folder / "Memories.md").write_text("old run")
    assert list(prepare_workdir(tmp_path, "tavern").iterdir()) == [folder / ".cairn-replay"]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ScenarioError, match="not made by a replay"):
        prepare_workdir(tmp_path, "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


# -- the jericho runner, on a fake game -------------------------------------------------------


class TinyGame(IGame):
    """Three rooms in a row: Gate (1) -north-> Yard (2) -east-> Hall (3).

    In the Yard `take coin` scores +1; in the Hall `take crown` scores +2 and wins.
    """

    ROOMS = {1: "Gate", 2: "Yard", 3: "Hall"}
    MOVES = {(1, "north"): 2, (2, "east"): 3, (3, "west"): 2, (2, "south"): 1}
    WALK = ["north", "take coin", "east", "take crown"]

    def __init__(self) -> None:
        self.actions: list[str] = []
        self.closed = False
        self._room, self._score, self._won = 1, 0, False
        self._items: list[str] = []

    @property
    def name(self) -> str:
        return "tiny"

    @property
    def fully_supported(self) -> bool:
        return True

    def reset(self) -> GameObservation:
        self._room, self._score, self._items, self._won = 1, 0, [], False
        return self._observe("Gate\nAn iron gate. A yard lies north.")

    def step(self, action: str) -> GameObservation:
        self.actions.append(action)
        target = self.MOVES.get((self._room, action))
        if target is not None:
            self._room = target
            return self._observe(f"{self.ROOMS[target]}\nYou are in the {self.ROOMS[target]}.")
        if (self._room, action) == (2, "take coin") and "coin" not in self._items:
            self._items.append("coin")
            self._score += 1
            return self._observe("Taken. Your score has gone up by one point.")
        if (self._room, action) == (3, "take crown"):
            self._items.append("crown")
            self._score += 2
            self._won = True
            return self._observe("Taken. You have won!")
        return self._observe("You can't do that here.")

    def _observe(self, text: str) -> GameObservation:
        return GameObservation(
            text=text,
            location_id=self._room,
            location_name=self.ROOMS[self._room],
            inventory=list(self._items),
            score=self._score,
            max_score=3,
            done=self._won,
            won=self._won,
        )

    def save(self) -> bytes:
        return b""

    def restore(self, state: bytes) -> GameObservation:
        return self._observe("")

    def walkthrough(self) -> list[str]:
        return list(self.WALK)

    def close(self) -> None:
        self.closed = True


TINY = """kind: jericho
name: tiny-walk
story: tiny.z5
walkthrough: true
episodes: 2
expect:
  coverage_min: 1.0
  memory_locations_reported: true
  memories:
    - {scope: location, location: 2, category: SUCCESS, text_contains: take coin}
    - {scope: location, location: 3, category: SUCCESS, text_contains: take crown}
    - {scope: world, tag: "world:objective_completed", count: 2}
    - {scope: world, tag: "score:+2", count: 1}
    - {scope: world, tag: "episode:2", count: 2}
  counts:
    locations_visited: 3
"""


def test_the_jericho_runner_sends_each_turn_through_the_bus(tmp_path: Path) -> None:
    document = parse_scenario(TINY, tmp_path / "tiny.yaml")
    game = TinyGame()

    report = run_scenario(document, tmp_path / "run", game_factory=lambda: game)

    assert report.passed, report.render()
    assert report.steps == 8 and game.actions == TinyGame.WALK * 2 and game.closed
    assert report.outcome is not None
    gs = report.outcome.game_state
    assert gs.episode == 2
    assert gs.scenario.completed_objectives == ["score:ep2-t2", "score:ep2-t4"]
    history = [(m.location_id, m.role, m.text.split("\n")[0]) for m in gs.conversation_history]
    assert history[:5] == [
        (1, "narrator", "Gate"),
        (1, "player", "> north"),
        (2, "narrator", "Yard"),  # ChangeLocation(via "north") came before the game text
        (2, "player", "> take coin"),
        (2, "narrator", "Taken. Your score has gone up by one point."),
    ]
    assert report.outcome.visited == [1, 2, 3]
    scores = [e for e in report.outcome.entries if "world:objective_completed" in e.tags]
    assert sorted((e.title, e.episode, e.turn_start, e.turn_end) for e in scores) == [
        ("Scored 1 in Yard by 'take coin'", 1, 2, 2),  # the turn it happened, not the talk's
        ("Scored 2 in Hall by 'take crown'", 1, 4, 4),
    ]
    moves = [e for e in report.outcome.entries if e.via is not None]
    assert {(e.location_id, e.via, e.leads_to) for e in moves} >= {
        (1, "north", 2),  # stored at the SOURCE location
        (2, "east", 3),
    }


def test_walkthrough_steps_cut_the_walkthrough(tmp_path: Path) -> None:
    text = TINY.replace("walkthrough: true", "walkthrough_steps: 3").split("expect:")[0]
    document = parse_scenario(text.replace("episodes: 2", "episodes: 1"), tmp_path / "t.yaml")
    game = TinyGame()
    report = run_scenario(document, tmp_path / "run", game_factory=lambda: game)
    assert game.actions == ["north", "take coin", "east"] and report.steps == 3


# -- the command line -------------------------------------------------------------------------


def test_the_cli_replays_a_story_files_walkthrough(tmp_path: Path) -> None:
    story = SHARED_ROMS / "905.z5"
    if _jericho_missing() or not story.is_file():
        pytest.skip(f"no Jericho adapter or no {story}")
    result = invoke_replay(["--game", str(story), "--walkthrough", "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "PASS 905-walkthrough: jericho, 22 steps" in result.output
    assert "PASS memory_locations_reported" in result.output
    assert (tmp_path / "905-walkthrough" / "Memories.md").is_file()


@pytest.mark.parametrize(
    "args",
    [[], ["--walkthrough"], ["--game", __file__]],
    ids=["nothing", "walkthrough-alone", "game-alone"],
)
def test_cli_usage_errors(args: list[str]) -> None:
    result = invoke_replay(args)
    assert result.exit_code == 2 and "Usage" in result.output


def test_a_temporary_workdir_is_removed_when_everything_passed() -> None:
    result = invoke_replay([str(TAVERN)])
    assert result.exit_code == 0, result.output
    assert "replay folders:" not in result.output
    workdir = next(ln for ln in result.output.splitlines() if "workdir:" in ln).split()[-1]
    assert not Path(workdir).exists()


def test_examples_embed_runs() -> None:
    done = subprocess.run(
        [sys.executable, "examples/embed.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "## Recent Location Memory" in done.stdout
    assert "Mira the harbourmaster warns of a storm tonight." in done.stdout
    assert "## World Memory" in done.stdout
    assert "Completed quest 'Light before the storm'." in done.stdout
