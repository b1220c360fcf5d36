"""`cairn memories edit` on markdown, SQLite and PostgreSQL, with a scripted `$EDITOR`: a small
Python script that replays the steps a test gives it (text replacements, a store change made
by "an agent" while the editor is open, quitting without saving), one step per opening, and
keeps a copy of each text it was shown."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from cairn import memory_edit
from cairn.cli import main
from cairn.errors import StoreError
from cairn.events.commands import Command
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemoryStatus
from tests.contract.conftest import FILE_NAMES, open_store
from tests.contract.test_store_contract import full_entries
from tests.postgres import server

KINDS = ("markdown", "sqlite", "postgres")

EDITOR = """
import json, pathlib, sys
here = pathlib.Path(__file__).parent
steps = json.loads((here / "steps.json").read_text())
count = here / "count"
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
path = pathlib.Path(sys.argv[1])
text = path.read_text()
(here / f"shown{n}.md").write_text(text)
step = steps[n]
if step.get("agent"):  # someone else changes the store while the editor is open
    from cairn.memory_api import Memory
    kind, workdir, space, memory_id, new_text = step["agent"]
    with Memory.open(workdir, store=kind, memory_space=space) as memory:
        memory.update(memory_id, text=new_text)
for old, new in step.get("replace", []):
    assert old in text, (old, text)
    text = text.replace(old, new)
if not step.get("quit"):
    path.write_text(text)
sys.exit(step.get("exit", 0))
"""

STORM = MemoryEntry(
    id="m-storm", scope=MemoryScope.WORLD, title="Storm coming", text="Rain at dusk.", tags=["sky"]
)
WINDOW = MemoryEntry(
    id="m-window",
    scope=MemoryScope.LOCATION,
    location_id=79,
    location_name="Behind House",
    category=MemoryCategory.SUCCESS,
    title="Enter kitchen through window",
    text="Open the window, then enter it.",
    episode=1,
    turn_start=47,
    turn_end=49,
)
TROLL = MemoryEntry(
    id="m-troll", scope=MemoryScope.NPC, npc_ids=["troll"], title="Troll", text="Hates fire."
)


class Setup:
    """A store of one kind holding STORM, WINDOW and TROLL, and the editor's folder."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        if kind == "postgres":
            server()  # skips when there are no PostgreSQL binaries
        self.kind, self.workdir = kind, tmp_path / "run"
        self.workdir.mkdir()
        self.space = str(tmp_path)
        self.store_path = self.workdir / FILE_NAMES[kind] if kind != "postgres" else tmp_path
        store = open_store(kind, self.store_path)
        with store.transaction() as tx:
            tx.record_visit(79, "Behind House", 1)
            for entry in (STORM, WINDOW, TROLL):
                tx.add(entry)
        store.close()
        self.editor_dir = tmp_path / "editor"
        self.editor_dir.mkdir()
        (self.editor_dir / "editor.py").write_text(EDITOR)

    def run(self, steps: list[dict[str, Any]], *scope: str) -> Result:
        (self.editor_dir / "steps.json").write_text(json.dumps(steps))
        env = {"EDITOR": f"{sys.executable} {self.editor_dir / 'editor.py'}", "VISUAL": None}
        if self.kind == "postgres":
            env["CAIRN_DATABASE_URL"] = server().url
        args = ["memories", "edit", *scope, "--workdir", str(self.workdir), "--store", self.kind]
        args += ["--space", self.space]
        return CliRunner().invoke(main, args, env=env)

    def shown(self, n: int) -> str:
        return (self.editor_dir / f"shown{n}.md").read_text()

    def openings(self) -> int:
        return int((self.editor_dir / "count").read_text())

    def agent(self, memory_id: str, text: str) -> list[str]:
        return [self.kind, str(self.workdir), self.space, memory_id, text]

    def memories(self) -> dict[str, MemoryEntry]:
        store = open_store(self.kind, self.store_path)
        try:
            return {e.id: e for e in store.entries()}
        finally:
            store.close()


@pytest.fixture(params=KINDS)
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Setup:
    return Setup(request.param, tmp_path)


def test_an_edit_updates_forgets_and_adds_in_one_go(setup: Setup) -> None:
    added = "\n\n**[DANGER] Lightning**\nStay off the hill.\n"
    steps = [
        {
            "replace": [
                ("Rain at dusk.", "Rain at noon."),
                ('"tags": ["sky"]', '"importance": 900, "tags": ["sky", "weather"]'),
                ("**[NOTE] Storm coming**", "**[DANGER] Storm coming soon**"),
                ("Open the window, then enter it.", "Open the window, then enter it.\nQuietly."),
                ("Hates fire.", "Hates fire." + added.rstrip("\n")),
            ]
        }
    ]
    # the troll's block stays; Lightning is added in the troll's section
    result = setup.run(steps)
    assert result.exit_code == 0, result.output
    assert "1 added, 2 updated, 0 forgotten" in result.output
    shown = setup.shown(0)
    assert '<!-- cairn {"id": "m-storm"' in shown and "## Location 79: Behind House" in shown
    after = setup.memories()
    storm = after["m-storm"]
    assert (storm.text, storm.title, storm.category) == (
        "Rain at noon.",
        "Storm coming soon",
        MemoryCategory.DANGER,
    )
    assert (storm.importance, storm.tags) == (900, ["sky", "weather"])
    assert after["m-window"].text == "Open the window, then enter it.\nQuietly."
    new = [e for e in after.values() if e.title == "Lightning"]
    assert len(new) == 1 and new[0].npc_ids == ["troll"] and new[0].scope is MemoryScope.NPC
    assert new[0].category is MemoryCategory.DANGER and new[0].text == "Stay off the hill."


def test_a_deleted_block_is_forgotten_not_deleted(setup: Setup) -> None:
    shown = setup.run([{}], "--world")  # look first: saved unchanged, nothing to do
    assert shown.exit_code == 0 and "No changes." in shown.output
    text = setup.shown(0)
    assert "Storm coming" in text and "Enter kitchen" not in text and "Troll" not in text
    block = text[text.index("**[NOTE] Storm coming**") :]
    (setup.editor_dir / "count").unlink()
    result = setup.run([{"replace": [(block, "")]}], "--world")
    assert result.exit_code == 0, result.output
    storm = setup.memories()["m-storm"]
    assert storm.status is MemoryStatus.SUPERSEDED and storm.superseded_by is None


def test_invalid_text_reopens_with_its_problems_then_applies(setup: Setup) -> None:
    steps = [
        {"replace": [("**[NOTE] Storm coming**", "**[BOGUS] Storm coming**")]},
        {"replace": [("**[BOGUS] Storm coming**", "**[NOTE] Storm is here**")]},
    ]
    result = setup.run(steps, "--world")
    assert result.exit_code == 0, result.output
    assert setup.openings() == 2
    again = setup.shown(1).split("\n")
    problem = next(line for line in again if "BOGUS" in line and line.startswith("# line "))
    number = int(problem.split()[2].rstrip(":"))
    assert again[number - 1] == "**[BOGUS] Storm coming**"  # the line it names, in that file
    assert setup.memories()["m-storm"].title == "Storm is here"


def test_quitting_after_problems_abandons_and_changes_nothing(setup: Setup) -> None:
    steps = [
        {"replace": [("Rain at dusk.", "Rain."), ("**[NOTE]", "**[BOGUS]")]},
        {"quit": True},
    ]
    result = setup.run(steps, "--world")
    assert result.exit_code == 1 and "abandoned" in result.output
    assert setup.memories()["m-storm"].text == "Rain at dusk."


def test_fixed_fields_and_foreign_ids_are_problems(setup: Setup) -> None:
    steps = [
        {
            "replace": [
                ("*(Ep1, T47-49)*", "*(Ep2, T47-49)*"),
                ('"id": "m-window"', '"id": "m-elsewhere"'),
            ]
        },
        {"quit": True},
    ]
    result = setup.run(steps, "--location", "79")
    assert result.exit_code == 1
    top = setup.shown(1)
    assert "m-elsewhere: not one this edit was given" in top
    (setup.editor_dir / "count").unlink()
    steps = [{"replace": [("*(Ep1, T47-49)*", "*(Ep2, T47-49)*")]}, {"quit": True}]
    assert setup.run(steps, "--location", "79").exit_code == 1
    assert "episode cannot be changed here" in setup.shown(1)
    assert setup.memories()["m-window"].episode == 1


def test_a_memory_changed_meanwhile_is_a_conflict_and_nothing_is_applied(setup: Setup) -> None:
    steps = [
        {
            "agent": setup.agent("m-storm", "Hail at dusk."),
            "replace": [("Rain at dusk.", "Rain at noon."), ("Hates fire.", "Hates water.")],
        }
    ]
    result = setup.run(steps)
    assert result.exit_code == 1
    assert "memory m-storm changed in the store" in result.output
    assert "Rain at dusk." in result.output and "Hail at dusk." in result.output
    after = setup.memories()
    assert after["m-storm"].text == "Hail at dusk."  # the agent's version stands
    assert after["m-troll"].text == "Hates fire."  # one unit of work: nothing of the edit


def test_an_untouched_memory_changed_meanwhile_is_no_conflict(setup: Setup) -> None:
    steps = [
        {
            "agent": setup.agent("m-storm", "Hail at dusk."),
            "replace": [("Hates fire.", "Hates water.")],
        }
    ]
    result = setup.run(steps)
    assert result.exit_code == 0, result.output
    after = setup.memories()
    assert after["m-storm"].text == "Hail at dusk." and after["m-troll"].text == "Hates water."


def test_a_command_failing_mid_apply_rolls_the_whole_edit_back(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two updates are handled, then the store refuses the third command: the unit of work
    rolls back, so neither update stands, and the person's text is kept."""
    real = memory_edit.commands

    def failing(*args: Any) -> Iterator[Command]:
        yield from real(*args)
        raise StoreError("disk full while applying the edit")

    monkeypatch.setattr(memory_edit, "commands", failing)
    steps = [{"replace": [("Rain at dusk.", "Rain at noon."), ("Hates fire.", "Hates water.")]}]
    result = setup.run(steps)
    assert result.exit_code == 1
    assert "disk full while applying the edit; nothing changed" in result.output
    kept = Path(result.output.rsplit("your text is in ", 1)[1].strip())
    assert "Rain at noon." in kept.read_text()
    after = setup.memories()
    assert after["m-storm"].text == "Rain at dusk." and after["m-troll"].text == "Hates fire."
    assert {e.status for e in after.values()} == {MemoryStatus.ACTIVE}


def test_a_failing_editor_changes_nothing(setup: Setup) -> None:
    result = setup.run([{"replace": [("Rain at dusk.", "Rain.")], "exit": 3}], "--world")
    assert result.exit_code == 1 and "editor exited with 3" in result.output
    assert setup.memories()["m-storm"].text == "Rain at dusk."


def test_memories_setting_every_field_read_back_as_given(setup: Setup) -> None:
    """Only what the person changed is changed: every other field of every memory reads back
    from the text as the store gave it (no false 'cannot be changed' problem, no update)."""
    store = open_store(setup.kind, setup.store_path)
    with store.transaction() as tx:
        for entry in full_entries():
            tx.add(entry)
    store.close()
    before = setup.memories()
    steps = [{"replace": [("Troll blocks the bridge", "Troll guards the bridge")]}]
    result = setup.run(steps)
    assert result.exit_code == 0, result.output
    assert "0 added, 1 updated, 0 forgotten" in result.output
    after = setup.memories()
    assert after.pop("m-full-location").title == "Troll guards the bridge"
    before.pop("m-full-location")
    assert after == before
