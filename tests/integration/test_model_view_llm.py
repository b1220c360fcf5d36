"""What a model sees (issue 38, items 1, 2 and 9), through the real SDKs against the loopback
servers: on Zork I the adventurer's every prompt holds the room now with its exits (from the
game's own `look` on a brief revisit), says each thing once (at most 5% repeated lines) and
"turn N of M"; its stable part is cached under the API's documented minimums; the
objectives are first asked with the game's opening in view, asked again right after a score,
and those the model says are done are counted (both APIs)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from cairn.adapters.game.jericho_game import JerichoGame
from cairn.interfaces.llm import ROLES
from cairn.play.runner import run_play
from cairn.services.context.repetition import GOAL, repeated_line_share
from cairn.settings import load_settings
from cairn.testing.cache_sim import api_min_cache_tokens
from cairn.testing.chat_server import FakeChatServer
from cairn.testing.fake_game import FakeGame, default_world
from cairn.testing.llm_server import FakeMessagesServer

ZORK = Path(__file__).resolve().parents[2].parent / "shared" / "roms" / "zork1.z5"
needs_zork = pytest.mark.skipif(not ZORK.is_file(), reason=f"no story file: {ZORK} is absent")
ZORK_WALK = [
    "north",
    "east",
    "open window",
    "enter",
    "west",  # the living room
    "east",  # back in the kitchen: the game prints only its name and what lies there
    "take sack",
    "west",
    "take lamp",
    "east",
    "west",
    "look",
]


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


class Model:
    """Answers as a model would over the Messages API: the adventurer walks `walk`; the
    objective model gives objectives and, from its second call on, says objective 1 is done."""

    def __init__(self, walk: list[str]) -> None:
        self.walk = walk
        self.moves = 0
        self.objective_calls: list[str] = []

    def __call__(self, server: FakeMessagesServer, body: dict[str, Any]) -> None:
        forced = (body.get("tool_choice") or {}).get("name")
        offered = {tool["name"] for tool in body.get("tools") or []}
        if "AgentDecision" in offered and forced in (None, "AgentDecision"):
            action = self.walk[self.moves % len(self.walk)]
            self.moves += 1
            server.queue_tool_use("AgentDecision", {"action": action, "reasoning": "onward"})
        elif forced == "ObjectivesAnswer":
            self.objective_calls.append(text_of(body["messages"][0]["content"]))
            done = [1] if len(self.objective_calls) > 1 else []
            server.queue_tool_use(
                forced, {"objectives": ["Take what lies here", "Explore"], "completed": done}
            )
        elif forced == "SynthesisDecision":
            server.queue_tool_use(forced, {"should_remember": False})
        else:
            server.queue_text("Nothing more.")


def adventurer_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        r
        for r in requests
        if any(t.get("name") == "AgentDecision" for t in r.get("tools") or [])
        and len(r["messages"]) == 1
    ]


def whole(request: dict[str, Any]) -> str:
    system = request.get("system") or ""
    return f"{text_of(system) if isinstance(system, list) else system}\n" + text_of(
        request["messages"][0]["content"]
    )


@needs_zork
def test_zork_prompts_hold_the_room_say_each_thing_once_and_are_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    model = Model(ZORK_WALK)
    with FakeMessagesServer(responder=model, cache_min_tokens=api_min_cache_tokens) as server:
        settings = load_settings(workdir=tmp_path, llm="anthropic", llm_base_url=server.base_url)
        game = JerichoGame(ZORK)
        result = run_play(settings, game=game, episodes=2, max_turns=len(ZORK_WALK))
        requests = list(server.requests)
    prompts = adventurer_requests(requests)
    assert len(prompts) == 2 * len(ZORK_WALK)
    users = [text_of(r["messages"][0]["content"]) for r in prompts]
    for n, user in enumerate(users):
        room = user.split("## The room now\n<game_text>\n", 1)[1].split("</game_text>", 1)[0]
        assert "\nExits: " in room, n
        assert f"Turn {n % len(ZORK_WALK) + 1} of {len(ZORK_WALK)}." in user
        assert "Previous Reasoning" not in user and "Recent Actions" not in user
    # back in the kitchen the game printed its name and its things; the prompt has its words
    back = users[6]
    assert "You are in the kitchen of the white house" in back
    assert "(turn 6, at Living Room): east" in back
    shares = [repeated_line_share(whole(r)) for r in prompts]
    assert sum(shares) / len(shares) <= GOAL, shares
    # the tools and the system prompt (the stable part) are served from the cache
    usage = result.report["llm_usage"]["cost"]["by_role"]["adventurer"]["tokens"]
    assert usage["cache_read"] / usage["input"] >= 0.5, usage


def fake_run(tmp_path: Path, server_url: str, api: str) -> dict[str, Any]:
    game = FakeGame(world=dataclasses.replace(default_world(), brief=True))
    if api == "anthropic":
        settings = load_settings(workdir=tmp_path, llm="anthropic", llm_base_url=server_url)
    else:
        settings = load_settings(
            workdir=tmp_path,
            llm="openai",
            openai_base_url=server_url,
            openai_models={role: "gpt-4.1" for role in ROLES},
        )
    return run_play(settings, game=game, episodes=1, max_turns=8).report


def test_objectives_see_the_opening_come_again_after_a_score_and_count_completion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    model = Model(FakeGame().walkthrough())
    with FakeMessagesServer(responder=model) as server:
        report = fake_run(tmp_path, server.base_url, "anthropic")
    first, *later = model.objective_calls
    assert "(the game's opening)\nHall\nA bare hall." in first
    assert "## Current objectives\n(none yet)" in first
    # the key scores at turn 3, the crown (the win) at 8: one discovery right after the key
    assert len(later) == 1 and "1. Take what lies here" in later[0]
    assert later[0].count("Take what lies here") == 1  # the objectives once, numbered
    assert later[0].index("## Knowledge") < later[0].index("## Current objectives")
    [episode] = report["episodes"]
    assert episode["objectives_completed"] == 1


class ChatModel:
    """The same model over the Chat Completions API."""

    def __init__(self, walk: list[str]) -> None:
        self.walk = walk
        self.moves = 0
        self.objective_calls: list[str] = []

    def __call__(self, server: FakeChatServer, body: dict[str, Any]) -> None:
        names = [t["function"]["name"] for t in body.get("tools") or []]
        forced = names[0] if body.get("tool_choice") == "required" and len(names) == 1 else None
        if "AgentDecision" in names and forced in (None, "AgentDecision"):
            action = self.walk[self.moves % len(self.walk)]
            self.moves += 1
            server.queue_tool_call("AgentDecision", {"action": action, "reasoning": "onward"})
        elif forced == "ObjectivesAnswer":
            user = next(m["content"] for m in body["messages"] if m["role"] == "user")
            self.objective_calls.append(text_of(user))
            done = [1] if len(self.objective_calls) > 1 else []
            server.queue_tool_call(forced, {"objectives": ["Take the key"], "completed": done})
        elif forced is not None:
            server.queue_tool_call(forced, {"should_remember": False})
        else:
            server.queue_text("Nothing more.")


def test_over_the_openai_api_too(tmp_path: Path) -> None:
    model = ChatModel(["north", "south", "north", *FakeGame().walkthrough()[1:]])
    with FakeChatServer(responder=model) as server:
        report = fake_run(tmp_path, server.base_url, "openai")
        requests = list(server.requests)
    decisions = [
        r
        for r in requests
        if any(t["function"]["name"] == "AgentDecision" for t in r.get("tools") or [])
    ]
    users = [next(m["content"] for m in r["messages"] if m["role"] == "user") for r in decisions]
    revisit = text_of(users[3])  # the game said "Study": the prompt has the study's words
    assert "A dusty study. An old chest stands here." in revisit and "Turn 4 of 8." in revisit
    assert "(the game's opening)" in model.objective_calls[0]
    assert len(model.objective_calls) == 2  # the key scored at turn 5
    assert report["episodes"][0]["objectives_completed"] == 1


@needs_zork
def test_the_game_looks_without_spending_a_move() -> None:
    game = JerichoGame(ZORK)
    game.reset()
    for action in ZORK_WALK[:5]:
        game.step(action)
    back = game.step("east")  # into the kitchen again: its name and its things, no description
    assert back.text.startswith("Kitchen\n") and "You are in the kitchen" not in back.text
    seen = game.look()
    assert seen is not None and seen.startswith("Kitchen\nYou are in the kitchen of the white")
    assert game.step("inventory").moves == back.moves + 1  # the look spent none
    game.close()
