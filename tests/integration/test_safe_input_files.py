"""Files a person names are read with bounds (issue 37, item 3): a FIFO given as a scenario,
an import file, a story file or Memories.md is refused at once (it used to wait for a writer
forever), so is a device such as /dev/zero (it grew to GBs), and a file over the size cap is
refused naming the file and the limit."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cairn.adapters import input_files
from cairn.adapters.game.story_file import check_story_file
from cairn.adapters.storage import transfer
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.cli import main
from cairn.errors import CairnError, GameError, ScenarioError, StoreError
from cairn.replay.scenario import load_scenario

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def outcome(read: Callable[[], object], fifo: Path) -> object:
    """What `read()` returns or raises, run aside; should it wait on `fifo`, a writer is opened
    to let it go on and the test fails (instead of hanging)."""
    got: list[object] = []

    def run() -> None:
        try:
            got.append(read())
        except BaseException as e:  # handed to the test
            got.append(e)

    reader = threading.Thread(target=run, daemon=True)
    reader.start()
    reader.join(30)
    if reader.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # end the wait: empty input
        reader.join(30)
        pytest.fail(f"reading {fifo} waited for a writer")
    return got[0]


def refusal(read: Callable[[], object], fifo: Path) -> BaseException:
    """The error `read()` raises (see `outcome`)."""
    got = outcome(read, fifo)
    assert isinstance(got, BaseException), f"{fifo} was read as a file"
    return got


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_a_fifo_scenario_is_refused(fifo: Path) -> None:
    error = refusal(lambda: load_scenario(fifo), fifo)
    assert isinstance(error, ScenarioError)
    assert f"{fifo}:1: (file): the scenario is a FIFO (named pipe), not a regular file" in str(
        error
    )


def test_a_fifo_import_file_is_refused(fifo: Path) -> None:
    error = refusal(lambda: transfer.read_export(fifo), fifo)
    assert isinstance(error, StoreError)
    assert str(error).startswith(f"{fifo}: the import file is a FIFO")


def test_a_fifo_story_file_is_refused(fifo: Path) -> None:
    error = refusal(lambda: check_story_file(fifo), fifo)
    assert isinstance(error, GameError)
    assert str(error).startswith(f"{fifo}: the story file is a FIFO")


def test_a_fifo_memories_md_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "Memories.md")
    fifo = tmp_path / "Memories.md"
    error = refusal(lambda: MarkdownMemoryStore(fifo).entries(), fifo)
    assert isinstance(error, StoreError)
    assert "the memory file is a FIFO" in str(error)


def test_the_command_line_refuses_a_fifo_story_and_import(tmp_path: Path, fifo: Path) -> None:
    runner = CliRunner()
    for args, said in (
        (["play", "--game", str(fifo), "--workdir", str(tmp_path / "w")], "story file"),
        (["memories", "import", str(fifo), "--workdir", str(tmp_path)], "import file"),
    ):
        result = outcome(lambda args=args: runner.invoke(main, args), fifo)
        assert isinstance(result, Result)
        assert result.exit_code != 0
        assert f"the {said} is a FIFO" in result.output + str(result.exception)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize(
    ("read", "kind"),
    [
        (lambda p: load_scenario(p), ScenarioError),
        (lambda p: transfer.read_export(p), StoreError),
        (lambda p: check_story_file(p), GameError),
        (lambda p: MarkdownMemoryStore(p).entries(), StoreError),
    ],
)
def test_dev_zero_is_refused_without_being_read(
    tmp_path: Path, read: Callable[[Path], object], kind: type[CairnError]
) -> None:
    zero = tmp_path / "Memories.md"
    zero.symlink_to("/dev/zero")
    with pytest.raises(kind, match="is a character device, not a regular file"):
        read(zero)


def test_a_file_over_the_cap_is_refused_naming_it_and_the_limit(tmp_path: Path) -> None:
    big = tmp_path / "export.jsonl"
    big.write_bytes(b"{}\n" * 100)
    with pytest.raises(StoreError, match=r"export\.jsonl: larger than 64 bytes"):
        input_files.read_named_file(
            big, what="import file", limit=64, error=lambda p: StoreError(f"{big}: {p}")
        )


def test_each_input_has_a_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * 2000)
    monkeypatch.setattr(transfer, "MAX_IMPORT_BYTES", 1000)
    with pytest.raises(StoreError, match=r"big: larger than 1,000 bytes \(the most an import"):
        transfer.read_export(big)
    monkeypatch.setattr(input_files, "MAX_MEMORY_FILE_BYTES", 1000)
    with pytest.raises(StoreError, match=r"big: larger than 1,000 bytes \(the most a memory"):
        MarkdownMemoryStore(big).entries()
    story = tmp_path / "huge.z5"
    story.write_bytes(b"\x05" + bytes(input_files.MAX_STORY_BYTES))
    with pytest.raises(GameError, match=r"huge\.z5: larger than 1,048,576 bytes"):
        check_story_file(story)


def test_the_workdir_marker_cassette_and_saved_edit_are_read_with_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files cairn reads back that a person can replace: a FIFO as the workdir's marker
    is refused at once; a cassette or an editor's save over its cap is refused naming it;
    a save that is not UTF-8 is refused and kept."""
    from cairn import memory_edit, workdir
    from cairn.adapters.llm import cassette
    from cairn.errors import ConfigError, WorkdirError

    folder = tmp_path / "run"
    folder.mkdir()
    os.mkfifo(folder / workdir.MARKER)
    got = refusal(lambda: workdir.read_marker(folder), folder / workdir.MARKER)
    assert isinstance(got, WorkdirError) and "FIFO" in str(got)

    tape = tmp_path / "tape.jsonl"
    tape.write_bytes(b"{}\n" * 100)
    monkeypatch.setattr(cassette, "MAX_CASSETTE_BYTES", 64)
    with pytest.raises(ConfigError, match=r"tape\.jsonl: larger than 64 bytes"):
        cassette.CassetteClient(tape, "replay", {})

    saved = tmp_path / "edit.md"
    saved.write_bytes(b"x" * 200)
    monkeypatch.setattr(memory_edit, "MAX_IMPORT_BYTES", 100)
    with pytest.raises(CairnError, match=r"edit\.md: larger than 100 bytes"):
        memory_edit._saved_text(saved)
    saved.write_bytes(b"# Memories\n\xff\xfe\n")
    with pytest.raises(CairnError, match=r"edit\.md: not UTF-8 .* your text stays there"):
        memory_edit._saved_text(saved)
    assert saved.read_bytes() == b"# Memories\n\xff\xfe\n"


def test_a_fifo_or_huge_pyproject_is_refused_before_the_settings_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn import settings
    from cairn.errors import ConfigError

    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "pyproject.toml")
    got = refusal(lambda: settings.load_settings(), tmp_path / "pyproject.toml")
    assert isinstance(got, ConfigError) and "not a regular file" in str(got)
    (tmp_path / "pyproject.toml").unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.cairn]\n" + "# x\n" * 50)
    monkeypatch.setattr(settings, "MAX_PYPROJECT_BYTES", 100)
    with pytest.raises(ConfigError, match=r"pyproject\.toml: larger than 100 bytes"):
        settings.load_settings()
