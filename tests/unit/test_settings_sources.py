"""load_settings reads overrides, CAIRN_* variables and [tool.cairn] as pydantic-settings did."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cairn.errors import ConfigError
from cairn.settings import load_settings


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder as the current one, with no CAIRN_* variable set."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.upper().startswith("CAIRN_"):
            monkeypatch.delenv(name)
    return tmp_path


def test_overrides_beat_the_environment_which_beats_pyproject(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.cairn]\nstore = 'markdown'\nbackup_count = 5\ncap_world = 7\n"
    )
    monkeypatch.setenv("CAIRN_STORE", "sqlite")
    monkeypatch.setenv("cairn_backup_count", "6")  # names in any case
    settings = load_settings(store="postgres")
    assert (settings.store, settings.backup_count, settings.cap_world) == ("postgres", 6, 7)
    assert {"store", "backup_count", "cap_world"} <= settings.model_fields_set
    assert "lock_timeout" not in settings.model_fields_set
    assert load_settings().store == "sqlite"


def test_tables_merge_key_by_key_and_json_variables_are_parsed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "pyproject.toml").write_text("[tool.cairn.models]\nsummary = 'from-toml'\n")
    monkeypatch.setenv("CAIRN_MODELS", '{"adventurer": "from-env"}')
    monkeypatch.setenv("CAIRN_GAME_NPCS", '{"mygame": ["imp"]}')
    settings = load_settings()
    assert settings.models == {"adventurer": "from-env", "summary": "from-toml"}
    assert settings.game_npcs == {"mygame": ["imp"]}


def test_defaults_are_validated_and_no_pyproject_is_no_table(project: Path) -> None:
    settings = load_settings()
    assert settings.store == "markdown" and settings.model_fields_set == set()


@pytest.mark.parametrize(
    ("env", "toml", "words"),
    [
        ({"CAIRN_MODELS": "notjson"}, None, 'field "models"'),
        ({"CAIRN_BACKUP_COUNT": "many"}, None, "invalid cairn settings: backup_count"),
        ({}, "[tool.cairn]\nbogus = 1\n", "bogus: Extra inputs are not permitted"),
        ({}, "[tool.cairn\n", "not valid TOML"),
        ({}, "[tool]\ncairn = 5\n", "[tool.cairn] must be a table"),
        ({}, "[[tool.cairn]]\nstore = 'sqlite'\n", "[tool.cairn] must be a table"),
    ],
)
def test_unreadable_settings_are_config_errors(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    toml: str | None,
    words: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if toml is not None:
        (project / "pyproject.toml").write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert words in str(caught.value)
