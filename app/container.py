"""The composition root: the only place that knows how cairn's parts are built and wired.

A plain module of the package, `cairn.container` (`from cairn.container import
build_container`). The repository's top-level `container.py`, the design's layout, only
re-exports its names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from cairn.adapters.game.game_opener import GameOpener
from cairn.adapters.llm.factory import (
    build_llm_client,
    circuit_breaker_of,
    list_prices_apply,
)
from cairn.adapters.llm.model_text import model_text_door
from cairn.adapters.llm.prices import price_table
from cairn.adapters.llm.usage import UsageMeter
from cairn.adapters.storage import store_opening
from cairn.adapters.storage.knowledge_file import KnowledgeBase
from cairn.adapters.storage.map_repository import MapFiles
from cairn.agents.adventurer import AdventurerAgent
from cairn.agents.explorer import ExplorerAgent
from cairn.agents.knowledge_writer import KnowledgeWriter
from cairn.agents.memory_retriever import build_memory_retriever
from cairn.agents.memory_toolbox import MemoryToolbox
from cairn.agents.offline_stand_in import StandInWhileDown
from cairn.agents.rule_based_summarizer import RuleBasedSummarizer
from cairn.agents.summarizer import SummarizerAgent
from cairn.events import commands
from cairn.events.bus import MessageBus, OnFirstUse
from cairn.events.handlers import (
    EpisodeHandler,
    GameHandler,
    LocationHandler,
    MemoryHandler,
    NoteHandler,
    QuestHandler,
    TurnHandler,
)
from cairn.events.publisher import EventPublisher
from cairn.fiction.interpreter import FictionRules
from cairn.interfaces.llm import ILLMClient
from cairn.interfaces.store import IMemoryStore
from cairn.interfaces.summarizer import ISummarizer
from cairn.lessons.slot import ClaimSlot
from cairn.play.objectives import (
    LLMObjectiveDiscoverer,
    MemoryObjectiveDiscoverer,
    ObjectiveTracker,
)
from cairn.services.clock import DeterministicClock, SystemClock
from cairn.services.context import ContextService, default_builders
from cairn.services.map import MapGraph
from cairn.services.memory_edits import MemoryEdits
from cairn.services.memory_query import MemoryQueryTools
from cairn.services.memory_service import MemoryService
from cairn.services.no_memory import NoMemory
from cairn.services.policy import MemoryPolicy
from cairn.settings import CairnSettings, load_settings


def _file_in(workdir: str, name: str) -> Path:
    return Path(workdir) / name


def build_summarizer(client: ILLMClient | None) -> ISummarizer:
    """The LLM SummarizerAgent when a client is configured (with the offline heuristics
    standing in while its circuit is open), else the offline heuristics."""
    if client is None:
        return RuleBasedSummarizer()
    return StandInWhileDown(SummarizerAgent(client), RuleBasedSummarizer())


def make_clock(seed: int | None) -> SystemClock:
    """Random ids and wall-clock time, or a DeterministicClock when a seed is configured."""
    return SystemClock() if seed is None else DeterministicClock(seed)


def llm_kind(mode: str) -> str:
    """ "offline" or "llm": what the LLM-mode Selectors switch on."""
    return "offline" if mode == "offline" else "llm"


def memory_kind(use_memory: bool) -> str:
    """ "memory" or "baseline": what the memory Selectors switch on."""
    return "memory" if use_memory else "baseline"


def _context(config: Any, reader: Any, map_view: Any, *, with_memory: bool = True) -> Any:
    """A ContextService provider whose builders read `reader` (the memory service, or NoMemory
    for the baseline) and `map_view` (None: the map comes in the request's extra sections)."""
    return providers.Singleton(
        ContextService,
        providers.Callable(
            default_builders,
            reader,
            max_successes_shown=config.max_successes_shown,
            max_failures_shown=config.max_failures_shown,
            max_other_shown=config.max_other_shown,
            location_memory_max_tokens=config.location_memory_max_tokens,
            narrative_entries_per_scope=config.narrative_entries_per_scope,
            map_graph=map_view,
            map_moves=config.map_moves,
            knowledge_max_tokens=config.knowledge_max_tokens,
            with_memory=with_memory,
        ),
        budget_tokens=config.prompt_token_budget,
        budgets=providers.Dict(objective=config.objective_token_budget),
    )


def _on_first_use(handler: Any, method: str) -> Any:
    """The bus's entry for a handler's method, building the handler when a command first needs
    it: a library write (`cairn.Memory.add`) builds its editor, not the memory service, the map
    it loads or the LLM client."""
    return providers.Callable(OnFirstUse, handler.provider, method)


class Container(containers.DeclarativeContainer):
    """cairn's providers. Clients and stateful services are Singletons (one per container).

    Build order, stated once: store and summarizer first, then MemoryService (needs both),
    then handlers (need MemoryService), then the bus (needs handlers and the store). The
    summarizer never depends on MemoryService, so there is no cycle to break.
    """

    config = providers.Configuration(strict=True)

    publisher = providers.Singleton(EventPublisher)

    clock = providers.Singleton(make_clock, config.deterministic_seed)

    store = providers.Selector(
        config.store,
        markdown=providers.Singleton(
            store_opening.markdown_store,
            config.workdir,
            config.memory_file,
            config.backup_count,
            config.lock_timeout,
            clock,
        ),
        sqlite=providers.Singleton(
            store_opening.sqlite_store, config.workdir, config.sqlite_file, clock
        ),
        postgres=providers.Singleton(
            store_opening.postgres_store,
            config.database_url,
            config.memory_space,
            config.statement_timeout,
            config.reconnect_timeout,
        ),
    )

    usage_meter = providers.Singleton(
        UsageMeter,
        prices=providers.Callable(
            price_table,
            config.llm_prices,
            list_prices=providers.Callable(
                list_prices_apply, config.llm, config.llm_api, config.openai_base_url
            ),
        ),
    )

    llm_client = providers.Singleton(
        build_llm_client,
        config.llm,
        models=config.models,
        base_url=config.llm_base_url,
        timeout=config.llm_timeout,
        max_retries=config.llm_max_retries,
        log_path=providers.Callable(_file_in, config.workdir, config.llm_log_file),
        meter=usage_meter,
        api=config.llm_api,
        openai_models=config.openai_models,
        openai_base_url=config.openai_base_url,
        openai_api_key=config.openai_api_key,
        max_retry_after=config.llm_max_retry_after,
    )

    circuit_breaker = providers.Singleton(circuit_breaker_of, llm_client)
    """The LLM client's circuit breaker, for the report (None offline and on a replay)."""

    model_answers = providers.Singleton(model_text_door, llm_client)
    """The LLM client behind the door where model text enters cairn: every part that asks a
    model gets its answers without reasoning blocks (`<thinking>`, `<think>`...)."""

    summarizer = providers.Singleton(build_summarizer, model_answers)

    map_files = providers.Singleton(MapFiles, config.workdir, config.map_file)
    """map.json (the map the run starts from and saves) and map.mmd."""
    map_graph = providers.Singleton(MapGraph.from_snapshot, map_files.provided.load.call())

    policy = providers.Singleton(MemoryPolicy.from_settings, config)

    claim_tests = providers.Singleton(ClaimSlot)
    """Where a play or replay session attaches its game's claim tester (issue 36): the memory
    service asks it about a lesson's claims before keeping them."""

    # A Singleton, not a Factory: it holds the per-episode history window for synthesis.
    memory_service = providers.Singleton(
        MemoryService,
        store=store,
        summarizer=summarizer,
        publisher=publisher,
        map_graph=map_graph,
        policy=policy,
        clock=clock,
        claims=claim_tests,
        # what a turn leaves in memory: the interactive-fiction rules (an ITurnInterpreter)
        rules=providers.Object(FictionRules),
    )

    # The memory query tools: the `query` model ranks and summarizes when an LLM is
    # configured (lexical offline). A Singleton: it counts the query model's failures.
    memory_retriever = providers.Singleton(build_memory_retriever, model_answers)
    memory_query_tools = providers.Singleton(
        MemoryQueryTools, memory_service, retriever=memory_retriever
    )

    location_handler = providers.Singleton(LocationHandler, memory_service, publisher, store)
    quest_handler = providers.Singleton(QuestHandler, memory_service, store)
    turn_handler = providers.Singleton(
        TurnHandler, memory_service.provided.interpreter.call(), store
    )
    note_handler = providers.Singleton(NoteHandler, memory_service)
    episode_handler = providers.Singleton(EpisodeHandler, memory_service, publisher)
    game_handler = providers.Singleton(GameHandler, memory_service)  # (IMemoryCheckpoints)
    # the library's and an import's writes (IMemoryEditor), through the same bus as play's
    memory_editor = providers.Singleton(MemoryEdits, store, publisher)
    memory_handler = providers.Singleton(MemoryHandler, memory_editor)

    bus = providers.Singleton(
        MessageBus,
        handlers=providers.Dict(
            {
                commands.ChangeLocation: _on_first_use(location_handler, "change_location"),
                commands.UpdateLocationState: _on_first_use(
                    location_handler, "update_location_state"
                ),
                commands.CompleteObjective: _on_first_use(quest_handler, "complete_objective"),
                commands.CompleteQuest: _on_first_use(quest_handler, "complete_quest"),
                commands.ProgressAct: _on_first_use(quest_handler, "progress_act"),
                commands.RecordTurn: _on_first_use(turn_handler, "record_turn"),
                commands.RememberNote: _on_first_use(note_handler, "remember_note"),
                commands.EndEpisode: _on_first_use(episode_handler, "end_episode"),
                commands.SaveGame: _on_first_use(game_handler, "save_game"),
                commands.RestoreGame: _on_first_use(game_handler, "restore_game"),
                commands.AddMemory: _on_first_use(memory_handler, "add_memory"),
                commands.UpdateMemory: _on_first_use(memory_handler, "update_memory"),
                commands.ForgetMemory: _on_first_use(memory_handler, "forget_memory"),
                commands.ImportMemories: _on_first_use(memory_handler, "import_memories"),
            }
        ),
        store=store,
        publisher=publisher,
    )

    context_service = _context(config, memory_service, map_graph)
    episode_map = providers.Singleton(MapGraph)
    """The map that lives one episode: the baseline's objectives route over it."""
    # The --no-memory baseline, by wiring: its builders read NoMemory (every query answers
    # nothing) and only the episode's own map, so no baseline prompt can show a memory.
    baseline_context_service = _context(
        config, providers.Singleton(NoMemory), episode_map, with_memory=False
    )

    # -- one play run: agent, objectives, knowledge base, chosen by the LLM mode and memory ----
    _llm = providers.Callable(llm_kind, config.llm)
    _memory = providers.Callable(memory_kind, config.use_memory)
    run_context = providers.Selector(
        _memory, memory=context_service, baseline=baseline_context_service
    )
    objective_map = providers.Selector(_memory, memory=map_graph, baseline=episode_map)
    explorer = providers.Factory(ExplorerAgent, seed=config.play_seed)
    toolbox = providers.Selector(
        _memory,
        memory=providers.Factory(MemoryToolbox, memory_query_tools),
        baseline=providers.Object(None),
    )
    agent = providers.Selector(
        _llm,
        offline=explorer,
        llm=providers.Factory(
            AdventurerAgent,
            model_answers,
            fallback=explorer,
            toolbox=toolbox,
            failures=usage_meter,
        ),
    )
    _rule_objectives = providers.Factory(
        MemoryObjectiveDiscoverer,
        providers.Selector(_memory, memory=memory_service, baseline=providers.Object(None)),
        objective_map,
    )
    objective_discoverer = providers.Selector(
        _llm,
        offline=_rule_objectives,
        llm=providers.Factory(
            LLMObjectiveDiscoverer,
            model_answers,
            run_context,
            fallback=_rule_objectives,
        ),
    )
    objective_tracker = providers.Factory(ObjectiveTracker, objective_discoverer)
    knowledge_base = providers.Factory(
        KnowledgeBase,
        providers.Callable(_file_in, config.workdir, config.knowledge_file),
        writer=providers.Selector(
            _llm,
            offline=providers.Object(None),
            llm=providers.Singleton(KnowledgeWriter, model_answers),
        ),
    )
    game_opener = providers.Singleton(
        GameOpener,
        config.game_npcs,
        config.demo_seed,
        config.play_seed,
        config.story_load_timeout,
    )
    """Opens the story file a run names, or the demo world."""


def build_container(
    settings: CairnSettings | None = None,
    *,
    store: IMemoryStore | str | None = None,
    summarizer: ISummarizer | None = None,
    llm: ILLMClient | str | None = None,
    **overrides: object,
) -> Container:
    """Build a container from settings (loaded from pyproject/env/`overrides` when not given).

    Parts may be given as instances, so tests and engines need no dependency-injector
    knowledge: `store` (e.g. `cairn.testing.InMemoryStore()`; a string is the `store` setting),
    `summarizer` (e.g. `cairn.testing.FakeSummarizer()`), `llm` (an `ILLMClient`; a string is
    the `llm` setting: "offline", "anthropic", "cassette:PATH", ...). Everything else is built
    from settings; string settings given here apply only when `settings` is not given.
    """
    if isinstance(llm, str):
        overrides["llm"] = llm
    if isinstance(store, str):
        overrides["store"] = store
    container = Container()
    settings = settings or load_settings(**overrides)
    if llm is not None and not isinstance(llm, str):
        # an LLM client given as an instance: the LLM-backed agents use it
        settings = settings.model_copy(update={"llm": "instance"})
        container.llm_client.override(providers.Object(llm))
    container.config.from_pydantic(settings)
    if store is not None and not isinstance(store, str):
        container.store.override(providers.Object(store))
    if summarizer is not None:
        container.summarizer.override(providers.Object(summarizer))
    return container

