"""Scenario files as attacks: paths that leave the scenario's folder, YAML bombs, ids no store
can hold, files too large to refuse quickly."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.cli import main
from cairn.errors import ScenarioError
from cairn.replay import (
    ScenarioDocument,
    find_story,
    load_scenario,
    parse_scenario,
    replay_files,
    run_scenario,
)
from cairn.replay.limits import MAX_ITEMS, MAX_SCENARIO_BYTES, MAX_YAML_DEPTH
from cairn.replay.prepare import replay_settings
from cairn.replay.scenario_models import NarrativeScenario

HEAD = "kind: narrative\nname: attack\nlocations:\n  - {id: 1, name: Hall}\nsteps:\n  - move: 1\n"
"""Five lines; what a test appends starts at line 7."""

FILE_SETTINGS = (
    "memory_file",
    "sqlite_file",
    "map_file",
    "knowledge_file",
    "report_file",
    "llm_log_file",
)


def _write(folder: Path, text: str, name: str = "attack.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _outside(tmp_path: Path) -> tuple[Path, Path]:
    """An existing file outside the scenario's folder (mode 0o640) and one that must not be
    created."""
    existing = tmp_path / "outside.md"
    existing.write_text("# not yours\n", encoding="utf-8")
    existing.chmod(0o640)
    return existing, tmp_path / "never.md"


def _assert_untouched(existing: Path, absent: Path) -> None:
    assert existing.read_text(encoding="utf-8") == "# not yours\n"
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640
    assert not absent.exists()
    assert not list(existing.parent.glob("outside.md.*")), "no backup or temp file beside it"


# -- 5: every file a scenario names stays in its folder / the replay workdir -------------------


@pytest.mark.parametrize("key", FILE_SETTINGS)
@pytest.mark.parametrize("where", ["absolute", "parent", "new-absolute", "new-parent"])
def test_a_file_setting_outside_the_workdir_is_rejected_and_nothing_is_written(
    tmp_path: Path, key: str, where: str
) -> None:
    existing, absent = _outside(tmp_path)
    target = existing if where in ("absolute", "parent") else absent
    value = str(target) if "absolute" in where else f"../{target.name}"
    path = _write(tmp_path / "scenarios", HEAD + f"settings:\n  {key}: '{value}'\n")

    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:8: settings.{key}: ")
    assert "plain file name" in message and "\n" not in message

    reports = replay_files([path], tmp_path / "runs")
    assert reports[0].error is not None and f"{path}:8: settings.{key}" in reports[0].error
    _assert_untouched(existing, absent)


@pytest.mark.parametrize(
    "value", ["", ".", "..", "a/b.md", "a\\b.md", "/etc/passwd", "..\\x.md", "c:x.md"]
)
def test_a_file_setting_must_be_a_plain_file_name(tmp_path: Path, value: str) -> None:
    text = HEAD + f"settings: {{memory_file: {value!r}}}\n"
    with pytest.raises(ScenarioError, match=r"s\.yaml:7: settings\.memory_file: "):
        parse_scenario(text, tmp_path / "s.yaml")


def test_a_plain_file_name_is_kept_in_the_workdir(tmp_path: Path) -> None:
    document = parse_scenario(HEAD + "settings: {memory_file: Notes.md}\n", tmp_path / "s.yaml")
    settings = replay_settings(document, tmp_path / "run")
    assert settings.memory_file == "Notes.md" and settings.workdir == tmp_path / "run"


@pytest.mark.parametrize("kind", ["cassette", "record"])
@pytest.mark.parametrize("where", ["absolute", "parent"])
def test_an_llm_path_outside_the_scenario_folder_is_rejected(
    tmp_path: Path, kind: str, where: str
) -> None:
    existing, _ = _outside(tmp_path)
    value = str(existing) if where == "absolute" else f"../{existing.name}"
    path = _write(tmp_path / "scenarios", HEAD + f"llm: '{kind}:{value}'\n")

    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value).startswith(f"{path}:7: llm: must be a path inside")

    reports = replay_files([path], tmp_path / "runs")
    assert reports[0].error is not None and f"{path}:7: llm:" in reports[0].error
    _assert_untouched(existing, tmp_path / "never.md")


def test_an_llm_path_through_a_symlink_out_of_the_folder_is_rejected(tmp_path: Path) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    os.symlink(tmp_path, folder / "escape")
    text = HEAD + "llm: record:escape/outside.jsonl\n"
    with pytest.raises(ScenarioError, match=r"s\.yaml:7: llm: must be a path inside"):
        parse_scenario(text, folder / "s.yaml")


def test_an_llm_path_inside_the_folder_is_accepted(tmp_path: Path) -> None:
    document = parse_scenario(HEAD + "llm: cassette:tapes/../x.jsonl\n", tmp_path / "s.yaml")
    settings = replay_settings(document, tmp_path / "run")
    assert settings.llm == f"cassette:{tmp_path / 'tapes' / '..' / 'x.jsonl'}"


def test_a_document_built_in_code_is_checked_when_replayed(tmp_path: Path) -> None:
    spec = NarrativeScenario.model_validate(
        {"kind": "narrative", "locations": [{"id": 1}], "steps": [{"move": 1}]}
        | {"llm": "record:/tmp/elsewhere.jsonl"}
    )
    with pytest.raises(ScenarioError, match="llm: must be a path inside"):
        replay_settings(ScenarioDocument(spec, tmp_path / "s.yaml"), tmp_path / "run")


# -- 6: YAML bombs fail fast, with one line naming the file ------------------------------------

BILLION_LAUGHS = """\
kind: narrative
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def _one_line_error(path: Path) -> str:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:")
    return message


def test_a_billion_laughs_scenario_is_rejected_at_its_first_anchor(tmp_path: Path) -> None:
    path = _write(tmp_path, BILLION_LAUGHS)
    message = _one_line_error(path)
    assert message.startswith(f"{path}:2: (yaml): invalid YAML: anchors and aliases")
    reports = replay_files([path], tmp_path / "runs")
    assert reports[0].error == message


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("kind: narrative\nloop: &loop [*loop]\n", 2),
        ("kind: narrative\nloop: &loop {self: *loop}\n", 2),
        ("kind: narrative\nx: *nowhere\n", 2),
        (HEAD + "base: &base {id: 2}\nlocations2:\n  - <<: *base\n", 7),
    ],
    ids=["recursive-sequence", "recursive-mapping", "undefined-alias", "merge-key"],
)
def test_aliases_are_a_scenario_error_not_a_recursion_error(
    tmp_path: Path, text: str, line: int
) -> None:
    path = _write(tmp_path, text)
    message = _one_line_error(path)
    assert message.startswith(f"{path}:{line}: (yaml): invalid YAML: ")
    assert "anchors and aliases" in message or "alias" in message


@pytest.mark.parametrize("opener", ["[", "{a: "])
def test_deep_nesting_is_rejected_before_any_recursive_walk(tmp_path: Path, opener: str) -> None:
    path = _write(tmp_path, "kind: narrative\ndeep: " + opener * 50_000 + "\n")
    message = _one_line_error(path)
    assert f"nested deeper than {MAX_YAML_DEPTH} levels" in message


def test_ordinary_nesting_still_loads(tmp_path: Path) -> None:
    document = parse_scenario(
        HEAD + "expect: {}\nsettings: {game_npcs: {zork1: [troll]}}\n", tmp_path / "s.yaml"
    )
    assert document.scenario.settings == {"game_npcs": {"zork1": ["troll"]}}


# -- 28.1: an expected prompt file stays in the scenario's folder ------------------------------


def _prompt_attack(tmp_path: Path, where: str) -> tuple[Path, Path, Path]:
    """A scenario whose `expect.prompts[0].file` (line 9) leaves its folder; the file outside
    that exists, and the one that must not be created."""
    existing, absent = _outside(tmp_path)
    folder = tmp_path / "scenarios"
    folder.mkdir()
    values = {
        "absolute": str(existing),
        "parent": f"../{existing.name}",
        "new-absolute": str(absent),
        "new-parent": f"../{absent.name}",
        "inner-parent": f"expected/../../{existing.name}",
    }
    if where == "symlink":
        os.symlink(tmp_path, folder / "escape")
        value = f"escape/{existing.name}"
    else:
        value = values[where]
    text = HEAD + f"expect:\n  prompts:\n    - {{file: '{value}'}}\n"
    return _write(folder, text), existing, absent


PROMPT_ESCAPES = ["absolute", "parent", "new-absolute", "new-parent", "inner-parent", "symlink"]


@pytest.mark.parametrize("where", PROMPT_ESCAPES)
def test_an_expected_prompt_file_outside_the_folder_is_refused(tmp_path: Path, where: str) -> None:
    path, existing, absent = _prompt_attack(tmp_path, where)

    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:9: expect.prompts[0].file: must be a path inside")
    assert "\n" not in message

    reports = replay_files([path], tmp_path / "runs")
    assert reports[0].error == message
    _assert_untouched(existing, absent)


@pytest.mark.parametrize("update", [False, True], ids=["diff", "update-expected"])
@pytest.mark.parametrize("where", PROMPT_ESCAPES)
def test_replay_neither_prints_nor_overwrites_a_file_outside_the_folder(
    tmp_path: Path, where: str, update: bool
) -> None:
    path, existing, absent = _prompt_attack(tmp_path, where)
    args = [str(path), "--workdir", str(tmp_path / "runs")]
    result = CliRunner().invoke(main, ["replay", *args, *(["--update-expected"] * update)])

    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"{path}:9: expect.prompts[0].file: must be a path inside")
    assert "not yours" not in result.output  # the file's content is not shown in a diff
    assert not (tmp_path / "runs").exists()  # nothing replayed
    _assert_untouched(existing, absent)


def test_a_prompt_file_in_code_built_scenario_is_checked_before_the_replay(tmp_path: Path) -> None:
    existing, _ = _outside(tmp_path)
    spec = NarrativeScenario.model_validate(
        {"kind": "narrative", "locations": [{"id": 1}], "steps": [{"move": 1}]}
        | {"expect": {"prompts": [{"file": str(existing)}]}}
    )
    document = ScenarioDocument(spec, tmp_path / "scenarios" / "s.yaml")
    with pytest.raises(ScenarioError, match=r"expect\.prompts\[0\]\.file: must be a path inside"):
        run_scenario(document, tmp_path / "run", update_expected=True)
    assert not (tmp_path / "run").exists()
    _assert_untouched(existing, tmp_path / "never.md")


def test_a_prompt_file_inside_the_folder_is_still_written(tmp_path: Path) -> None:
    path = _write(tmp_path, HEAD + "expect:\n  prompts:\n    - {file: expected/../x/end.txt}\n")
    report = run_scenario(path, tmp_path / "run", update_expected=True)
    assert report.passed, report.render()
    assert report.checks[0].summary == f"written {tmp_path / 'expected/../x/end.txt'}"
    assert (tmp_path / "x" / "end.txt").is_file()


def test_a_story_path_outside_the_folder_is_refused(tmp_path: Path) -> None:
    existing, _ = _outside(tmp_path)
    for story in (str(existing), f"../{existing.name}"):
        text = f"kind: jericho\nname: j\nstory: '{story}'\nactions: [look]\n"
        with pytest.raises(ScenarioError, match=r"j\.yaml:3: story: must be a path inside"):
            parse_scenario(text, tmp_path / "scenarios" / "j.yaml")


def test_a_story_looked_up_in_the_roms_folder_stays_inside_it(tmp_path: Path) -> None:
    roms, folder = tmp_path / "roms", tmp_path / "deep" / "scenarios"
    roms.mkdir()
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "secret.z5").write_bytes(b"not a story")
    document = parse_scenario(  # inside its own folder: deep/scenarios/secret.z5
        "kind: jericho\nname: j\nstory: ../scenarios/secret.z5\nactions: [look]\n",
        folder / "j.yaml",
    )
    assert find_story(document, roms) is None  # not roms/../scenarios/secret.z5
    (roms / "zork1.z5").symlink_to(tmp_path / "scenarios" / "secret.z5")  # the user's own link
    text = "kind: jericho\nstory: zork1.z5\nactions: [look]\n"
    document = parse_scenario(text, folder / "j.yaml")
    assert find_story(document, roms) == roms / "zork1.z5"


# -- 28.2: location ids are what the stores can hold -------------------------------------------

IDS = """kind: narrative
name: ids
settings: {store: STORE}
locations:
  - {id: LOCATION, name: Hall}
npcs:
  - {id: bob, location: NPC_LOCATION}
encounters:
  - {id: rat, location: ENCOUNTER}
steps:
  - move: MOVE
  - say: Bob waves.
    location: SAY
  - npc: bob
    to: NPC_TO
  - note: A hall.
    location: NOTE
  - turn: look
    response: A hall.
    location_after: TURN
  - update_location: UPDATE
    complete_encounter: rat
expect:
  memories:
    - {location: EXPECTED}
  cursors:
    locations: {CURSOR: 0}
"""
"""Every location id a scenario carries, one placeholder each."""
ID_FIELDS = {
    "LOCATION": "locations[0].id",
    "NPC_LOCATION": "npcs[0].location",
    "ENCOUNTER": "encounters[0].location",
    "MOVE": "steps[0].move",
    "SAY": "steps[1].location",
    "NPC_TO": "steps[2].to",
    "NOTE": "steps[3].location",
    "TURN": "steps[4].location_after",
    "UPDATE": "steps[5].update_location",
    "EXPECTED": "expect.memories[0].location",
    "CURSOR": "expect.cursors.locations[{value}] (key)",
}


def _id_scenario(store: str, placeholder: str, value: int) -> tuple[str, int]:
    lines = IDS.replace("STORE", store).splitlines()
    line = next(i for i, ln in enumerate(lines, 1) if placeholder in ln)
    text = "\n".join(lines) + "\n"
    for name in sorted(ID_FIELDS, key=len, reverse=True):  # NPC_LOCATION before LOCATION
        text = text.replace(name, str(value) if name == placeholder else "1")
    return text, line


@pytest.mark.parametrize("value", [10**26, 2**63, -1], ids=["huge", "2**63", "negative"])
@pytest.mark.parametrize("placeholder", list(ID_FIELDS))
@pytest.mark.parametrize("store", ["markdown", "sqlite"])
def test_a_location_id_no_store_can_hold_is_one_line_naming_its_field(
    tmp_path: Path, store: str, placeholder: str, value: int
) -> None:
    text, line = _id_scenario(store, placeholder, value)
    path = _write(tmp_path, text)
    field = ID_FIELDS[placeholder].format(value=value)
    bound = f"less than or equal to {2**63 - 1}" if value > 0 else "greater than or equal to 0"

    result = CliRunner().invoke(main, ["replay", str(path), "--workdir", str(tmp_path / "runs")])

    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # no traceback
    assert result.stderr.splitlines()[0] == f"{path}:{line}: {field}: Input should be {bound}"
    assert not (tmp_path / "runs").exists()


EXTREMES = """kind: narrative
name: extremes
settings: {store: STORE}
locations:
  - {id: 0, name: Yard}
  - {id: 9223372036854775807, name: Hall}
steps:
  - move: 9223372036854775807
  - {note: A hall., location: 9223372036854775807}
  - move: 0
  - {note: A yard., location: 0}
expect:
  memories:
    - {location: 0, text_contains: yard}
    - {location: 9223372036854775807, text_contains: hall}
"""


@pytest.mark.parametrize("store", ["markdown", "sqlite"])
def test_the_smallest_and_largest_location_ids_are_stored(tmp_path: Path, store: str) -> None:
    path = _write(tmp_path, EXTREMES.replace("STORE", store))
    report = run_scenario(path, tmp_path / "run")
    assert report.passed, report.render()


# -- 28.3: a huge scenario is refused quickly, before it is parsed whole -----------------------


def test_a_200000_step_scenario_is_refused_at_its_steps(tmp_path: Path) -> None:
    path = _write(tmp_path, HEAD + "  - say: The wind howls.\n" * 200_000)
    message = _one_line_error(path)
    assert message == (
        f"{path}:5: steps: more than {MAX_ITEMS:,} items (a list or mapping in a scenario"
        f" holds at most {MAX_ITEMS:,}; split the scenario)"
    )
    result = CliRunner().invoke(main, ["replay", str(path)])
    assert result.exit_code == 2 and result.stderr.startswith(message)


def test_a_scenario_at_the_bound_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, HEAD + "  - say: The wind howls.\n" * (MAX_ITEMS - 1))
    document = load_scenario(path)
    assert isinstance(document.scenario, NarrativeScenario)
    assert len(document.scenario.steps) == MAX_ITEMS


def test_a_jericho_scenarios_actions_and_a_mapping_are_bounded_too(tmp_path: Path) -> None:
    actions = "kind: jericho\nstory: demo:1\nactions:\n" + "  - look\n" * (MAX_ITEMS + 1)
    assert "j.yaml:3: actions: more than" in _one_line_error(_write(tmp_path, actions, "j.yaml"))
    keys = HEAD + "settings:\n" + "".join(f"  k{i}: 1\n" for i in range(MAX_ITEMS + 1))
    assert "m.yaml:7: settings: more than" in _one_line_error(_write(tmp_path, keys, "m.yaml"))


def test_a_document_past_the_values_bound_is_refused_where_it_crosses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cairn.replay.scenario_yaml.MAX_YAML_NODES", 20)
    path = _write(tmp_path, HEAD + "  - say: a\n  - say: b\n  - say: c\n  - say: d\n")
    message = _one_line_error(path)
    assert message == f"{path}:8: steps[2]: more than 20 YAML values in the scenario"


def test_a_file_past_the_size_bound_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    path = _write(tmp_path, HEAD + "#" * MAX_SCENARIO_BYTES)
    message = _one_line_error(path)
    assert message == (
        f"{path}:1: (file): larger than {MAX_SCENARIO_BYTES:,} bytes (the most a scenario may hold)"
    )
