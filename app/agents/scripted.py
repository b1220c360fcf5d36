"""ScriptedAgent: plays a fixed list of commands (walkthroughs, benchmarks, scenario replays)."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.interfaces.agent import EMPTY_COMMAND, AgentDecision, AgentView, IAgent


class ScriptedAgent(IAgent):
    """Sends `actions` in order, from the start at every episode; then `fallback` ("look").
    An empty step is an empty line (`EMPTY_COMMAND`), as walkthroughs that wait for Enter
    have them."""

    def __init__(self, actions: Sequence[str], fallback: str = "look") -> None:
        self._actions = list(actions)
        self._fallback = fallback
        self._next = 0

    def new_episode(self, episode: int) -> None:
        self._next = 0

    def decide(self, view: AgentView) -> AgentDecision:
        if self._next < len(self._actions):
            action = self._actions[self._next]
            self._next += 1
            if not action.strip():
                action = EMPTY_COMMAND
            return AgentDecision(action=action, reasoning=f"scripted step {self._next}")
        return AgentDecision(action=self._fallback, reasoning="script finished")
