"""Issue 37 item 10: a play that fails to start (a file that is no story file, a mistyped
--llm, a missing key) leaves no folder behind: not `cairn-runs/<game>/.cairn`, not a --workdir
it made; a folder that was there before is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.cli import main
from cairn.errors import CairnError
from cairn.play.runner import run_play
from cairn.settings import load_settings

PLAY = ["play", "--episodes", "1", "--max-turns", "2"]
FAILED_STARTS = {
    "not-a-story": ["--game", "README.md"],
    "mistyped-llm": ["--llm", "opnai"],
    "no-key": ["--llm", "anthropic"],
    "no-cassette": ["--llm", "cassette:missing.json"],
    "no-agent": ["--agent", "no_such_module:Agent"],
}


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("CAIRN_WORKDIR", raising=False)
    (tmp_path / "README.md").write_text("# Not a story file\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("args", list(FAILED_STARTS.values()), ids=list(FAILED_STARTS))
@pytest.mark.parametrize("workdir", [[], ["--workdir", "new/run"]], ids=["default", "new"])
def test_a_failed_start_leaves_the_folder_listing_unchanged(
    here: Path, args: list[str], workdir: list[str]
) -> None:
    before = _listing(here)
    result = CliRunner().invoke(main, [*PLAY, *args, *workdir])
    assert result.exit_code != 0 and isinstance(result.exception, (CairnError, SystemExit))
    assert _listing(here) == before
    show = CliRunner().invoke(main, ["memories", "show"])
    assert "cairn-runs/" not in show.output, show.output


def test_a_failed_start_in_a_folder_that_was_there_leaves_it_as_it_was(here: Path) -> None:
    first = CliRunner().invoke(main, [*PLAY, "--workdir", "run"])
    assert first.exit_code == 0, first.output
    empty = here / "empty"
    empty.mkdir()
    before = _listing(here)
    for args in FAILED_STARTS.values():
        for workdir in ("run", "empty"):
            CliRunner().invoke(main, [*PLAY, *args, "--workdir", workdir])
            assert _listing(here) == before, (args, workdir)


def test_run_play_leaves_no_folder_when_the_llm_cannot_be_built(here: Path) -> None:
    settings = load_settings(workdir=here / "lib" / "run", llm="opnai")
    with pytest.raises(CairnError, match="opnai"):
        run_play(settings, episodes=1, max_turns=2)
    assert _listing(here) == ["README.md"]
