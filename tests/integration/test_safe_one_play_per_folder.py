"""Issue 37 item 8: two plays started together on one folder. Each run has its own id and
folder; the workdir's run lock lets one play at a time in it (the second refuses at once,
naming the folder), so no transcript line is ever broken and report.json is one run's."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cairn.adapters.run_lock import run_lock
from cairn.cli import main
from cairn.errors import WorkdirError
from cairn.play import runner
from cairn.play.runner import PlayResult, run_play
from cairn.settings import load_settings


def _play(workdir: Path, **kw: Any) -> PlayResult:
    return run_play(load_settings(workdir=workdir), episodes=1, max_turns=kw.pop("turns", 4), **kw)


def _transcript_lines(workdir: Path) -> list[dict[str, Any]]:
    lines = []
    for transcript in workdir.glob("runs/*/transcript.jsonl"):
        lines += [json.loads(line) for line in transcript.read_text().splitlines()]
    return lines


def test_a_second_play_started_during_a_play_refuses_and_breaks_nothing(tmp_path: Path) -> None:
    """The second play starts (in another thread) while the first is in its first turn."""
    second: list[BaseException | PlayResult] = []

    def start_the_second(episode: int, turn: int, obs: object) -> None:
        if not second:
            thread = threading.Thread(target=lambda: second.append(_try_play(tmp_path)))
            thread.start()
            thread.join()

    first = _play(tmp_path, turns=6, on_turn=start_the_second)

    [refused] = second
    assert isinstance(refused, WorkdirError), refused
    assert f"{tmp_path}: another cairn play is running in this folder" in str(refused)
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [first.report["run_id"]]
    assert _transcript_lines(tmp_path)  # every line parses as JSON
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["run_id"] == first.report["run_id"]
    _play(tmp_path)  # and the lock is free once the first play ended


def _try_play(workdir: Path) -> BaseException | PlayResult:
    try:
        return _play(workdir)
    except BaseException as exc:  # the test looks at what it was
        return exc


def test_two_plays_started_together_in_two_threads_never_break_a_line(tmp_path: Path) -> None:
    start = threading.Barrier(2)
    outcomes: list[BaseException | PlayResult] = []

    def one() -> None:
        start.wait()
        outcomes.append(_try_play(tmp_path))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    results = [o for o in outcomes if isinstance(o, PlayResult)]
    errors = [o for o in outcomes if not isinstance(o, PlayResult)]
    assert results, errors
    assert all(isinstance(e, WorkdirError) and "another cairn play" in str(e) for e in errors), [
        repr(e) for e in errors
    ]
    run_ids = {r.report["run_id"] for r in results}
    assert len(run_ids) == len(results)  # one run id each
    assert _transcript_lines(tmp_path)  # every line parses as JSON
    assert json.loads((tmp_path / "report.json").read_text())["run_id"] in run_ids


def test_two_plays_of_one_second_and_seed_get_two_run_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner.time, "strftime", lambda fmt: "20261128-120000")
    first, second = _play(tmp_path), _play(tmp_path)
    assert first.report["run_id"] == "20261128-120000-s0"
    assert second.report["run_id"] == "20261128-120000-s0-2"
    assert first.run_dir != second.run_dir
    assert all(len(list(r.run_dir.iterdir())) == 1 for r in (first, second))


def test_a_play_in_another_process_holding_the_folder_is_refused_by_the_cli(
    tmp_path: Path,
) -> None:
    holder = (
        "import sys, time\nfrom pathlib import Path\n"
        "from cairn.adapters.run_lock import run_lock\n"
        "with run_lock(Path(sys.argv[1])):\n"
        "    print('held', flush=True)\n    sys.stdin.readline()\n"
    )
    _play(tmp_path)  # the folder is this game's
    before = sorted(p.name for p in tmp_path.iterdir())
    with subprocess.Popen(
        [sys.executable, "-c", holder, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as other:
        assert other.stdout is not None and other.stdin is not None
        assert other.stdout.readline() == "held\n"
        play = ["play", "--episodes", "1", "--max-turns", "2", "--workdir", str(tmp_path)]
        for extra in ([], ["--fresh"]):
            result = CliRunner().invoke(main, [*play, *extra])
            assert isinstance(result.exception, WorkdirError), result.output
            assert "another cairn play is running in this folder" in str(result.exception)
        assert sorted(p.name for p in tmp_path.iterdir()) == before  # --fresh moved nothing
        other.stdin.write("\n")
        other.stdin.flush()
    with run_lock(tmp_path):  # free again
        pass


def test_a_marker_another_play_is_writing_does_not_make_the_folder_foreign(tmp_path: Path) -> None:
    """Two plays claiming one empty folder at once: the second sees the first's marker being
    written (its temp file), not a folder of someone else's files."""
    from cairn.workdir import MARKER, claim_workdir, demo_identity

    (tmp_path / f"{MARKER}.0123456789ab.tmp").write_text("{", encoding="utf-8")
    claim_workdir(tmp_path, demo_identity(1))
    assert (tmp_path / MARKER).is_file()
