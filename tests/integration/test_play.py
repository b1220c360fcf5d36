"""cairn play on real Jericho: the demo world (memory vs baseline) and Zork I (targets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.models.memory import MemoryScope
from cairn.play.runner import run_play
from cairn.settings import load_settings

ROMS = Path(__file__).resolve().parents[2].parent / "shared" / "roms"


def play(workdir: Path, **kw: Any) -> dict[str, Any]:
    settings = load_settings(workdir=workdir)
    return run_play(settings, **kw).report


@pytest.fixture(scope="module")
def demo_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    base = tmp_path_factory.mktemp("demo")
    memory = play(base / "memory", episodes=3, max_turns=100)
    baseline = play(base / "baseline", episodes=3, max_turns=100, use_memory=False)
    return base, memory, baseline


def test_memory_makes_later_episodes_score_sooner_and_repeat_no_failures(
    demo_runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    _, report, _ = demo_runs
    first, *later = report["episodes"]
    assert first["turns_to_first_score"] is not None
    for episode in later:
        assert episode["turns_to_first_score"] is not None
        assert episode["turns_to_first_score"] < first["turns_to_first_score"]
        assert episode["repeated_failed_action_rate"] < 0.05
    assert report["total"]["coverage"] >= 0.8


def test_the_no_memory_baseline_repeats_its_failures(
    demo_runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    _, memory, baseline = demo_runs
    assert baseline["memory"] is False
    assert all(e["location_memory_tokens_max"] == 0 for e in baseline["episodes"])
    later = baseline["episodes"][1:]
    assert min(e["repeated_failed_action_rate"] for e in later) > max(
        e["repeated_failed_action_rate"] for e in memory["episodes"][1:]
    )


def test_a_run_writes_its_files(demo_runs: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    base, report, _ = demo_runs
    workdir = base / "memory"
    on_disk = json.loads((workdir / "report.json").read_text())
    assert on_disk["total"] == report["total"] and len(on_disk["episodes"]) == 3
    assert on_disk["total"]["max_score"] == 4
    mermaid = (workdir / "map.mmd").read_text()
    assert mermaid.startswith("graph LR") and 'L44["Entrance Hall (L44)"]' in mermaid
    assert "## Episodes" in (workdir / "knowledgebase.md").read_text()
    [transcript] = workdir.glob("runs/*/transcript.jsonl")
    lines = [json.loads(x) for x in transcript.read_text().splitlines()]
    assert len(lines) == report["total"]["turns"]
    store = MarkdownMemoryStore(workdir / "Memories.md")
    assert store.problems() == []
    location_ids = {m.location_id for m in store.entries(scope=MemoryScope.LOCATION)}
    assert location_ids and all(type(i) is int for i in location_ids)


@pytest.mark.skipif(not (ROMS / "zork1.z5").exists(), reason=f"no Zork I story file in {ROMS}")
def test_zork_three_offline_episodes_meet_the_memory_targets(tmp_path: Path) -> None:
    report = play(tmp_path, game_path=ROMS / "zork1.z5", episodes=3, max_turns=200)
    total = report["total"]
    assert report["fully_supported"] is True and total["max_score"] == 350
    assert total["coverage"] >= 0.8
    assert total["location_memory_tokens_max"] <= 500
    assert total["synthesis_call_rate"] <= 0.4
    store = MarkdownMemoryStore(tmp_path / "Memories.md")
    visited = set(store.locations())
    for memory in store.entries():
        assert memory.location_id is None or type(memory.location_id) is int
        if memory.scope is MemoryScope.LOCATION:
            assert memory.location_id in visited


def test_after_three_demo_episodes_no_room_repeats_a_failed_verb_and_object(
    demo_runs: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    from cairn.services.outcomes import failed_commands

    base, _, _ = demo_runs
    store = MarkdownMemoryStore(base / "memory" / "Memories.md")
    seen: dict[tuple[int | None, str], int] = {}
    failures = 0
    for entry in store.entries(scope=MemoryScope.LOCATION):
        if not entry.visible:
            continue
        commands = failed_commands(entry.text)
        failures += bool(commands)
        for command in commands:
            key = (entry.location_id, command)
            seen[key] = seen.get(key, 0) + 1
    store.close()
    assert failures > 0, "the demo must fail at something for this to mean anything"
    assert {key: n for key, n in seen.items() if n > 1} == {}
    # and no per-verb notes of the old kind ("'open library' does not work here.")
    assert "does not work here." not in (base / "memory" / "Memories.md").read_text()
