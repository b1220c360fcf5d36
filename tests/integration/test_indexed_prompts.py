"""The indexes and the archive change what a turn costs, never what the agent sees.

A recorded 3-episode Zork I run (offline explorer, deterministic clock) is played twice: on the
markdown store as built (indexed reads, units of work appended to the recent part, folds and
the archive at each episode's end) and on a full-scan reference (every read scans every memory
in store order and filters; the ranking sorts every visible memory; nothing is archived). The
prompts must be the same, turn by turn. Small caps make pruning retire memories at every
episode's end, so the archive is exercised.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import cairn.container
from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.agents.explorer import ExplorerAgent
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.interfaces.store import IMemoryStore
from cairn.models.memory import MemoryEntry, MemoryScope, MemoryStatus
from cairn.play.runner import run_play
from cairn.settings import load_settings

ZORK = Path(__file__).resolve().parents[2].parent / "shared" / "roms" / "zork1.z5"


def _section(entry: MemoryEntry) -> tuple[int, int | str]:
    if entry.scope is MemoryScope.LOCATION:
        return 0, entry.location_id or 0
    if entry.scope is MemoryScope.NPC:
        return 1, entry.npc_ids[0]
    return 2, 0


class FullScanStore(InMemoryStore):
    """The reference: every read scans every memory; nothing is ever archived."""

    def entries(
        self,
        *,
        scope: MemoryScope | None = None,
        location_id: int | None = None,
        npc_id: str | None = None,
        statuses: frozenset[MemoryStatus] | None = None,
    ) -> list[MemoryEntry]:
        with self._lock:
            # store order: sections (rooms by id, NPCs, world), the order added within each
            everything = sorted(self._cache.memories.values(), key=_section)
        return [
            m
            for m in everything
            if (scope is None or m.scope is scope)
            and (location_id is None or m.location_id == location_id)
            and (npc_id is None or npc_id in m.npc_ids)
            and (statuses is None or m.status in statuses)
        ]

    def ranked(self, limit: int) -> list[MemoryEntry]:
        return IMemoryStore.ranked(self, limit)  # sorts every visible memory


class Recorder(IAgent):
    """The offline explorer, keeping every prompt it was shown."""

    def __init__(self) -> None:
        self.player = ExplorerAgent(seed=0)
        self.prompts: list[str] = []

    def new_episode(self, episode: int) -> None:
        self.player.new_episode(episode)

    def decide(self, view: AgentView) -> AgentDecision:
        self.prompts.append(view.prompt)
        return self.player.decide(view)


def play(workdir: Path, store: IMemoryStore | None, monkeypatch: pytest.MonkeyPatch) -> Any:
    if store is not None:
        real = cairn.container.build_container
        monkeypatch.setattr(
            cairn.container, "build_container", lambda s, **kw: real(s, store=store, **kw)
        )
    # small caps: each episode's end retires memories (SUPERSEDED, tagged pruned), which the
    # built store then archives, so later episodes read a store that lost them
    settings = load_settings(
        workdir=workdir, deterministic_seed=7, cap_per_location=4, cap_world=6
    )
    agent = Recorder()
    run_play(settings, game_path=ZORK, episodes=3, max_turns=150, agent=agent)
    monkeypatch.undo()
    return agent.prompts


@pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file at {ZORK}")
def test_indexed_reads_and_the_archive_show_the_prompts_a_full_scan_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference_store = FullScanStore()
    reference = play(tmp_path / "reference", reference_store, monkeypatch)
    built = play(tmp_path / "built", None, monkeypatch)
    assert len(built) == len(reference) == 450
    for turn, (ours, theirs) in enumerate(zip(built, reference, strict=True)):
        assert ours == theirs, f"turn {turn}: the prompts differ"
    # the run did exercise what could make them differ
    superseded = [m for m in reference_store.entries() if m.status is MemoryStatus.SUPERSEDED]
    assert superseded, "nothing was superseded: the archive was not exercised"
    archive = tmp_path / "built" / "Memories.archive.md"
    assert archive.is_file() and all(m.id in archive.read_text() for m in superseded)
