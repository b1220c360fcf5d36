"""`cairn memories search`, `show --json`, and `show` finding the store a workdir holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.cli import main
from cairn.memory_api import Memory


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from a folder with no pyproject.toml and no CAIRN_STORE: nothing chose a store."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.delenv("CAIRN_STORE", raising=False)
    monkeypatch.delenv("CAIRN_WORKDIR", raising=False)
    return folder


def seeded(workdir: Path, store: str = "markdown") -> dict[str, str]:
    with Memory.open(workdir, store=store) as memory:
        ids = {
            "window": memory.add(
                "Open the window, then enter it.",
                title="Enter kitchen through window",
                category="SUCCESS",
                location_id=79,
                location_name="Behind House",
            ).id,
            "lantern": memory.add("The brass lantern is in the living room.", location_id=5).id,
            "troll": memory.add("The troll blocks the east passage.", npc_id="troll").id,
            "storm": memory.add("Rain at dusk.", title="Storm coming").id,
        }
        memory.forget(ids["storm"])
    return ids


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["memories", *args])
    return result.exit_code, result.output


def test_search_json_ranks_and_limits(tmp_path: Path) -> None:
    ids = seeded(tmp_path)
    code, out = invoke("search", "brass", "lantern", "--json", "--workdir", str(tmp_path))
    assert code == 0, out
    hits = json.loads(out)
    assert [h["memory"]["id"] for h in hits] == [ids["lantern"]]
    assert hits[0]["score"] > 0 and hits[0]["memory"]["location_id"] == 5
    code, out = invoke("search", "the", "--k", "2", "--json", "--workdir", str(tmp_path))
    assert code == 0 and len(json.loads(out)) == 2
    code, out = invoke("search", "troll", "--npc", "troll", "--json", "--workdir", str(tmp_path))
    assert [h["memory"]["id"] for h in json.loads(out)] == [ids["troll"]]


def test_search_hides_forgotten_memories_unless_all(tmp_path: Path) -> None:
    ids = seeded(tmp_path)
    code, out = invoke("search", "rain", "--json", "--workdir", str(tmp_path))
    assert code == 0 and json.loads(out) == []
    code, out = invoke("search", "rain", "--all", "--json", "--workdir", str(tmp_path))
    assert [h["memory"]["id"] for h in json.loads(out)] == [ids["storm"]]
    assert json.loads(out)[0]["memory"]["status"] == "SUPERSEDED"


@pytest.mark.parametrize("query", ['"', "AND", "*", "(", "-x", "", "NEAR(a b)"])
def test_search_takes_hostile_queries_literally(tmp_path: Path, query: str) -> None:
    seeded(tmp_path)
    code, out = invoke("search", "--json", "--workdir", str(tmp_path), "--", query)
    assert code == 0, out
    assert isinstance(json.loads(out), list)


def test_search_prints_text_results(tmp_path: Path) -> None:
    seeded(tmp_path)
    code, out = invoke("search", "window", "--workdir", str(tmp_path))
    assert code == 0
    assert out.startswith("1. (location 79, score ")
    assert "[SUCCESS] Enter kitchen through window" in out
    code, out = invoke("search", "unicorn", "--workdir", str(tmp_path))
    assert code == 0 and "No memories in" in out and "'unicorn'" in out


def test_show_json_lists_memories_with_their_fields(tmp_path: Path) -> None:
    ids = seeded(tmp_path)
    code, out = invoke("show", "--json", "--workdir", str(tmp_path))
    assert code == 0, out
    shown = {m["id"]: m for m in json.loads(out)}
    assert set(shown) == {ids["window"], ids["lantern"], ids["troll"]}
    window = shown[ids["window"]]
    assert window["title"] == "Enter kitchen through window"
    assert window["category"] == "SUCCESS" and window["status"] == "ACTIVE"
    assert window["scope"] == "location" and window["location_id"] == 79
    code, out = invoke("show", "--json", "--all", "--world", "--workdir", str(tmp_path))
    assert [(m["id"], m["status"]) for m in json.loads(out)] == [(ids["storm"], "SUPERSEDED")]


def test_show_finds_a_sqlite_only_workdir(tmp_path: Path, elsewhere: Path) -> None:
    workdir = tmp_path / "run"
    ids = seeded(workdir, store="sqlite")
    assert not (workdir / "Memories.md").exists()
    code, out = invoke("show", "--workdir", str(workdir))
    assert code == 0, out
    assert "No memories" not in out
    assert "Enter kitchen through window" in out and "NPC troll" in out
    code, out = invoke("show", "--json", "--workdir", str(workdir))
    assert {m["id"] for m in json.loads(out)} == {ids["window"], ids["lantern"], ids["troll"]}
    code, out = invoke("search", "lantern", "--json", "--workdir", str(workdir))
    assert [h["memory"]["id"] for h in json.loads(out)] == [ids["lantern"]]
    code, out = invoke("export", "--workdir", str(workdir))
    assert json.loads(out)["store"].endswith("memories.sqlite3")
    assert not (workdir / "Memories.md").exists()  # reading never made a second store


def test_an_explicit_store_choice_wins_over_the_files(
    tmp_path: Path, elsewhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workdir = tmp_path / "run"
    seeded(workdir, store="sqlite")
    code, out = invoke("show", "--store", "markdown", "--workdir", str(workdir))
    assert code == 0 and "No memories" in out
    monkeypatch.setenv("CAIRN_STORE", "markdown")
    code, out = invoke("show", "--workdir", str(workdir))
    assert code == 0 and "No memories" in out
    monkeypatch.delenv("CAIRN_STORE")
    (elsewhere / "pyproject.toml").write_text('[tool.cairn]\nstore = "markdown"\n')
    code, out = invoke("show", "--workdir", str(workdir))
    assert code == 0 and "No memories" in out


def test_with_both_files_the_default_store_is_read(tmp_path: Path, elsewhere: Path) -> None:
    workdir = tmp_path / "run"
    seeded(workdir, store="sqlite")
    with Memory.open(workdir, store="markdown") as memory:
        only_md = memory.add("Only in the Markdown file.").id
    code, out = invoke("show", "--json", "--workdir", str(workdir))
    assert code == 0 and [m["id"] for m in json.loads(out)] == [only_md]


def test_help_shows_defaults(tmp_path: Path) -> None:
    code, out = invoke("search", "--help")
    assert code == 0 and "[default: 5" in out
    assert "cairn-runs" in out
    code, out = invoke("show", "--help")
    assert code == 0 and "[tool.cairn] workdir, else ./cairn-runs" in " ".join(out.split())
