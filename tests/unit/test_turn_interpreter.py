"""A turn's interpretation as a function (issue 36, item 5): the interactive-fiction rules
(`cairn.fiction.FictionRules`, an `ITurnInterpreter`) read the memories that exist and give
typed changes without writing; the memory service applies them in one unit of work; no model
call happens while the store is locked."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from pytest_mock import MockerFixture

from cairn.adapters.storage.in_memory_store import InMemoryStore
from cairn.adapters.storage.markdown_store import MarkdownMemoryStore
from cairn.agents.rule_based_summarizer import RuleBasedSummarizer
from cairn.agents.scripted import ScriptedAgent
from cairn.errors import ConfigError, StoreError
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import FictionRules, fiction_memory_service
from cairn.models.changes import AddOp, SupersedeOp, TurnChanges, VisitOp
from cairn.models.game import GameState, TurnOutcome
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryScope, MemoryStatus
from cairn.play.runner import run_play
from cairn.services.draft import DraftStore
from cairn.services.map import MapGraph
from cairn.services.memory_service import MemoryService
from cairn.services.policy import MemoryPolicy
from cairn.settings import load_settings
from cairn.testing.fake_game import FakeGame

FAILED = TurnOutcome(
    episode=1,
    turn=3,
    action="open door",
    response="The door is locked.",
    location_before=5,
    location_after=5,
)


def entry(entry_id: str, location_id: int = 5, **fields: Any) -> MemoryEntry:
    return MemoryEntry(
        id=entry_id,
        title=fields.pop("title", entry_id),
        text=fields.pop("text", f"about {entry_id}"),
        scope=MemoryScope.LOCATION,
        location_id=location_id,
        category=fields.pop("category", MemoryCategory.NOTE),
        **fields,
    )


def service(store: InMemoryStore) -> MemoryService:
    return fiction_memory_service(
        store, RuleBasedSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )


def test_the_rules_give_typed_changes_and_write_nothing() -> None:
    store = InMemoryStore()
    svc = service(store)
    rules = svc.interpreter()
    assert isinstance(rules, FictionRules)
    changes = rules.interpret(GameState(), FAILED)
    assert store.entries() == []  # interpreted, not written
    added = [op.entry for op in changes.ops if isinstance(op, AddOp)]
    assert [e.category for e in added] == [MemoryCategory.FAILURE]
    assert changes.entry == added[0]
    assert svc.apply(changes) == added[0]
    assert [e.id for e in store.entries()] == [added[0].id]


def test_record_action_outcome_is_the_rules_then_one_unit(mocker: MockerFixture) -> None:
    store = InMemoryStore()
    svc = service(store)
    commits = mocker.spy(store, "_commit")
    stored = svc.record_action_outcome(GameState(), FAILED)
    assert stored is not None and stored.category is MemoryCategory.FAILURE
    assert commits.call_count == 1


def test_a_service_without_rules_says_so() -> None:
    bare = MemoryService(
        InMemoryStore(), RuleBasedSummarizer(), EventPublisher(), MapGraph(), MemoryPolicy()
    )
    with pytest.raises(ConfigError, match="no turn rules"):
        bare.record_action_outcome(GameState(), FAILED)


def test_the_rules_cannot_write_outside_a_draft() -> None:
    svc = service(InMemoryStore())
    with pytest.raises(RuntimeError, match="only inside a draft"):
        svc.core.draft()


def test_a_draft_shows_its_changes_to_its_reads_and_keeps_the_store_as_it_was() -> None:
    store = InMemoryStore()
    with store.transaction() as tx:
        tx.add(entry("old"))
        tx.add(entry("elsewhere", location_id=9))
    draft = DraftStore(store)
    with draft.transaction() as tx:
        tx.add(entry("new"))
        tx.supersede("old", "new")
        tx.record_visit(5, "Hall", 1)
    visible = frozenset({MemoryStatus.ACTIVE})
    assert [e.id for e in draft.entries(location_id=5, statuses=visible)] == ["new"]
    assert [e.id for e in draft.entries(location_id=5)] == ["old", "new"]
    assert draft.get("old").status is MemoryStatus.SUPERSEDED  # type: ignore[union-attr]
    assert [e.id for e in draft.entries(location_id=9)] == ["elsewhere"]
    assert draft.location(5).visits == 1  # type: ignore[union-attr]
    assert [e.id for e in store.entries(location_id=5, statuses=visible)] == ["old"]
    assert store.location(5).visits == 0  # type: ignore[union-attr]
    changes = draft.changes()
    assert [type(op) for op in changes.ops] == [AddOp, SupersedeOp, VisitOp]


def test_a_draft_block_that_raises_takes_back_what_it_staged() -> None:
    draft = DraftStore(InMemoryStore())
    with draft.transaction() as tx:
        tx.add(entry("kept"))
    with pytest.raises(ValueError), draft.transaction() as tx:
        tx.add(entry("dropped"))
        raise ValueError("the rule failed")
    assert [e.id for e in draft.entries()] == ["kept"]
    assert draft.changes() == TurnChanges(ops=(AddOp(entry("kept")),))
    with pytest.raises(StoreError, match="already exists"), draft.transaction() as tx:
        tx.add(entry("kept"))


def test_no_model_call_waits_on_the_store_or_keeps_it_locked(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    """Every summarizer call of a play (the turn's synthesis, a visit's summary, the world's)
    happens while another thread can still read the store: no unit of work holds it."""
    stores: list[MarkdownMemoryStore] = []
    real_init = MarkdownMemoryStore.__init__

    def init(self: MarkdownMemoryStore, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        stores.append(self)

    mocker.patch.object(MarkdownMemoryStore, "__init__", init)
    blocked: list[str] = []
    calls: list[str] = []

    def checked(name: str) -> Any:
        real = getattr(RuleBasedSummarizer, name)

        def call(self: RuleBasedSummarizer, *args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            read = threading.Thread(target=lambda: stores[-1].entries(), daemon=True)
            read.start()
            read.join(timeout=5)
            if read.is_alive():
                blocked.append(name)
            return real(self, *args, **kwargs)

        return call

    for name in (
        "synthesize",
        "summarize_location_session",
        "summarize_npc_interactions",
        "summarize_world_update",
    ):
        mocker.patch.object(RuleBasedSummarizer, name, checked(name))
    game = FakeGame()
    settings = load_settings(workdir=tmp_path)
    run_play(settings, game=game, agent=ScriptedAgent(game.walkthrough()), episodes=1)
    assert "synthesize" in calls and "summarize_location_session" in calls, calls
    assert blocked == []
