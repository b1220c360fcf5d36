"""What a model sees (issue 38's acceptance bench): Zork I and Zork: The Undiscovered
Underground, 2 episodes x 30 turns each, every request answered through the Anthropic adapter
by the loopback Messages API server, per role.

The model is `cache_bench.Script`: the adventurer follows Jericho's walkthrough from its start
in every episode and looks nothing up, the synthesis remembers each turn's answer, objectives
and summaries are fixed.
The server caches a marked prefix only as long as the model's documented minimum (the API's
rule). Printed per game and role: requests per turn, prompt size (input tokens a request, the
server's estimate), the share of repeated lines in a request's prompt
(`services.context.repetition`: system and messages), the share of the adventurer's turns whose
prompt holds every exit of the room it is in (the exits found by trying each compass direction
on a copy of the game's state, before the turn; a direction is held when the room's section,
or for an older prompt without one the whole message, names it) with the mean share of exits
held, the share of input tokens served from the cache, and dollars per 100 turns. Prints,
asserts nothing.

    .venv/bin/python bench/model_view_bench.py [--turns 30] [--episodes 2] [--games zork1,ztuu]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from cache_bench import Script, walkthrough  # noqa: E402

from cairn.adapters.game.jericho_game import JerichoGame  # noqa: E402
from cairn.interfaces.game import GameObservation  # noqa: E402
from cairn.models.directions import DIRECTIONS  # noqa: E402
from cairn.play.runner import run_play  # noqa: E402
from cairn.services.context.repetition import repeated_line_share  # noqa: E402
from cairn.settings import load_settings  # noqa: E402
from cairn.testing import FakeMessagesServer  # noqa: E402
from cairn.testing.cache_sim import api_min_cache_tokens  # noqa: E402

ROMS = ROOT.parent / "shared" / "roms"
COMPASS = tuple(d for d in DIRECTIONS if d not in ("in", "out"))
"""The ten compass ways a room's real exits are probed by."""
ROLE_TOOLS = {
    "AgentDecision": "adventurer",
    "SynthesisDecision": "synthesis",
    "ObjectivesAnswer": "objective",
    "MemoryRanking": "query",
}


class EpisodeScript(Script):
    """`Script` whose adventurer takes the walkthrough's step for the game's own move count in
    the episode (each episode starts the walkthrough again)."""

    def __init__(self, route: list[str], game: ExitsWatchedGame) -> None:
        super().__init__(route)
        self.game = game

    def __call__(self, server: FakeMessagesServer, body: dict[str, Any]) -> None:
        self.moves = self.game.steps
        super().__call__(server, body)


class ExitsWatchedGame(JerichoGame):
    """The game played, with the real exits of the player's room after every observation:
    each compass direction tried on the second interpreter from the state now (the played
    game never sees it); a direction is an exit when it takes the player to another room
    alive (in the dark every direction "leads" to a death)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.exits: list[tuple[int | None, frozenset[str]]] = []
        self.steps = 0
        """The steps sent this episode."""


    def reset(self) -> GameObservation:
        obs = super().reset()
        self.steps = 0
        self._watch(obs)
        return obs

    def step(self, action: str) -> GameObservation:
        obs = super().step(action)
        self.steps += 1
        self._watch(obs)
        return obs

    def _watch(self, obs: GameObservation) -> None:
        here = obs.location_id
        found: set[str] = set()
        if here is not None and not obs.done:
            from cairn.adapters.game.probes import run_probe

            state = self._env.get_state()
            for direction in COMPASS:
                try:
                    [probe] = run_probe(self._second(), state, [direction], self._probe_of)
                except Exception:  # an interpreter that cannot follow: no evidence
                    continue
                if probe.location_id not in (None, here) and not probe.died:
                    found.add(direction)
        self.exits.append((here, frozenset(found)))


def role_of(body: dict[str, Any]) -> str:
    forced = (body.get("tool_choice") or {}).get("name")
    for tool in [forced, *(t["name"] for t in body.get("tools") or [])]:
        if tool in ROLE_TOOLS:
            return ROLE_TOOLS[tool]
    return "summary"


def text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # a message's blocks: the paragraphs of one text
        return "".join(text_of(v) for v in value)
    if isinstance(value, dict):
        if value.get("type") == "text":
            return str(value.get("text", ""))
        if "content" in value:
            return text_of(value["content"])
    return ""


def prompt_of(body: dict[str, Any]) -> str:
    """The request's words: its system prompt and its messages' texts."""
    texts = [text_of(body.get("system") or ""), *(text_of(m) for m in body["messages"])]
    return "\n".join(texts)


def room_section(user: str) -> str:
    """The room's section of an adventurer message, or the whole message (an older prompt)."""
    if "## The room now" not in user:
        return user
    return user.split("## The room now", 1)[1].split("\n## ", 1)[0]


def held(section: str, exits: frozenset[str]) -> float:
    """The share of `exits` the section names, each as a word ("north", not "n")."""
    if not exits:
        return 1.0
    words = set(re.findall(r"[a-z]+", section.lower()))
    return sum(1 for e in exits if e in words) / len(exits)


def play(rom: Path, turns: int, episodes: int) -> dict[str, Any]:
    game = ExitsWatchedGame(rom)
    script = EpisodeScript(walkthrough(rom), game)
    with tempfile.TemporaryDirectory() as work:
        settings = load_settings(workdir=Path(work) / "run", llm="anthropic")
        with FakeMessagesServer(responder=script, cache_min_tokens=api_min_cache_tokens) as server:
            settings = settings.model_copy(update={"llm_base_url": server.base_url})
            started = time.perf_counter()
            result = run_play(
                settings, game=game, episodes=episodes, max_turns=turns, seed=0
            )
            seconds = time.perf_counter() - started
            requests = list(server.requests)
    report = result.report
    played = sum(e["turns"] for e in report["episodes"])
    # each turn's decision sees the observation before it: the reset's, then each step's
    before_turn: list[tuple[int | None, frozenset[str]]] = []
    index = 0
    for ep in report["episodes"]:
        before_turn += game.exits[index : index + ep["turns"]]
        index += ep["turns"] + 1
    by_role: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for body in requests:
        by_role[role_of(body)].append(body)
    decisions = [b for b in by_role["adventurer"] if len(b["messages"]) == 1]
    exits = [
        held(room_section(text_of(b["messages"][0]["content"])), real)
        for b, (_, real) in zip(decisions, before_turn, strict=False)
    ]
    return {
        "game": rom.stem,
        "turns": played,
        "seconds": seconds,
        "score": [e["score"] for e in report["episodes"]],
        "usage": report["llm_usage"],
        "by_role": by_role,
        "exits_all": sum(1 for x in exits if x >= 1.0) / max(1, len(exits)),
        "exits_mean": sum(exits) / max(1, len(exits)),
        "room_exits": [len(real) for _, real in before_turn],
        "missed": [
            (room, sorted(real), round(share, 2))
            for (room, real), share in zip(before_turn, exits, strict=False)
            if share < 1.0
        ],
    }


def table(run: dict[str, Any]) -> None:
    usage, turns = run["usage"], run["turns"]
    print(
        f"{run['game']}: {turns} turns in {run['seconds']:.1f} s, scores {run['score']}; "
        f"adventurer prompts holding every exit of the room: {run['exits_all']:.0%} "
        f"(exits named: {run['exits_mean']:.0%} of {sum(run['room_exits'])})"
    )
    print(
        f"{'role':<12}{'req/turn':>9}{'tokens/req':>11}{'repeated':>10}{'cached':>8}"
        f"{'$/100 turns':>13}"
    )
    cost = usage["cost"]["by_role"]
    for role in sorted(run["by_role"]):
        bodies = run["by_role"][role]
        calls = usage["by_role"].get(role, {}).get("calls", len(bodies))
        tokens = cost.get(role, {}).get("tokens", {})
        dollars = cost.get(role, {}).get("cost_usd")
        shares = [repeated_line_share(prompt_of(b)) for b in bodies]
        print(
            f"{role:<12}{calls / turns:>9.2f}{tokens.get('input', 0) / max(1, calls):>11.0f}"
            f"{sum(shares) / max(1, len(shares)):>10.1%}"
            f"{tokens.get('cache_read', 0) / max(1, tokens.get('input', 0)):>8.1%}"
            f"{(f'${dollars * 100 / turns:.4f}' if dollars is not None else 'unknown'):>13}"
        )
    total = usage["cost"]
    read = total["tokens"]["cache_read"] / max(1, total["tokens"]["input"])
    dollars = total["cost_usd"]
    print(
        f"{'all':<12}{usage['calls'] / turns:>9.2f}"
        f"{total['tokens']['input'] / max(1, usage['calls']):>11.0f}{'':>10}{read:>8.1%}"
        f"{(f'${dollars * 100 / turns:.4f}' if dollars is not None else 'unknown'):>13}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--episodes", type=int, default=2)
    parser.add_argument("--games", default="zork1,ztuu")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench")
    figures = []
    for name in args.games.split(","):
        rom = next(ROMS.glob(f"{name}.z*"), None)
        if rom is None:
            print(f"{name}: no story file in {ROMS}")
            continue
        run = play(rom, args.turns, args.episodes)
        table(run)
        figures.append({k: v for k, v in run.items() if k != "by_role"})
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1, default=str))


if __name__ == "__main__":
    main()
