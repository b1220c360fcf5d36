"""Scenario files as attacks: paths that leave the scenario's folder, YAML bombs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cairn.errors import ScenarioError
from cairn.replay import ScenarioDocument, load_scenario, parse_scenario, replay_files
from cairn.replay.runner import replay_settings
from cairn.replay.scenario import MAX_YAML_DEPTH, NarrativeScenario

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
