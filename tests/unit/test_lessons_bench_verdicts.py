"""bench/lessons_bench.py's acceptance verdicts, computed from report.json-shaped figures."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "lessons_bench.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lessons_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["lessons_bench"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def run(bench: ModuleType, memory: bool, *episodes: tuple[bool, int | None, int, int]) -> object:
    """A run whose episodes 1.. are (died, best score, actions, repeated failures)."""
    figures = bench.RunFigures(game="g", memory=memory, episodes_asked=len(episodes), turns_asked=9)
    for number, (died, best, actions, repeated) in enumerate(episodes, start=1):
        figures.episodes.append(
            bench.EpisodeFigures(number, actions, died, best, actions, repeated)
        )
    return figures


def test_episode_one_is_not_counted(bench: ModuleType) -> None:
    # the first episode has nothing to remember: its death, score and failures stay out
    w = bench.window(run(bench, True, (True, 50, 100, 100), (False, 10, 100, 2), (True, 0, 100, 0)))
    assert (w.episodes, w.deaths, w.scoring) == (2, 1, 1)
    assert w.mean_score == 5.0
    assert w.repeated_failure_rate == 0.01


def test_missing_best_score_counts_as_zero(bench: ModuleType) -> None:
    w = bench.window(run(bench, True, (False, 5, 10, 0), (False, None, 10, 0), (False, 4, 10, 0)))
    assert (w.scoring, w.mean_score) == (1, 2.0)


def test_memory_that_dies_more_misses_even_when_it_scores(bench: ModuleType) -> None:
    mem = bench.Window(episodes=4, deaths=4, scoring=4, mean_score=10.0, repeated_failure_rate=0.01)
    base = bench.Window(episodes=4, deaths=0, scoring=4, mean_score=10.0, repeated_failure_rate=0.4)
    points = bench.game_points(mem, base)
    assert [p.name for p in points if not p.ok] == ["deaths"]
    assert bench.verdict_line("zork1 5x200", points).startswith("zork1 5x200: MISS deaths (")


def test_repeated_failures_must_be_under_five_percent_and_the_baseline(
    bench: ModuleType,
) -> None:
    base = bench.Window(episodes=4, deaths=1, scoring=0, mean_score=0.0, repeated_failure_rate=0.3)
    high = bench.Window(episodes=4, deaths=1, scoring=0, mean_score=0.0, repeated_failure_rate=0.06)
    assert [p.name for p in bench.game_points(high, base) if not p.ok] == ["rep.fail < 5%"]
    low_base = bench.Window(4, 1, 0, 0.0, 0.02)
    equal = bench.Window(4, 1, 0, 0.0, 0.02)
    assert [p.name for p in bench.game_points(equal, low_base) if not p.ok] == [
        "rep.fail < baseline"
    ]


def test_no_repeated_failures_in_either_mode_passes(bench: ModuleType) -> None:
    zero = bench.Window(episodes=4, deaths=0, scoring=0, mean_score=0.0, repeated_failure_rate=0.0)
    assert all(p.ok for p in bench.game_points(zero, zero))


def test_zork_points_and_the_summary_count_the_long_run(bench: ModuleType) -> None:
    mem = bench.Window(episodes=19, deaths=19, scoring=0, mean_score=0.0, repeated_failure_rate=0)
    base = bench.Window(episodes=19, deaths=7, scoring=12, mean_score=6.3, repeated_failure_rate=0)
    long = {"zork1": bench.zork_points(mem, base)}
    assert [p.ok for p in long["zork1"]] == [False, False]
    ok = [bench.Point("deaths", True, "")]
    # zork1's short run meets every point, its long run does not: the game misses
    assert bench.summary({"zork1": ok, "905": ok}, long) == (1, 2)


def test_a_broken_run_misses_its_game(bench: ModuleType) -> None:
    good = run(bench, False, (False, 0, 10, 0), (False, 0, 10, 0))
    broken = bench.RunFigures(game="g", memory=True, episodes_asked=2, turns_asked=9, error="boom")
    points = bench.judged(bench.pair_up([broken, good]), bench.game_points)
    assert [(p.name, p.ok, p.detail) for p in points["g"]] == [("run", False, "boom")]


def test_death_text_is_the_games_last_words_before_the_banner(bench: ModuleType) -> None:
    response = (
        "It is pitch black.\n\nOh, no! You have walked into the slavering fangs of a lurking"
        " grue!\n\n    ****  You have died  ****\n\nNow, let's take a look here..."
    )
    assert bench.death_text(response) == (
        "It is pitch black. Oh, no! You have walked into the slavering fangs of a lurking grue!"
    )


def test_a_death_told_the_turn_before_is_read_from_that_turn(
    bench: ModuleType, tmp_path: Path
) -> None:
    # hhgg prints the death, then asks for RETURN: the dying turn shows only the score
    rows = [
        {
            "episode": 1,
            "turn": 1,
            "location_before": 7,
            "location_after": 168,
            "location_after_name": "Bedroom",
            "action": "south",
            "response": "Bedroom\n\nThe Earth is demolished.\n\nWe are about to give you your"
            " score. (Hit RETURN or ENTER when ready.)",
            "died": False,
        },
        {
            "episode": 1,
            "turn": 2,
            "location_before": 168,
            "location_after": 7,
            "location_after_name": "Dark",
            "action": "take washbasin",
            "response": "\nYour score is 0 of a possible 400, in 19 turns.\n\nWould you like"
            " to start over?",
            "died": True,
        },
    ]
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    [death] = bench.transcript_deaths(transcript)
    assert death.room == "Bedroom (L168)"
    assert death.text.startswith("(turn before) Bedroom The Earth is demolished. We are about")
    assert bench.death_text(rows[1]["response"]) is None


# games nobody tuned for: the room check against the rooms the generator made

ROOMS = ("spare room", "kitchen", "cellar")


def test_rooms_each_under_one_id_and_their_own_name_pass(bench: ModuleType) -> None:
    # the header prints "-= Spare Room =-", the generator says "spare room"
    seen = {"51": ["Spare Room"], "58": ["Kitchen"]}
    assert bench.room_problems(seen, ROOMS) == []


def test_two_rooms_under_one_id_are_reported_collapsed(bench: ModuleType) -> None:
    problems = bench.room_problems({"51": ["Kitchen", "Cellar"]}, ROOMS)
    assert problems == ["L51 named 'Kitchen' and 'Cellar': rooms collapsed"]


def test_one_room_under_two_ids_is_reported_split(bench: ModuleType) -> None:
    problems = bench.room_problems({"51": ["Kitchen"], "60": ["kitchen"]}, ROOMS)
    assert problems == ["'kitchen' under 2 ids (L51, L60): a room split"]


def test_a_name_that_is_no_rooms_or_no_name_is_reported(bench: ModuleType) -> None:
    seen = {"51": ["Visit to location 51"], "58": [""], "None": ["Kitchen"]}
    assert bench.room_problems(seen, ROOMS) == [
        "L51 named 'Visit to location 51': no room of the game has that name",
        "L58 unnamed on some turns",
        "no room id after some turns (named ['Kitchen'])",
    ]


def test_rooms_seen_reads_the_transcript_and_merges_runs(bench: ModuleType, tmp_path: Path) -> None:
    rows = [
        {"location_after": 51, "location_after_name": "Kitchen"},
        {"location_after": 51, "location_after_name": "Kitchen"},
        {"location_after": 60, "location_after_name": "Cellar"},
        {"location_after": 51, "location_after_name": None},
    ]
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    seen = bench.rooms_seen(transcript)
    assert seen == {"51": ["Kitchen", ""], "60": ["Cellar"]}
    other = bench.RunFigures(game="g", memory=False, episodes_asked=1, turns_asked=9)
    other.rooms_seen = {"51": ["Kitchen"], "70": ["Spare room"]}
    mine = bench.RunFigures(game="g", memory=True, episodes_asked=1, turns_asked=9)
    mine.rooms_seen = seen
    merged = bench.merged_rooms([mine, other])
    assert merged == {"51": ["Kitchen", ""], "60": ["Cellar"], "70": ["Spare room"]}


# games nobody tuned for: which games, and without TextWorld


def test_the_same_seed_picks_the_same_games_within_the_asked_sizes(bench: ModuleType) -> None:
    tw = bench.textworld_games
    games = tw.specs(12, 1)
    assert games == tw.specs(12, 1)
    assert games != tw.specs(12, 2)
    assert [g.label.split("-")[0] for g in games[:6]] == [
        "custom",
        "treasure",
        "cooking",
        "custom",
        "coin",
        "simple",
    ]
    assert len({g.filename for g in games}) == 12
    assert all(g.filename.startswith("tw-") and g.filename.endswith(".z8") for g in games)
    for game in games:
        args = dict(zip(game.args[1::2], game.args[2::2], strict=False))
        assert "--seed" in game.args
        if game.args[0] == "custom":
            assert 5 <= int(args["--world-size"]) <= 12
            assert 3 <= int(args["--quest-length"]) <= 8
        if game.args[0] == "tw-cooking":
            assert args["--go"] in ("6", "9")


def test_without_textworld_the_games_are_skipped_with_a_note(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    tw = bench.textworld_games
    monkeypatch.setattr(tw.importlib.util, "find_spec", lambda name: None)
    made = bench.untuned_games(6, 1)
    assert made.games == []
    assert made.notes == ["skipped: TextWorld is not installed (pip install 'cairn[jericho]')"]


def test_a_game_in_the_cache_is_reused_without_tw_make(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tw = bench.textworld_games
    [game] = tw.specs(1, 1)
    story = tmp_path / game.filename
    story.write_bytes(b"story")
    story.with_suffix(".json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(tw, "tw_make", lambda: None)  # generating would raise
    assert tw.generate(game, tmp_path) == story
    story.with_suffix(".json").unlink()  # half a game is made again
    with pytest.raises(RuntimeError):
        tw.generate(game, tmp_path)


def test_progress_counts_games_where_memory_scores_more_or_reaches_more_rooms(
    bench: ModuleType,
) -> None:
    def rooms_run(game: str, memory: bool, score: int, rooms: int) -> object:
        figures = bench.RunFigures(game=game, memory=memory, episodes_asked=2, turns_asked=9)
        for number in (1, 2):
            figures.episodes.append(
                bench.EpisodeFigures(number, 9, False, score, 9, 0, rooms=rooms)
            )
        return figures

    runs = [
        rooms_run("further", True, 0, 7),
        rooms_run("further", False, 0, 5),
        rooms_run("higher", True, 10, 3),
        rooms_run("higher", False, 5, 3),
        rooms_run("same", True, 5, 3),
        rooms_run("same", False, 5, 3),
    ]
    ahead, behind = bench.progress(runs)
    assert [line.split()[0] for line in ahead] == ["further", "higher"]
    assert [line.split()[0] for line in behind] == ["same"]
    assert "rooms 7.0 vs 5.0" in ahead[0]
