"""The command line as a new user meets it: --version, -v/-q anywhere, defaults in --help, a
legend under the table, and `cairn map` on nothing is an error, not an empty graph."""

from __future__ import annotations

import logging
from pathlib import Path

from click.testing import CliRunner

from cairn.cli import main


def test_version_is_printed() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("cairn, version ")


def test_verbose_and_quiet_work_after_the_subcommand(tmp_path: Path) -> None:
    runner = CliRunner()
    for flag, level in (("-v", logging.INFO), ("-q", logging.ERROR)):
        result = runner.invoke(main, ["memories", "show", "--workdir", str(tmp_path), flag])
        assert result.exit_code == 0, result.output
        assert logging.getLogger().level == level
    assert runner.invoke(main, ["-v", "map", "--workdir", str(tmp_path)]).exit_code != 0


def test_help_shows_defaults_and_the_table_legend() -> None:
    text = CliRunner().invoke(main, ["play", "--help"], terminal_width=200).output
    assert "[default: 0]" in text  # --seed
    assert "(default: play_episodes, 3)" in text
    assert "rep.fail: commands that failed again" in text
    assert "./cairn-runs" in text


def test_map_on_an_empty_workdir_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["map", "--workdir", str(tmp_path)])
    assert result.exit_code != 0
    assert "no map here" in str(result.exception)
    assert "graph LR" not in result.output
