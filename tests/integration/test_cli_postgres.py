"""`cairn memories export --format jsonl` / `import` between markdown, sqlite and postgres, the
command line's answer to a server it cannot use (one line, exit 2, no password), and the memory
space a game plays into."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.adapters.storage.postgres_store import PostgresMemoryStore
from cairn.cli import main
from cairn.events.events import connect, memory_recorded
from cairn.models.memory import LocationRecord, MemoryEntry, MemoryStatus
from cairn.play.runner import default_space, run_play
from cairn.replay.prepare import replay_settings, walkthrough_document
from cairn.settings import load_settings
from cairn.testing import FakeGame
from cairn.testing.postgres_server import free_port
from tests.contract.conftest import as_stored
from tests.contract.test_store_contract import full_entries
from tests.postgres import server


def seeded_markdown(workdir: Path) -> list[MemoryEntry]:
    """A markdown store holding memories that set every field, and odd location records."""
    store = MarkdownMemoryStore(workdir / "Memories.md")
    entries = full_entries()
    with store.transaction() as tx:
        for entry in entries:
            tx.add(entry)
        for episode in (1, 1, 2):
            tx.record_visit(15, "West of House", episode)
        tx.record_visit(-3, "Négative ** room \\ [1]\x00", None)
    store.checkpoint()  # an episode ended: the SUPERSEDED ones are in the archive now
    assert any(e.status is MemoryStatus.SUPERSEDED for e in entries)
    assert store.archived() and (workdir / "Memories.archive.md").is_file()
    store.close()
    return [as_stored("markdown", e) for e in entries]


def cli(*args: str, url: str | None = None) -> str:
    env = {"CAIRN_DATABASE_URL": url} if url else {}
    result = CliRunner().invoke(main, list(args), env=env)
    assert result.exit_code == 0, result.output
    return result.output


def export(workdir: Path, store: str, *extra: str, url: str | None = None) -> str:
    return cli(
        "memories", "export", "--format", "jsonl", "--workdir", str(workdir), "--store", store,
        *extra, url=url,
    )  # fmt: skip


def test_an_export_round_trips_through_sqlite_postgres_and_markdown_unchanged(
    tmp_path: Path,
) -> None:
    url = server().url
    entries = seeded_markdown(tmp_path / "md")
    first = export(tmp_path / "md", "markdown")
    lines = [json.loads(line) for line in first.splitlines()]
    assert lines[0] == {"cairn_export": 1}
    assert [LocationRecord.model_validate(x["location"]) for x in lines[1:4]] == [
        LocationRecord(id=-3, name="Négative ** room \\ [1]\x00", visits=1, episodes=[]),
        LocationRecord(id=15, name="West of House", visits=3, episodes=[1, 2]),
        LocationRecord(id=20, name="", visits=0, episodes=[]),
    ]
    exported = [MemoryEntry.model_validate(x["memory"]) for x in lines[4:]]
    assert sorted(exported, key=lambda e: e.id) == sorted(entries, key=lambda e: e.id)
    path = tmp_path / "export.jsonl"
    space = ("--space", str(tmp_path))
    hops: list[tuple[str, Path, tuple[str, ...]]] = [
        ("sqlite", tmp_path / "sqlite", ()),
        ("postgres", tmp_path / "pg", space),
        ("markdown", tmp_path / "md-again", ()),
    ]
    current = first
    for kind, workdir, extra in hops:
        path.write_text(current, encoding="utf-8")
        done = cli(
            "memories", "import", str(path), "--workdir", str(workdir), "--store", kind, *extra,
            url=url,
        )  # fmt: skip
        assert done.startswith(f"{len(entries)} memories and 3 locations into")
        current = export(workdir, kind, *extra, url=url)
        assert current == first, kind


def test_import_refuses_a_store_that_holds_memories_and_names_a_bad_line(tmp_path: Path) -> None:
    seeded_markdown(tmp_path / "md")
    path = tmp_path / "export.jsonl"
    path.write_text(export(tmp_path / "md", "markdown"), encoding="utf-8")
    runner = CliRunner()
    args = ["memories", "import", str(path), "--workdir", str(tmp_path / "md")]
    full = runner.invoke(main, args)
    assert full.exit_code == 1 and "import into an empty store" in str(full.exception)
    path.write_text('{"cairn_export": 1}\n{"memory": {"title": 5}}\n', encoding="utf-8")
    bad = runner.invoke(main, ["memories", "import", str(path), "--workdir", str(tmp_path / "x")])
    assert f"{path}:2:" in str(bad.exception)


def run_cli(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    env["CAIRN_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "cairn", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("fault", ["password", "unreachable", "malformed"])
def test_a_server_cairn_cannot_use_is_one_line_exit_2_and_no_password(
    tmp_path: Path, fault: str
) -> None:
    secret = "Wr0ng-s3cret-pw"
    running = server()
    port = running.port if fault == "password" else free_port()
    url = f"postgresql://{running.role}:{secret}@127.0.0.1:{port}/{running.role}"
    if fault == "malformed":
        url = url.replace("://", "//")
    workdir = tmp_path / "work"
    result = run_cli(
        tmp_path, url, "memories", "show", "--store", "postgres", "--workdir", str(workdir)
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("error: ")
    expected = {
        "password": "password authentication failed",
        "unreachable": "Connection refused",
        "malformed": "not a valid PostgreSQL connection URL",
    }[fault]
    assert expected in result.stderr
    assert secret not in result.stdout + result.stderr
    for written in tmp_path.rglob("*"):
        assert not written.is_file() or secret.encode() not in written.read_bytes()


def test_the_postgres_store_needs_a_database_url(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "", "memories", "show", "--store", "postgres")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: database_url: required by the postgres store (CAIRN_DATABASE_URL)"
    )


def test_a_game_plays_into_its_own_memory_space_by_default(tmp_path: Path) -> None:
    url = server().url
    settings = load_settings(workdir=tmp_path / "run", store="postgres", database_url=url)
    game = FakeGame()
    run_play(settings, episodes=1, max_turns=12, game=game)
    store = PostgresMemoryStore(url, space=game.name)
    try:
        assert store.entries()
    finally:
        store.close()
    story = tmp_path / "tiny.z5"
    story.write_bytes(b"not really a story")
    digest = hashlib.sha256(b"not really a story").hexdigest()[:16]
    assert default_space(settings, story, None) == f"tiny-{digest}"
    assert default_space(settings, None, None) == "demo-world-1"
    scenario = walkthrough_document(story)
    assert replay_settings(scenario, tmp_path).memory_space == "tiny-walkthrough"


def test_fresh_does_not_pretend_to_clear_a_shared_space(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["play", "--fresh", "--store", "postgres", "--workdir", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "give --space a new name" in result.output


def test_play_goes_on_through_a_server_restart_and_keeps_every_recorded_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url, space = server().url, str(tmp_path)
    settings = load_settings(
        workdir=tmp_path / "run", store="postgres", database_url=url, memory_space=space
    )
    recorded: list[str] = []
    at_restart: list[int] = []

    def note(sender: Any, **kwargs: Any) -> None:
        recorded.append(kwargs["entry"].id)

    def on_turn(episode: int, turn: int, observation: Any) -> None:
        if episode == 1 and turn == 6:
            server().restart()  # every connection of the run is cut here
            at_restart.append(len(recorded))

    connect(memory_recorded, note)
    try:
        result = run_play(settings, episodes=2, max_turns=20, game=FakeGame(), on_turn=on_turn)
    finally:
        memory_recorded.disconnect(note)
    assert [e["episode"] for e in result.report["episodes"]] == [1, 2]
    assert at_restart and len(recorded) > at_restart[0]  # memories recorded after the restart
    assert "connection lost" in caplog.text  # the store reconnected, and play went on
    store = PostgresMemoryStore(url, space=space)
    try:
        assert set(recorded) <= {m.id for m in store.entries()}
    finally:
        store.close()
