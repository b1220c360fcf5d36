"""PlaySession: episodes of turns of one game, driven by an agent, remembered through the bus."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from cairn.compact_json import compact_json
from cairn.events import commands as c
from cairn.events.bus import MessageBus
from cairn.interfaces.agent import EMPTY_COMMAND, AgentDecision, AgentView, IAgent
from cairn.interfaces.game import GameObservation, IGame
from cairn.interfaces.knowledge import IKnowledgeBase
from cairn.interfaces.memory_service import IMemoryReader
from cairn.interfaces.metrics import UsageReader
from cairn.lessons.slot import ClaimSlot
from cairn.lessons.tester import ClaimTester
from cairn.models.episode import EpisodeStats
from cairn.models.game import GameState, TurnOutcome
from cairn.models.kinds import PromptKind
from cairn.models.memory import MemoryScope
from cairn.play.objective_refresh import RefreshWatch
from cairn.play.objectives import ObjectiveInput, ObjectiveTracker
from cairn.play.room_watch import RoomWatch
from cairn.play.saves import NOTHING_SAVED_TEXT, SAVE, SaveSlot, save_command
from cairn.play.translator import StepTranslator, turn_outcome
from cairn.services.context.builders import ContextRequest
from cairn.services.context.context_service import AssembledPrompt, ContextService
from cairn.services.map import MapGraph, exits_in_text, normalize_direction
from cairn.services.outcomes import Verdict, verdict

log = logging.getLogger(__name__)

LOCATION_SECTION = "location_memory"
NOTES_SECTION = "top_notes"
ADJACENT_SECTION = "adjacent_memory"


@dataclass
class PlayOptions:
    """How to play: episodes, turn limit, memory on or off (the baseline), objective cadence."""

    episodes: int = 3
    max_turns: int = 100
    use_memory: bool = True
    objective_every: int = 20
    reasoning_turns: int = 3


@dataclass
class _Episode:
    """Per-episode state: it resets at every episode; memories and the map do not."""

    number: int
    state: GameState
    stats: EpisodeStats
    local_map: MapGraph = field(default_factory=MapGraph)
    tried: dict[int | None, dict[str, bool]] = field(default_factory=dict)
    scored: set[tuple[int, str]] = field(default_factory=set)
    turns: list[TurnOutcome] = field(default_factory=list)
    visited: set[int] = field(default_factory=set)
    room_text: dict[int, str] = field(default_factory=dict)
    route: str = ""
    """The knowledge base's route section as the episode began (rewritten at its end)."""


class PlaySession:
    """Plays episodes; every turn goes through the bus so memories are made the usual way."""

    def __init__(
        self,
        *,
        game: IGame,
        agent: IAgent,
        bus: MessageBus,
        memory: IMemoryReader,
        context: ContextService,
        map_graph: MapGraph,
        objectives: ObjectiveTracker,
        knowledge: IKnowledgeBase,
        options: PlayOptions,
        meter: UsageReader | None = None,
        transcript: TextIO | None = None,
        summarizer_counts: Callable[[], dict[str, int]] = dict,
        episode_map: MapGraph | None = None,
        on_turn: Callable[[int, int, GameObservation], None] | None = None,
        should_stop: Callable[[], bool] = lambda: False,
        claims: ClaimSlot | None = None,
    ) -> None:
        self._game = game
        self._agent = agent
        self._bus = bus
        self._memory = memory
        self._context = context
        self._map = map_graph
        self._objectives = objectives
        self._knowledge = knowledge
        self._options = options
        self._meter = meter
        self._transcript = transcript
        self._summarizer_counts = summarizer_counts
        self._episode_map = episode_map
        """The map that lives one episode (the baseline's objectives route over it too)."""
        self._on_turn = on_turn
        self._should_stop = should_stop
        """Asked after every turn: True ends the episode there (Ctrl-C), cleanly."""
        self.failed_pairs: set[tuple[int | None, str]] = set()
        self.visited_ids: set[int] = set()
        self._translator = StepTranslator(bus)
        self._episode: _Episode | None = None
        self._tester = ClaimTester(game)
        """Asks the game about a turn's claims before its lesson is written."""
        self._claims = claims
        """Where the memory service asks (the tester is attached to it each episode)."""
        self._saves = SaveSlot(bus, game)
        """The episode's `save` (an agent's `save` / `restore`, see `saves.py`)."""
        self._rooms = RoomWatch(game)
        """The room's own words now, for the prompt (the game's `look` when needed)."""
        self._refresh = RefreshWatch(options.objective_every)
        """When the objectives are discovered again (schedule, score, one-way events)."""

    # -- episodes -----------------------------------------------------------------------------

    def play_episode(self, number: int) -> EpisodeStats:
        """Play one episode from a reset; return its figures."""
        ep = _Episode(number, GameState(episode=number), EpisodeStats(episode=number))
        if self._episode_map is not None:
            self._episode_map.clear()
            ep.local_map = self._episode_map
        self._agent.new_episode(number)
        self._objectives.new_episode()
        self._rooms.new_episode()
        self._refresh.new_episode()
        ep.route = self._knowledge.route() if self._options.use_memory else ""
        llm_before = self._llm_calls()
        failures_before = self._llm_failures()
        calls_before = dict(self._summarizer_counts())
        self._episode = ep
        self._tester.restart()
        if self._claims is not None:
            self._claims.attach(self._tester)
        self._translator = StepTranslator(
            self._bus, on_arrive=self._arrived, follow=self._tester.follow
        )
        self._saves = SaveSlot(self._bus, self._game)
        obs = self._translator.start(ep.state, self._game.reset())
        for turn in range(1, self._options.max_turns + 1):
            ep.state.turn = turn
            # each command of the turn is its own unit of work (the bus's): the agent's and the
            # summarizer's model calls happen outside any of them, with the store unlocked; the
            # store looks for others' writes once a turn (and at each commit), not once a read
            with self._bus.steady():
                if self._refresh.due(turn) is not None:  # schedule, score, one-way event
                    self._rediscover(ep, obs)
                obs = self._turn(ep, obs, turn)
            self._saves.settle(ep.state)  # a `save`'s checkpoint was taken at that commit
            if obs.score is not None:
                ep.stats.best_score = max(obs.score, ep.stats.best_score or obs.score)
            if self._on_turn is not None:
                self._on_turn(number, turn, obs)
            if obs.done or self._should_stop():
                break
        ep.stats.turns = ep.state.turn
        ep.stats.score, ep.stats.max_score = obs.score, obs.max_score
        ep.stats.won = obs.won
        ep.stats.died = (ep.stats.died or obs.died) and not obs.won
        self._translator.finish(ep.state, obs)
        ep.stats.unknown_location_turns = self._translator.track.unknown_location_turns
        # the knowledge update may call the model: before the episode's LLM figures are taken
        self._knowledge.update(self._memory, ep.stats, self._game.name)
        self._finish_stats(ep, llm_before, failures_before, calls_before)
        return ep.stats

    def _finish_stats(
        self, ep: _Episode, llm_before: int, failures_before: int, calls_before: dict[str, int]
    ) -> None:
        stats = ep.stats
        stats.locations_visited = len(ep.visited)
        stats.locations_with_memory = sum(
            1 for loc in ep.visited if self._memory.location_memories(loc)
        )
        stats.llm_calls = self._llm_calls() - llm_before
        stats.llm_failures = self._llm_failures() - failures_before
        calls = self._summarizer_counts()
        stats.summarizer_calls_by_kind = {
            kind: calls.get(kind, 0) - calls_before.get(kind, 0) for kind in sorted(calls)
        }
        stats.synthesis_calls = stats.summarizer_calls_by_kind.get("synthesis", 0)
        stats.objectives_discovered = self._objectives.discovered
        stats.objectives_completed = len(self._objectives.completed)
        stats.finish()

    # -- one turn -----------------------------------------------------------------------------

    def _turn(self, ep: _Episode, obs: GameObservation, turn: int) -> GameObservation:
        before = obs
        prompt = self._prompt(ep, before)
        location_tokens = dict(prompt.sections).get(LOCATION_SECTION, 0)
        ep.stats.location_memory_tokens_max = max(
            ep.stats.location_memory_tokens_max, location_tokens
        )
        decision = self._agent.decide(self._view(ep, before, prompt, turn))
        ep.stats.context_tokens.append(context_tokens(decision, prompt))
        ep.stats.stand_in_turns += int(decision.stand_in)
        action = (
            ""
            if decision.action == EMPTY_COMMAND
            else " ".join(decision.action.strip().split()) or "look"
        )
        pair = (before.location_id, action.lower())
        ep.stats.actions += 1
        if (command := save_command(action)) is not None:
            return self._save_or_restore(ep, before, turn, command, decision, prompt)
        retried = pair in self.failed_pairs
        self._translator.player(ep.state, action)
        raw = self._game.step(action)
        if raw.died:
            ep.stats.died = True
        after, outcome = self._translator.step(
            ep.state, turn, action, before, raw, decision.reasoning
        )
        failed = self._is_failed(outcome)
        if retried:
            ep.stats.retried_failed_actions += 1
            ep.stats.repeated_failed_actions += int(failed)
        ep.tried.setdefault(before.location_id, {})[action.lower()] = failed
        if failed:
            self.failed_pairs.add(pair)
        if raw.location_id is not None:
            self._update_maps(ep, before, after, action, failed)
            if not after.died and after.location_id is not None:
                self._visit(ep, after.location_id)  # alive where a death had put the player
            here = after.location_id
            if here is not None and here == before.location_id:
                # what the player has seen here this visit: objects revealed stay visible
                ep.room_text[here] = f"{ep.room_text.get(here, '')}\n{after.text}"
        ep.turns.append(outcome)
        if decision.remember:
            where = None if decision.remember_everywhere else before.location_id
            self._bus.handle(
                c.RememberNote(
                    ep.state,
                    decision.remember,
                    decision.importance,
                    where,
                    world=decision.remember_everywhere,
                    tags=tuple(decision.remember_tags),
                    ways_in=tuple(decision.remember_ways_in),
                )
            )
        self._score_events(ep, outcome, turn)
        self._write_transcript(ep, outcome, decision, after, prompt)
        return after

    def _save_or_restore(
        self,
        ep: _Episode,
        before: GameObservation,
        turn: int,
        command: str,
        decision: AgentDecision,
        prompt: AssembledPrompt,
    ) -> GameObservation:
        """`save` / `restore` (`saves.py`): the game's state and memory's checkpoint, no game
        turn; the agent sees the answer in its recent turns."""
        if command == SAVE:
            after = self._saves.save(ep.state, self._translator.track, before)
        else:
            back = self._saves.restore(before)
            if back is None:
                after = before.model_copy(
                    update={"text": NOTHING_SAVED_TEXT, "world_changed": False}
                )
            else:
                ep.state, self._translator.track, after = back
                self._tester.restart()
        outcome = turn_outcome(ep.number, turn, command, before, after, decision.reasoning)
        ep.turns.append(outcome)
        self._write_transcript(ep, outcome, decision, after, prompt)
        return after

    @staticmethod
    def _is_failed(outcome: TurnOutcome) -> bool:
        """A death, or a turn that did nothing and was refused or had nothing left to do (a
        polite "no need" or "already" is no success): `outcomes.verdict`, state first."""
        if outcome.died:
            return True
        return verdict(outcome) in (Verdict.FAILURE, Verdict.NO_OP)

    def _score_events(self, ep: _Episode, outcome: TurnOutcome, turn: int) -> None:
        self._refresh.observe(outcome)  # a score change or a one-way event: new objectives
        gain = outcome.score_delta
        done = self._objectives.observe(
            turn, outcome.location_before, outcome.location_after, outcome.action, gain
        )
        for objective in done:
            log.info("objective completed at turn %d: %s", turn, objective.text)
        if gain > 0:
            if ep.stats.turns_to_first_score is None:
                ep.stats.turns_to_first_score = turn
            if outcome.location_before is not None:
                ep.scored.add((outcome.location_before, outcome.action))

    # -- location and map ---------------------------------------------------------------------

    def _arrived(self, obs: GameObservation, via: str | None) -> None:
        """After ChangeLocation (the translator's hook): the episode's and the map's view."""
        ep = self._episode
        if ep is None or obs.location_id is None:
            return
        if not obs.died:  # a room a death put the player in is no room reached
            self._visit(ep, obs.location_id)
        ep.room_text[obs.location_id] = obs.text
        for graph in (self._map, ep.local_map):
            graph.set_name(obs.location_id, obs.location_name)
            graph.record_visit(obs.location_id)
            graph.note_exits(obs.location_id, exits_in_text(obs.text))

    def _visit(self, ep: _Episode, room: int) -> None:
        """The player is alive in `room`: it counts as reached (the episode's and the run's)."""
        ep.visited.add(room)
        self.visited_ids.add(room)

    def _update_maps(
        self,
        ep: _Episode,
        before: GameObservation,
        after: GameObservation,
        action: str,
        failed: bool,
    ) -> None:
        src, dst = before.location_id, after.location_id
        if src is None:
            return
        direction = normalize_direction(action)
        if dst is not None and dst != src:
            # the persistent map learns moves through ChangeLocation (MemoryService); a death
            # that moved the player (a resurrection elsewhere) is no way between the rooms
            if not after.died:
                ep.local_map.add_connection(src, dst, action=action)
        elif direction is not None and (dst == src or failed):
            # a direction that did not move the player is no exit (now): stop suggesting it
            for graph in (self._map, ep.local_map):
                graph.mark_failed_exit(src, direction)

    # -- what the agent sees ------------------------------------------------------------------

    def _request(self, ep: _Episode, obs: GameObservation) -> ContextRequest:
        room = self._rooms.text(obs)
        if obs.location_id is not None and room:  # a look names exits a brief text does not
            for graph in (self._map, ep.local_map):
                graph.note_exits(obs.location_id, exits_in_text(room))
        return ContextRequest(
            game_state=ep.state,
            location_id=obs.location_id,
            location_name=obs.location_name,
            npc_ids_present=obs.npcs_present,
            recent_turns=ep.turns[-self._options.reasoning_turns * 3 :],
            extra_sections={
                "objectives": "\n".join(f"- {t}" for t in self._objectives.texts()),
                "route": ep.route,
            },
            game_text=obs.text,
            room_text=room,
            things=obs.objects,
        )

    def _prompt(self, ep: _Episode, obs: GameObservation) -> AssembledPrompt:
        # the baseline's context service reads NoMemory (container wiring): same request
        return self._context.assemble(PromptKind.ADVENTURER, self._request(ep, obs))

    def _view(
        self, ep: _Episode, obs: GameObservation, prompt: AssembledPrompt, turn: int
    ) -> AgentView:
        graph = self._map if self._options.use_memory else ep.local_map
        here = obs.location_id
        # The offline player reads what the prompt shows, in structured form: the memories of
        # the location section, of the adjacent section and the notes of the top-notes
        # section, nothing else.
        shown = prompt.memory_ids
        in_location = set(shown.get(LOCATION_SECTION, ()))
        memories = (
            [m for m in self._memory.location_memories(here) if m.id in in_location]
            if here is not None and in_location
            else []
        )
        in_notes = shown.get(NOTES_SECTION, ())
        world_notes = [
            m for m in self._memory.memories_by_id(in_notes) if m.scope is MemoryScope.WORLD
        ]
        in_adjacent = set(shown.get(ADJACENT_SECTION, ()))
        nearby = (
            [
                m
                for room in self._memory.adjacent_memories(here).values()
                for m in room
                if m.id in in_adjacent
            ]
            if here is not None and in_adjacent
            else []
        )
        target = self._objectives.target()
        to_target = graph.route(here, target) if here is not None and target is not None else None
        nearest = graph.nearest_unexplored(here) if here is not None else None
        return AgentView(
            episode=ep.number,
            turn=turn,
            max_turns=self._options.max_turns,
            observation=obs,
            prompt=prompt.text,
            room_text=ep.room_text.get(here, "") if here is not None else "",
            memories=memories,
            world_notes=world_notes,
            nearby=nearby,
            objectives=self._objectives.texts(),
            tried_here=dict(ep.tried.get(here, {})),
            unexplored_exits=graph.unexplored_exits(here) if here is not None else [],
            route_to_target=to_target or [],
            route_to_unexplored=nearest[1] if nearest else [],
            vocabulary=self._game.vocabulary(),
        )

    def _rediscover(self, ep: _Episode, obs: GameObservation) -> None:
        request = self._request(ep, obs)
        recent = "\n".join(f"> {t.action}\n{t.response.strip()[:200]}" for t in ep.turns[-5:])
        if not ep.turns:  # the first discovery sees what the player sees: the game's opening
            recent = f"(the game's opening)\n{obs.text.strip()}"
        self._objectives.rediscover(
            ObjectiveInput(
                request=request,
                turn=ep.state.turn,
                score=obs.score,
                inventory=obs.inventory,
                done_here=ep.scored,
                knowledge=self._knowledge.read() if self._options.use_memory else "",
                recent_gameplay=recent,
            )
        )

    # -- records ------------------------------------------------------------------------------

    def _write_transcript(
        self,
        ep: _Episode,
        outcome: TurnOutcome,
        decision: AgentDecision,
        after: GameObservation,
        prompt: AssembledPrompt,
    ) -> None:
        if self._transcript is None:
            return
        line: dict[str, Any] = {
            "episode": ep.number,
            "turn": outcome.turn,
            "location_before": outcome.location_before,
            "action": outcome.action,
            "reasoning": decision.reasoning,
            "remember": decision.remember,
            "response": outcome.response,
            "location_after": outcome.location_after,
            "location_after_name": outcome.location_after_name,
            "score": after.score,
            "inventory": after.inventory,
            "died": after.died,
            "won": after.won,
            "context_tokens": context_tokens(decision, prompt),
            "stand_in": decision.stand_in,
            "context_sections": prompt.sections,
            "objectives": self._objectives.texts(),
        }
        self._transcript.write(compact_json(line).decode() + "\n")
        self._transcript.flush()

    def _llm_calls(self) -> int:
        return int(self._meter.snapshot()["calls"]) if self._meter is not None else 0

    def _llm_failures(self) -> int:
        return int(self._meter.snapshot()["failures"]) if self._meter is not None else 0


def context_tokens(decision: AgentDecision, prompt: AssembledPrompt) -> int:
    """A turn's context size: the whole model request the decision was asked with (system
    prompt, tools, messages), or the prompt when no model was asked (the offline player)."""
    return prompt.total_tokens if decision.request_tokens is None else decision.request_tokens


def transcript_path(workdir: Path, run_id: str) -> Path:
    """`runs/<id>/transcript.jsonl` inside the workdir."""
    return workdir / "runs" / run_id / "transcript.jsonl"
