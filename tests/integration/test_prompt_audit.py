"""What the agent sees, audited turn by turn on Zork I (3 x 200 offline turns): remembered
failures reach the prompt in the room where they failed, and no prompt section is mostly
visit summaries. The offline player reads the same sections (`AgentView.memories` is what the
location section shows), so its figures measure the memory-to-prompt pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.agents.explorer import ExplorerAgent
from cairn.container import build_container
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.interfaces.memory_service import IMemoryService
from cairn.models.memory import MemoryCategory
from cairn.play.runner import run_play
from cairn.services.context.ranking import is_visit_summary
from cairn.services.outcomes import failed_commands
from cairn.settings import load_settings

ZORK = Path(__file__).resolve().parents[2].parent / "shared" / "roms" / "zork1.z5"


class Auditor(IAgent):
    """The explorer, with a look at each prompt against what memory holds at that moment."""

    def __init__(self, memory: IMemoryService) -> None:
        self._player = ExplorerAgent(seed=0)
        self._memory = memory
        self.failures_remembered = 0
        self.failures_shown = 0
        self.sections: list[tuple[int, int]] = []  # (visit summaries, memories) per section

    def new_episode(self, episode: int) -> None:
        self._player.new_episode(episode)

    def decide(self, view: AgentView) -> AgentDecision:
        here = view.observation.location_id
        shown = {m.id for m in view.memories}  # what the location section shows
        if here is not None:
            for memory in self._memory.location_memories(here):
                if memory.category is MemoryCategory.FAILURE:
                    for _ in failed_commands(memory.text):
                        self.failures_remembered += 1
                        self.failures_shown += memory.id in shown
        return self._player.decide(view)


@pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file at {ZORK}")
def test_remembered_failures_reach_the_prompt_and_visits_never_fill_a_section(
    tmp_path: Path,
) -> None:
    settings = load_settings(workdir=tmp_path)
    memory = build_container(settings).memory_service()
    auditor = Auditor(memory)
    seen: list[dict[str, tuple[str, ...]]] = []

    class Recording(IAgent):
        def new_episode(self, episode: int) -> None:
            auditor.new_episode(episode)

        def decide(self, view: AgentView) -> AgentDecision:
            return auditor.decide(view)

    from cairn.play import session as session_module

    original = session_module.PlaySession._prompt

    def spy(self: session_module.PlaySession, ep: object, obs: object) -> object:
        prompt = original(self, ep, obs)  # type: ignore[arg-type]
        seen.append(dict(prompt.memory_ids))
        auditor._memory = self._memory
        return prompt

    session_module.PlaySession._prompt = spy  # type: ignore[assignment,method-assign]
    try:
        report = run_play(
            settings, game_path=ZORK, episodes=3, max_turns=200, agent=Recording()
        ).report
    finally:
        session_module.PlaySession._prompt = original  # type: ignore[method-assign]
    assert report["total"]["turns"] >= 400
    assert auditor.failures_remembered > 100, "the audit needs failures to look for"
    share = auditor.failures_shown / auditor.failures_remembered
    print(f"failures shown: {auditor.failures_shown}/{auditor.failures_remembered} = {share:.1%}")
    assert share >= 0.9, f"{auditor.failures_shown}/{auditor.failures_remembered} shown"
    store = build_container(settings).store()
    by_id = {e.id: e for e in store.entries()}
    for sections in seen:
        for name, ids in sections.items():
            visits = sum(1 for i in ids if i in by_id and is_visit_summary(by_id[i]))
            assert visits * 2 <= len(ids) or len(ids) == 1, (name, visits, len(ids))
