"""ContextService: priority order, budget dropping and reporting, prompt kinds, default wiring."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytest_mock import MockerFixture

from cairn.errors import CairnError, ConfigError, StoreError, UnknownPromptError
from cairn.interfaces.memory_service import IMemoryService
from cairn.models.game import GameState, NPCInstance, TurnOutcome
from cairn.models.memory import LocationRecord, MemoryCategory, MemoryEntry, MemoryScope
from cairn.services.context import (
    ContextBuilder,
    ContextRequest,
    ContextService,
    Section,
    default_builders,
    estimate_tokens,
    render_sections,
)


@dataclass
class FixedBuilder:
    """A fake builder: always the same text (or None), at a given priority."""

    name: str
    priority: int
    text: str | None

    def build(self, request: ContextRequest) -> Section | None:
        if self.text is None:
            return None
        return Section.of(self.name, self.name.title(), self.text, self.priority)


@dataclass
class FailingBuilder:
    """A fake builder whose store is broken."""

    name: str = "broken"
    priority: int = 5

    def build(self, request: ContextRequest) -> Section | None:
        raise StoreError("database is locked")


def words(n: int) -> str:
    return " ".join(["lantern"] * n)


def req(**kwargs: Any) -> ContextRequest:
    fields: dict[str, Any] = {"game_state": GameState(), "location_id": 23, "location_name": "Hall"}
    fields.update(kwargs)
    return ContextRequest(**fields)


def service(*builders: ContextBuilder, budget: int = 2000) -> ContextService:
    return ContextService({"adventurer": list(builders)}, budget_tokens=budget)


def test_sections_render_in_priority_order_with_titles_and_costs() -> None:
    svc = service(
        FixedBuilder("later", 30, "c"), FixedBuilder("first", 10, "a"), FixedBuilder("mid", 20, "b")
    )
    prompt = svc.assemble("adventurer", req())
    assert prompt.text == "## First\na\n\n## Mid\nb\n\n## Later\nc"
    one = estimate_tokens("a")
    assert prompt.sections == [("first", one), ("mid", one), ("later", one)]
    assert prompt.total_tokens == estimate_tokens(prompt.text)
    assert prompt.dropped == []
    assert not prompt.over_budget


@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=12), st.text(max_size=40)),
        min_size=1,
        max_size=4,
        unique_by=lambda pair: pair[0],
    )
)
def test_the_prompts_cost_is_the_estimate_of_its_text_whatever_the_titles_and_texts(
    parts: list[tuple[str, str]],
) -> None:
    """The budget adds each section's counts by parts (title, text): the sum must be the
    estimate of the rendered prompt, spaces, newlines and other whitespace included."""
    builders = [FixedBuilder(name, n, text) for n, (name, text) in enumerate(parts)]
    prompt = service(*builders, budget=100_000).assemble("adventurer", req())
    assert prompt.total_tokens == estimate_tokens(prompt.text)


def test_builders_with_nothing_to_say_leave_no_heading() -> None:
    prompt = service(FixedBuilder("a", 1, "x"), FixedBuilder("empty", 2, None)).assemble(
        "adventurer", req()
    )
    assert "Empty" not in prompt.text
    assert [name for name, _ in prompt.sections] == ["a"]


def test_budget_drops_lowest_priority_first_and_reports_it() -> None:
    a, b, c = (FixedBuilder(n, p, words(100)) for n, p in (("a", 1), ("b", 2), ("c", 3)))
    two = estimate_tokens(render_sections([s for s in (a.build(req()), b.build(req())) if s]))
    prompt = service(c, b, a, budget=two).assemble("adventurer", req())

    assert [name for name, _ in prompt.sections] == ["a", "b"]
    assert len(prompt.dropped) == 1
    name, tokens, reason = prompt.dropped[0]
    assert (name, tokens) == ("c", estimate_tokens(words(100)))
    assert "over budget" in reason
    assert prompt.total_tokens <= two
    assert "## C" not in prompt.text


def test_a_section_that_does_not_fit_does_not_push_out_a_smaller_less_important_one() -> None:
    svc = service(
        FixedBuilder("top", 1, words(50)),
        FixedBuilder("huge", 2, words(1000)),
        FixedBuilder("small", 3, words(5)),
        budget=200,
    )
    prompt = svc.assemble("adventurer", req())
    assert [name for name, _ in prompt.sections] == ["top", "small"]
    assert [name for name, _, _ in prompt.dropped] == ["huge"]


def test_most_important_section_is_kept_even_over_budget_and_flagged() -> None:
    svc = service(FixedBuilder("core", 1, words(300)), FixedBuilder("extra", 2, "x"), budget=50)
    prompt = svc.assemble("adventurer", req())
    assert [name for name, _ in prompt.sections] == ["core"]
    assert prompt.over_budget
    assert prompt.total_tokens > 50
    assert [name for name, _, _ in prompt.dropped] == ["extra"]
    assert "OVER BUDGET" in prompt.explain()


def test_per_call_budget_overrides_the_default() -> None:
    svc = service(FixedBuilder("a", 1, words(100)), FixedBuilder("b", 2, words(100)), budget=5000)
    assert len(svc.assemble("adventurer", req()).sections) == 2
    small = svc.assemble("adventurer", req(), budget_tokens=150)
    assert [name for name, _ in small.sections] == ["a"]
    assert small.budget_tokens == 150


def test_unknown_prompt_kind_raises_a_cairn_error() -> None:
    svc = service(FixedBuilder("a", 1, "x"))
    with pytest.raises(UnknownPromptError, match="'summarizer'") as info:
        svc.assemble("summarizer", req())
    assert isinstance(info.value, CairnError)


def test_failing_builder_is_reported_and_the_rest_still_assembled() -> None:
    prompt = service(FailingBuilder(), FixedBuilder("ok", 10, "fine")).assemble("adventurer", req())
    assert prompt.text == "## Ok\nfine"
    assert prompt.dropped == [("broken", 0, "builder failed: StoreError: database is locked")]


def test_duplicate_section_names_and_bad_budgets_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="duplicate"):
        service(FixedBuilder("a", 1, "x"), FixedBuilder("a", 2, "y"))
    with pytest.raises(ConfigError, match="budget_tokens"):
        service(FixedBuilder("a", 1, "x"), budget=0)


# -- default_builders with a mocked IMemoryService ---------------------------------------------


def entry(title: str, scope: MemoryScope = MemoryScope.LOCATION, **kw: Any) -> MemoryEntry:
    fields: dict[str, Any] = {"location_id": 23} if scope is MemoryScope.LOCATION else {}
    fields.update(kw)
    return MemoryEntry(
        scope=scope,
        title=title,
        text=f"{title} text",
        created_at=datetime(2025, 3, 1, tzinfo=UTC),
        **fields,
    )


@pytest.fixture
def memory(mocker: MockerFixture) -> Any:
    m = mocker.create_autospec(IMemoryService, instance=True)
    m.location_record.side_effect = lambda loc_id: (
        LocationRecord(id=23, name="Hall", visits=2, episodes=[1]) if loc_id == 23 else None
    )
    m.location_memories.return_value = [entry("Lamp here", category=MemoryCategory.SUCCESS)]
    m.adjacent_memories.return_value = {24: [entry("Grue", location_id=24)]}
    m.npc_memories.side_effect = lambda npc_id: [
        entry(f"{npc_id} met", MemoryScope.NPC, npc_ids=[npc_id])
    ]
    m.world_memories.return_value = [entry("Dam opened", MemoryScope.WORLD)]
    m.top_memories.return_value = [entry("Carry lamp", importance=900)]
    return m


def turns() -> list[TurnOutcome]:
    return [
        TurnOutcome(
            turn=7,
            action="take lamp",
            response="Taken.",
            reasoning="Need light.",
            location_before=23,
            location_before_name="Hall",
            location_after=23,
        )
    ]


def test_default_adventurer_prompt_has_its_sections(memory: Any) -> None:
    svc = ContextService(default_builders(memory))
    request = req(recent_turns=turns(), room_text="Hall\nA long hall.", things=["lamp"])
    prompt = svc.assemble("adventurer", request)
    assert [name for name, _ in prompt.sections] == [
        "room_now",
        "last_turn",
        "location_memory",
        "adjacent_memory",
        "top_notes",
    ]
    assert prompt.text.startswith("## The room now\nHall (Location 23)\nA long hall.")
    assert "Things here: lamp" in prompt.text
    assert "## Lessons here\nYou've been here 2 times across 1 episode." in prompt.text
    assert "**Location 24:**" in prompt.text
    assert "You (turn 7, at Hall): take lamp\nWhy: Need light.\nThe game: Taken." in prompt.text
    assert "- [900] Carry lamp: Carry lamp text" in prompt.text


def test_default_narrative_prompt_covers_present_npcs_only(memory: Any) -> None:
    state = GameState(npcs={"troll": NPCInstance(instance_id="troll", name="Troll")})
    svc = ContextService(default_builders(memory, narrative_entries_per_scope=2))
    prompt = svc.assemble("narrative", req(game_state=state, npc_ids_present=["troll"]))
    assert [name for name, _ in prompt.sections] == [
        "recent_location_memory",
        "npc_memory",
        "world_memory",
    ]
    assert "Troll (troll):\n- 2025-03-01 troll met text" in prompt.text
    memory.npc_memories.assert_called_once_with("troll")
    assert "Adjacent" not in prompt.text


def test_default_objective_prompt_adds_extra_sections_only_when_given(memory: Any) -> None:
    svc = ContextService(default_builders(memory))
    bare = svc.assemble("objective", req())
    # seed 000: current and adjacent memories only (no world memories, no global top notes)
    assert [name for name, _ in bare.sections] == ["location_memory", "adjacent_memory"]
    extras = {"map": "Hall -> north -> Attic", "objectives": "Find the lamp", "knowledge": "Grues"}
    full = svc.assemble("objective", req(extra_sections=extras))
    assert [name for name, _ in full.sections] == [
        "location_memory",
        "adjacent_memory",
        "objectives",
        "map",
        "knowledge",
    ]
    assert "## Map\nHall -> north -> Attic" in full.text


def test_settings_reach_the_builders(memory: Any) -> None:
    memory.location_memories.return_value = [
        entry(f"win{i}", category=MemoryCategory.SUCCESS) for i in range(4)
    ]
    svc = ContextService(default_builders(memory, max_successes_shown=2))
    text = svc.assemble("adventurer", req()).text
    assert "win3" in text and "win1" not in text
    assert "(+2 more memories not shown)" in text


def test_reported_costs_match_the_section_texts(memory: Any) -> None:
    svc = ContextService(default_builders(memory))
    prompt = svc.assemble("adventurer", req(recent_turns=turns()))
    blocks = prompt.text.split("\n\n## ")
    assert len(blocks) == len(prompt.sections)
    for (_, tokens), block in zip(prompt.sections, blocks, strict=True):
        body = block.split("\n", 1)[1]
        assert tokens == estimate_tokens(body)
