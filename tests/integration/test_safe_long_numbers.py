"""Issue 37 item 5: a number of more than 4,300 digits (Python's limit for turning a string
into an int) in a Memories.md header or a scenario, and a base URL with CR/LF or of 70 KB, are
clear errors naming the file and line or the setting, never a traceback; a Memories.md with
such a header still loads its other memories and play goes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn.adapters.storage.markdown_parse import parse
from cairn.cli import main
from cairn.errors import ConfigError, ScenarioError
from cairn.replay import load_scenario
from cairn.settings import MAX_BASE_URL, load_settings

HUGE = "9" * 5000
PLAY = ["play", "--episodes", "1", "--max-turns", "3"]


@pytest.mark.parametrize("meta", [f"Ep{HUGE}", f"T{HUGE}", f"T1-{HUGE}", f"+{HUGE}", f"-{HUGE}"])
def test_a_header_number_past_the_limit_is_a_problem_and_the_block_is_kept(meta: str) -> None:
    text = (
        "# World Memories\n\n"
        f"**[NOTE] Huge** *({meta})*\nA person's typo.\n\n"
        "**[NOTE] Troll** *(Ep1)*\nThe troll is north.\n"
    )
    parsed = parse(text)
    assert [m.title for m in parsed.cache.memories.values()] == ["Troll"]
    [problem] = parsed.problems
    assert problem.line == 3 and "out of range" in problem.message
    assert len(problem.message) < 200  # the number is named, not printed
    assert parsed.raw[0].lines == [f"**[NOTE] Huge** *({meta})*", "A person's typo."]


def test_a_visits_line_past_the_limit_is_reported_and_ignored() -> None:
    visits = f"**Visits:** {HUGE} | **Episodes:** 1, {HUGE}"
    parsed = parse(f"# Location Memories\n\n## Location 1: Hall\n{visits}\n")
    assert parsed.cache.locations[1].episodes == [1]
    assert [p.line for p in parsed.problems] == [4, 4]
    assert all("out of range" in p.message for p in parsed.problems)


def test_play_goes_on_with_the_other_memories_and_keeps_the_bad_block(tmp_path: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(main, [*PLAY, "--workdir", str(tmp_path)])
    assert first.exit_code == 0, first.output
    path = tmp_path / "Memories.md"
    bad = f"**[NOTE] Huge** *(Ep{HUGE})*\nA person's typo."
    path.write_text(path.read_text(encoding="utf-8") + f"\n# World Memories\n\n{bad}\n")
    before = runner.invoke(main, ["memories", "show", "--workdir", str(tmp_path)])
    assert before.exit_code == 0, before.output

    result = runner.invoke(main, [*PLAY, "--workdir", str(tmp_path)])

    assert result.exit_code == 0, result.output
    assert bad in path.read_text(encoding="utf-8")
    check = runner.invoke(main, ["memories", "check", str(path)])
    assert "out of range" in check.output and "Memories.md:" in check.output, check.output
    after = runner.invoke(main, ["memories", "show", "--workdir", str(tmp_path)])
    assert after.exit_code == 0 and "Entrance Hall" in after.output, after.output


@pytest.mark.parametrize(
    ("body", "line", "field"),
    [
        (f"seed: {HUGE}\nsteps:\n  - move: 1\n", 4, "seed"),
        (f"steps:\n  - move: 1\n  - {{note: x, location: {HUGE}}}\n", 6, "steps[1].location"),
        (f"steps:\n  - move: 1\nextra: [1, -{HUGE}]\n", 6, "extra[1]"),
    ],
)
def test_a_scenario_integer_past_the_limit_names_file_line_and_field(
    tmp_path: Path, body: str, line: int, field: str
) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text(f"kind: narrative\nname: huge\nlocations: [{{id: 1, name: Hall}}]\n{body}")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: {field}: an integer of 5,00"), message
    assert "too long" in message and len(message) < 300


BAD_URLS = {
    "crlf": "http://localhost:1/\r\nX-Injected: yes",
    "70KB": "http://localhost:1/" + "a" * 70_000,
    "no-scheme": "localhost:11434/v1",
}


@pytest.mark.parametrize("url", list(BAD_URLS.values()), ids=list(BAD_URLS))
@pytest.mark.parametrize("setting", ["llm_base_url", "openai_base_url"])
def test_a_bad_base_url_setting_is_a_config_error_naming_it(setting: str, url: str) -> None:
    with pytest.raises(ConfigError, match=rf"^invalid cairn settings: {setting}: "):
        load_settings(**{setting: url})


@pytest.mark.parametrize("url", list(BAD_URLS.values())[:2], ids=list(BAD_URLS)[:2])
@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_bad_base_url_variable_is_a_clear_error_from_play(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api: str, url: str
) -> None:
    monkeypatch.setenv(f"{api.upper()}_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = CliRunner().invoke(main, [*PLAY, "--llm", api, "--workdir", str(tmp_path / "w")])
    assert isinstance(result.exception, ConfigError), result.output
    assert f"{api.upper()}_BASE_URL (the environment variable): must" in str(result.exception)
    with pytest.raises(ConfigError):  # and never for a command that does not call the API
        load_settings(llm=api)
    load_settings(llm="offline")


def test_a_long_but_ordinary_base_url_is_taken() -> None:
    url = "https://models.example.com/" + "v" * (MAX_BASE_URL - 40)
    assert load_settings(openai_base_url=url).openai_base_url == url
