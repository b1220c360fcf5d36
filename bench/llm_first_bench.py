"""LLM-first synthesis: what it costs in summarizer calls, and that a model agreeing with the
rules leaves the memories the rules alone leave.

Plays a story offline (the explorer, seed 1) twice into fresh workdirs: once with the offline
rules (`RuleBasedSummarizer`), once with an "agreeing model": a summarizer that is LLM-first
(every triggered turn reaches it, failures and known moves with the rules' verdict as a hint)
and answers as the rules would (the rules' own memory when they would write one, the offline
heuristics otherwise). Prints, per run: turns, synthesis calls, calls per 100 turns, memories
stored; then whether the two stores hold the same memories (category, status, title, text).

    .venv/bin/python bench/llm_first_bench.py [--rom PATH] [--episodes N] [--turns N]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cairn.container as composition  # noqa: E402
from cairn.agents.rule_based_summarizer import RuleBasedSummarizer  # noqa: E402
from cairn.interfaces.summarizer import ISummarizer, SynthesisRequest  # noqa: E402
from cairn.models.game import GameState, Message, NPCInstance  # noqa: E402
from cairn.models.kinds import WorldEvent  # noqa: E402
from cairn.models.memory import SynthesisDecision  # noqa: E402
from cairn.play.runner import run_play  # noqa: E402
from cairn.settings import load_settings  # noqa: E402


class Counting(ISummarizer):
    """The offline heuristics, counting synthesis calls; LLM-first when `llm_first`."""

    def __init__(self, llm_first: bool) -> None:
        self._rules = RuleBasedSummarizer()
        self._llm_first = llm_first
        self.synthesis = 0
        self.hinted = 0

    @property
    def llm_first(self) -> bool:
        return self._llm_first

    def synthesize(self, request: SynthesisRequest) -> SynthesisDecision:
        self.synthesis += 1
        self.hinted += bool(request.hint and request.hint.writes)
        return self._rules.synthesize(request)

    def summarize_location_session(
        self,
        game_state: GameState,
        location_id: int,
        messages: Sequence[Message],
        left_out: Sequence[int] = (),
    ) -> str:
        return self._rules.summarize_location_session(game_state, location_id, messages, left_out)

    def summarize_npc_interactions(
        self, game_state: GameState, npc: NPCInstance, messages: Sequence[Message]
    ) -> str:
        return self._rules.summarize_npc_interactions(game_state, npc, messages)

    def summarize_world_update(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        messages: Sequence[Message],
        related: Mapping[str, str | list[str]],
    ) -> str:
        return self._rules.summarize_world_update(game_state, event_kind, messages, related)


def play(rom: Path, episodes: int, turns: int, summarizer: Counting) -> tuple[int, set[Any]]:
    """Play into a fresh workdir with `summarizer`; (turns played, the memories stored)."""
    original: Callable[..., Any] = composition.build_container

    def with_summarizer(settings: Any, **kw: Any) -> Any:
        return original(settings, summarizer=summarizer, **kw)

    composition.build_container = with_summarizer  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            settings = load_settings(workdir=Path(tmp) / "run", llm="offline")
            result = run_play(settings, game_path=rom, episodes=episodes, max_turns=turns, seed=1)
            played = sum(int(e["turns"]) for e in result.report["episodes"])
            store = original(settings.model_copy(update={"workdir": Path(tmp) / "run"}))
            memories = {
                (e.category.value, e.status.value, e.title, e.text) for e in store.store().entries()
            }
            store.store().close()
    finally:
        composition.build_container = original  # type: ignore[assignment]
    return played, memories


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rom", type=Path, default=ROOT.parent / "shared" / "roms" / "zork1.z5")
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    rows = []
    stores = []
    for name, first in (("rules alone (offline)", False), ("agreeing model (LLM-first)", True)):
        summarizer = Counting(first)
        played, memories = play(args.rom, args.episodes, args.turns, summarizer)
        stores.append(memories)
        per = 100 * summarizer.synthesis / max(1, played)
        rows.append((name, played, summarizer.synthesis, per, summarizer.hinted, len(memories)))
    print(f"{args.rom.name}, {args.episodes} x {args.turns}, explorer seed 1")
    head = ("run", "turns", "synthesis", "per 100", "rules-write", "memories")
    print("{:28} {:>6} {:>10} {:>8} {:>12} {:>9}".format(*head))
    for name, played, calls, per, hinted, count in rows:
        print(f"{name:28} {played:6d} {calls:10d} {per:8.1f} {hinted:12d} {count:9d}")
    same = stores[0] == stores[1]
    print(f"same memories: {'yes' if same else 'NO'}")
    if not same:
        offline, first = stores
        for label, diff in (("offline only", offline - first), ("LLM-first only", first - offline)):
            for item in sorted(diff)[:10]:
                print(f"  {label}: {item}")


if __name__ == "__main__":
    main()
