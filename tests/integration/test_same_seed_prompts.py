"""The same seed shows the agent the same prompts, whatever the workdir and however fast the
machine runs.

A new user plays the built-in demo world twice with the same seed, into two workdirs (as
`cairn play --workdir /tmp/a --episodes 3 --max-turns 60 --seed 3`, then /tmp/b): the two runs
must show the same prompt at every turn. What differed was when each memory was written: a run
that crosses a second boundary between two equally important memories stamped them apart, one
that does not stamped them alike, and the ranking (most important, then newest by wall clock,
then store order) put them in a different order. Here the two runs are the two extremes: a slow
machine, where every memory is written a second after the one before, and a fast one, where
they all share one second. Memory ids stay random (uuid), as on a user's machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import cairn.services.clock
from cairn.agents.explorer import ExplorerAgent
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent
from cairn.play.runner import run_play
from cairn.services.context.context_service import OTHER_LESSONS
from cairn.settings import load_settings

START = datetime(2026, 1, 1, tzinfo=UTC)


class Recorder(IAgent):
    """The offline explorer with the user's seed, keeping every prompt it was shown."""

    def __init__(self, seed: int) -> None:
        self.player = ExplorerAgent(seed=seed)
        self.prompts: list[str] = []

    def new_episode(self, episode: int) -> None:
        self.player.new_episode(episode)

    def decide(self, view: AgentView) -> AgentDecision:
        self.prompts.append(view.prompt)
        return self.player.decide(view)


def slow_machine() -> Callable[[], datetime]:
    """Every reading a second after the one before: no two memories share a second."""
    ticks: Iterator[int] = iter(range(10**9))
    return lambda: START + timedelta(seconds=next(ticks))


def fast_machine() -> Callable[[], datetime]:
    """Every reading in the same second: every memory is stamped alike."""
    return lambda: START


def play(
    workdir: Path, store: str, now: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    monkeypatch.setattr(cairn.services.clock, "utc_now", now)  # the system clock's reading
    agent = Recorder(seed=3)
    settings = load_settings(workdir=workdir, store=store)
    run_play(settings, episodes=3, max_turns=60, seed=3, agent=agent)
    monkeypatch.undo()
    return agent.prompts


@pytest.mark.parametrize("store", ["markdown", "sqlite"])
def test_the_same_seed_in_two_workdirs_shows_the_same_prompts_turn_by_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str
) -> None:
    slow = play(tmp_path / "a", store, slow_machine(), monkeypatch)
    fast = play(tmp_path / "b", store, fast_machine(), monkeypatch)
    assert len(slow) == len(fast) > 40
    for turn, (a, b) in enumerate(zip(slow, fast, strict=True)):
        assert a == b, f"turn {turn}: the prompts differ"
    # the runs did reach what could make them differ: equally important memories in one list
    assert any(f"## {OTHER_LESSONS}" in prompt for prompt in slow)
