"""The TextWorld-authored demo world: compiled offline once per session, played through Jericho."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jericho
import pytest

from cairn.adapters.game import demo_world
from cairn.adapters.game.demo_world import (
    CHEST_ROOMS,
    DEAD_END_ROOM,
    DEADLY_ROOM,
    DEMO_MAX_SCORE,
    DEMO_NPCS,
    START_ROOM,
    build_demo_world,
    demo_chest_room,
    demo_death_commands,
    demo_exits,
    demo_poison_commands,
    demo_room_names,
    demo_walkthrough,
    demo_world_filename,
)
from cairn.errors import GameError

HEADER = re.compile(r"-= (.+?) =-")
SERIAL = slice(0x12, 0x18)  # the Z-machine header's serial number: the compile date (YYMMDD)

# Visits every room that is safe and reachable without the key, for any seed.
TOUR = [
    "go north",  # Library
    "go east",  # Study
    "go west",
    "go south",  # Entrance Hall
    "go east",  # Kitchen
    "go south",  # Larder (dead end)
    "go north",
    "go west",  # Entrance Hall
    "go west",  # Garden
    "go south",  # Greenhouse
    "go north",
    "go east",  # Entrance Hall
]


@dataclass(frozen=True)
class Built:
    """A compiled demo world and how long compiling it took."""

    path: Path
    compile_seconds: float


@dataclass
class Step:
    """One command's outcome."""

    command: str
    text: str
    reward: int
    done: bool
    location: int
    score: int


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Seed 1 compiled once for the whole session (the compile time is kept for the report)."""
    cache = tmp_path_factory.mktemp("cairn-cache")
    started = time.perf_counter()
    path = build_demo_world(cache, seed=1)
    return Built(path, time.perf_counter() - started)


@pytest.fixture
def env(world: Built) -> Iterator[jericho.FrotzEnv]:
    game = jericho.FrotzEnv(str(world.path), seed=1)
    game.reset()
    yield game
    game.close()


def location(game: jericho.FrotzEnv) -> int:
    return int(game.get_player_location().num)


def play(game: jericho.FrotzEnv, commands: list[str]) -> list[Step]:
    """Run `commands`, stopping early if the game ends."""
    steps: list[Step] = []
    for command in commands:
        text, reward, done, info = game.step(command)
        steps.append(Step(command, text, int(reward), done, location(game), int(info["score"])))
        if done:
            break
    return steps


def headers(steps: list[Step]) -> set[str]:
    return {name for step in steps for name in HEADER.findall(step.text)}


def outcome(path: Path, commands: list[str]) -> list[tuple[int, bool, int]]:
    """(reward, done, score) per command when playing `commands` in a fresh game of `path`."""
    game = jericho.FrotzEnv(str(path), seed=1)
    try:
        game.reset()
        return [(s.reward, s.done, s.score) for s in play(game, commands)]
    finally:
        game.close()


# --------------------------------------------------------------------------- no compiling needed


def test_layout_is_deterministic_and_seed_moves_the_chest() -> None:
    assert demo_walkthrough(1) == demo_walkthrough(1)
    assert {demo_chest_room(seed) for seed in range(1, 4)} == set(CHEST_ROOMS)
    assert demo_walkthrough(1) != demo_walkthrough(2)
    assert demo_world_filename(7) == "tw-cairn-demo-7.z8"
    assert DEMO_NPCS == []


def test_map_is_symmetric_has_ten_rooms_a_dead_end_and_the_pit() -> None:
    exits = demo_exits()
    assert set(exits) == set(demo_room_names())
    assert len(exits) == 10
    opposite = {"north": "south", "south": "north", "east": "west", "west": "east"}
    for room, ways in exits.items():
        for direction, there in ways.items():
            assert exits[there][opposite[direction]] == room
    assert list(exits[DEAD_END_ROOM]) == ["north"]
    assert demo_death_commands(1) == ["go west", "go west"]
    assert all(not name.startswith(("P", "I")) for name in exits)  # TextWorld would rename them


def test_compile_failure_raises_game_error_with_the_compilers_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textworld.generator import inform7

    def broken(source: str, output: str) -> None:
        raise inform7.CouldNotCompileGameError("-== ni =-\nFAIL: 1\nProblem: no such room")

    monkeypatch.setattr(inform7, "compile_inform7_game", broken)
    with pytest.raises(GameError, match="no such room"):
        build_demo_world(tmp_path, seed=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tw-cairn-demo-1.z8.lock"]


def test_a_full_disk_is_named_as_the_reason_a_compile_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from textworld.generator import inform7

    def out_of_space(source: str, output: str) -> None:  # what ni prints on a full disk
        raise inform7.CouldNotCompileGameError(
            "\n-== ni =-\nFAIL: 1\nThe host computer reported an error trying to write a text"
            " file\n========\n*** Usually this means a compilation error.\n"
        )

    full = shutil._ntuple_diskusage(total=200 * 1024, used=200 * 1024, free=0)  # type: ignore[attr-defined]
    monkeypatch.setattr(inform7, "compile_inform7_game", out_of_space)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: full)
    with pytest.raises(GameError, match=r"only 0 KB free in .*the disk is full"):
        build_demo_world(tmp_path, seed=1)


def test_missing_compiler_raises_game_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INFORM_HOME", str(tmp_path / "no-inform7-here"))
    with pytest.raises(GameError, match="Inform 7 compiler"):
        build_demo_world(tmp_path / "cache", seed=1)
    assert not (tmp_path / "cache" / demo_world_filename(1)).exists()


# --------------------------------------------------------------------------- the compiled world


@pytest.mark.slow
def test_compiles_to_a_tw_story_file_in_the_cache(world: Built) -> None:
    assert world.path.name == "tw-cairn-demo-1.z8"
    assert world.path.is_file()
    assert world.compile_seconds < 120, f"compiling took {world.compile_seconds:.1f} s"
    print(f"demo world compiled in {world.compile_seconds:.1f} s")


@pytest.mark.slow
def test_second_build_reuses_the_cached_file(world: Built, monkeypatch: pytest.MonkeyPatch) -> None:
    def must_not_compile(source: str, story: Path) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(demo_world, "_compile", must_not_compile)
    before = world.path.stat().st_mtime_ns
    again = build_demo_world(world.path.parent, seed=1)
    assert again == world.path
    assert world.path.stat().st_mtime_ns == before


@pytest.mark.slow
def test_a_stale_stamp_recompiles(world: Built, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    story = cache / world.path.name
    story.write_bytes(b"stale")
    (cache / f"{story.name}.sha256").write_text("made-by-an-older-demo_world.py\n")
    assert build_demo_world(cache, seed=1) == story
    assert story.read_bytes()[:1] == world.path.read_bytes()[:1]  # a Z-machine file again
    assert len(story.read_bytes()) == len(world.path.read_bytes())


@pytest.mark.slow
def test_max_score_and_start_room(env: jericho.FrotzEnv) -> None:
    assert env.get_max_score() == DEMO_MAX_SCORE > 0
    assert HEADER.findall(play(env, ["look"])[0].text) == [START_ROOM]


@pytest.mark.slow
def test_walkthrough_wins_with_at_least_two_score_increases(env: jericho.FrotzEnv) -> None:
    steps = play(env, demo_walkthrough(1))
    assert [s.command for s in steps] == demo_walkthrough(1)
    increases = [s.command for s in steps if s.reward > 0]
    assert increases == ["take iron key", "open iron door", "take silver crown"]
    assert steps[-1].done
    assert env.victory()
    assert not env.game_over()
    assert steps[-1].score == env.get_max_score() == DEMO_MAX_SCORE
    assert "*** The End ***" in steps[-1].text


@pytest.mark.slow
def test_eight_or_more_rooms_are_reachable_and_headers_name_them(env: jericho.FrotzEnv) -> None:
    steps = play(env, ["look", *TOUR, *demo_walkthrough(1)])
    assert len({s.location for s in steps}) >= 8
    assert headers(steps) == set(demo_room_names()) - {DEADLY_ROOM}
    larder = next(s for s in steps if HEADER.findall(s.text) == [DEAD_END_ROOM])
    assert "dead end" in larder.text


@pytest.mark.slow
def test_each_room_header_matches_one_location_id(env: jericho.FrotzEnv) -> None:
    steps = play(env, ["look", *TOUR, *demo_walkthrough(1)])
    ids: dict[str, set[int]] = {}
    for step in steps:
        for name in HEADER.findall(step.text):
            ids.setdefault(name, set()).add(step.location)
    assert all(len(found) == 1 for found in ids.values()), ids
    assert len({min(found) for found in ids.values()}) == len(ids)


@pytest.mark.slow
def test_door_is_locked_until_the_key_is_used(env: jericho.FrotzEnv) -> None:
    hall = location(env)
    opened, walked = play(env, ["open iron door", "go south"])
    assert "unlock" in opened.text.lower()
    assert "You have to open the iron door first" in walked.text
    assert opened.location == walked.location == hall
    assert opened.reward == walked.reward == 0
    # The key lies in the closed oak chest in another room.
    route = demo_walkthrough(1)
    to_chest = route[: route.index("open oak chest")]
    steps = play(env, [*to_chest, "open oak chest"])
    assert HEADER.findall(steps[-2].text) == [demo_chest_room(1)]
    assert steps[-1].location != hall
    assert "revealing an iron key" in steps[-1].text


@pytest.mark.slow
def test_entering_the_sinkhole_kills_without_victory(env: jericho.FrotzEnv) -> None:
    steps = play(env, demo_death_commands(1))
    assert steps[-1].done
    assert env.game_over()
    assert not env.victory()
    assert HEADER.findall(steps[-1].text) == [DEADLY_ROOM]
    assert "*** You lost! ***" in steps[-1].text
    assert steps[-1].score == 0


@pytest.mark.slow
def test_eating_the_grey_mushroom_kills(env: jericho.FrotzEnv) -> None:
    steps = play(env, demo_poison_commands(1))
    assert [s.command for s in steps] == demo_poison_commands(1)
    assert steps[-1].done
    assert env.game_over()
    assert not env.victory()
    assert "*** You lost! ***" in steps[-1].text


@pytest.mark.slow
def test_same_seed_compiles_to_the_same_game(world: Built, tmp_path: Path) -> None:
    other = build_demo_world(tmp_path, seed=1)
    assert other.name == world.path.name
    mine, theirs = bytearray(world.path.read_bytes()), bytearray(other.read_bytes())
    mine[SERIAL] = theirs[SERIAL] = b"000000"  # the serial is the compile date
    assert mine == theirs
    walkthrough = demo_walkthrough(1)
    assert outcome(other, walkthrough) == outcome(world.path, walkthrough)


@pytest.mark.slow
def test_another_seed_moves_the_chest_and_still_wins(tmp_path: Path) -> None:
    path = build_demo_world(tmp_path, seed=2)
    assert path.name == "tw-cairn-demo-2.z8"
    assert demo_chest_room(2) != demo_chest_room(1)
    steps = outcome(path, demo_walkthrough(2))
    assert sum(1 for reward, _, _ in steps if reward > 0) == 3
    assert steps[-1] == (2, True, DEMO_MAX_SCORE)
    assert outcome(path, demo_death_commands(2))[-1][1]


@pytest.mark.slow
def test_concurrent_builds_compile_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    real_compile = demo_world._compile

    def counting(source: str, story: Path) -> None:
        calls.append(story)
        real_compile(source, story)

    monkeypatch.setattr(demo_world, "_compile", counting)
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(build_demo_world(tmp_path, seed=1)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert results == [tmp_path / demo_world_filename(1)] * 3
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folder left


def test_the_adapter_reads_textworld_inventories_without_spending_a_move(tmp_path: Path) -> None:
    from cairn.adapters.game.demo_world import build_demo_world, demo_walkthrough
    from cairn.adapters.game.jericho_game import JerichoGame

    game = JerichoGame(build_demo_world(tmp_path, seed=1))
    start = game.reset()
    assert start.location_name == "Entrance Hall" and start.max_score == 4
    for action in demo_walkthrough(1)[:4]:
        obs = game.step(action)
    assert obs.inventory == ["iron key"] and obs.score == 1
    assert game.step("look").location_name == "Study"
