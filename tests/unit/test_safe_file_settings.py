"""Issue 37 item 2: file-naming settings are checked against each other and the store's files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cairn.errors import ConfigError
from cairn.settings import load_settings


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder as the current one, with no CAIRN_* variable set."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.upper().startswith("CAIRN_"):
            monkeypatch.delenv(name)
    return tmp_path


@pytest.mark.parametrize(
    ("variable", "value", "other"),
    [
        ("CAIRN_REPORT_FILE", "memories.sqlite3", "sqlite_file"),
        ("CAIRN_KNOWLEDGE_FILE", "memories.sqlite3", "sqlite_file"),
        ("CAIRN_REPORT_FILE", "Memories.md", "memory_file"),
        ("CAIRN_KNOWLEDGE_FILE", "Memories.md", "memory_file"),
        ("CAIRN_KNOWLEDGE_FILE", "memories.md", "memory_file"),  # one file without case
        ("CAIRN_MAP_FILE", "report.json", "report_file"),
        ("CAIRN_LLM_LOG_FILE", "knowledgebase.md", "knowledge_file"),
        ("CAIRN_REPORT_FILE", "Memories.md.2", "memory_file"),  # a session backup
        ("CAIRN_REPORT_FILE", "Memories.archive.md", "memory_file"),
        ("CAIRN_MAP_FILE", ".Memories.md.snapshot", "memory_file"),
        ("CAIRN_REPORT_FILE", "memories.sqlite3-wal", "sqlite_file"),
        ("CAIRN_SQLITE_FILE", "Memories.md", "memory_file"),
        ("CAIRN_MEMORY_FILE", "report.json", "report_file"),
    ],
)
def test_a_setting_naming_another_settings_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, other: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as caught:
        load_settings(store="sqlite")
    message = str(caught.value)
    assert variable.removeprefix("CAIRN_").lower() in message
    assert other in message
    assert "Value error" not in message


def test_a_clash_in_overrides_and_pyproject_is_refused_too(project: Path) -> None:
    with pytest.raises(ConfigError, match=r"report_file .* and map_file"):
        load_settings(map_file="out.json", report_file="out.json")
    (project / "pyproject.toml").write_text("[tool.cairn]\nknowledge_file = 'map.json'\n")
    with pytest.raises(ConfigError, match=r"map_file .* knowledge_file|knowledge_file .* map_file"):
        load_settings()


def test_a_setting_naming_cairns_own_files_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"report_file .*report.html"):
        load_settings(report_file="report.html")
    with pytest.raises(ConfigError, match=r"knowledge_file .*marker"):
        load_settings(knowledge_file=".cairn")


def test_backups_count_only_as_far_as_backup_count() -> None:
    assert load_settings(report_file="Memories.md.4", backup_count=3).report_file == "Memories.md.4"
    with pytest.raises(ConfigError, match="report_file"):
        load_settings(report_file="Memories.md.4", backup_count=4)


def test_distinct_names_load() -> None:
    settings = load_settings(
        memory_file="notes.md",
        sqlite_file="notes.db",
        report_file="Memories.md",  # the default name, free when memory_file moved away
        knowledge_file="kb.md",
    )
    assert (settings.memory_file, settings.report_file) == ("notes.md", "Memories.md")
    assert load_settings().report_file == "report.json"


def test_every_setting_that_names_a_file_is_checked() -> None:
    from cairn.file_names import FILE_SETTINGS
    from cairn.settings import CairnSettings

    named = {name for name in CairnSettings.model_fields if name.endswith("_file")}
    assert named == set(FILE_SETTINGS)
