"""Action outcomes: what one turn leaves in memory, routed to the module of its concern.

`TurnRules.record_action_outcome` reads the turn (a win, a dark room, a death, a failure, a
success that did nothing, progress) and hands it on: the failure ledger (`failure_ledger.py`),
deaths and endings (`ending_memories.py`), the summarizer's memory (`synthesis_memories.py`),
LLM-first routing (`llm_first.py`) and map facts (`turn_writes.py`). Each is a set of
functions over the `MemoryCore`.
"""

from __future__ import annotations

from cairn.fiction.arrivals import Arrivals
from cairn.fiction.dark_rooms import dark_hint, dark_lesson, record_dark_room
from cairn.fiction.ending_memories import (
    as_attacker_lesson,
    death_decision,
    death_hint,
    record_win_here,
    win_hint,
    world_ending_hint,
)
from cairn.fiction.failure_ledger import failed_here, qualify, record_failure, retire_failure
from cairn.fiction.llm_first import by_rules
from cairn.fiction.rules_hint import failure_hint, move_hint, qualify_hint, turn_verdict
from cairn.fiction.synthesis_memories import store_decision, synthesize
from cairn.fiction.turn_writes import record_move
from cairn.interfaces.summarizer import SynthesisRequest
from cairn.models.game import GameState, TurnOutcome
from cairn.models.kinds import Trigger
from cairn.models.memory import MemoryEntry
from cairn.services.causes import as_tested, dark_arrival, diagnose
from cairn.services.endings import DeathCause
from cairn.services.memory_core import MemoryCore, log
from cairn.services.memory_rules import move_of, plain_failure, prerequisites, success_of
from cairn.services.outcomes import Verdict, lasting_no_op, verdict
from cairn.services.triggers import LOCATION as LOCATION_TRIGGER
from cairn.services.triggers import LONG_RESPONSE as LONG_RESPONSE_TRIGGER
from cairn.services.triggers import detect_triggers

_MOVE_TRIGGERS = frozenset({LOCATION_TRIGGER, LONG_RESPONSE_TRIGGER})
"""Triggers a new way into a known room fires: a map fact, no summarizer call."""


class TurnRules:
    """What one turn leaves in memory, written through the core's store (a draft, when
    `FictionRules` runs them)."""

    def __init__(self, core: MemoryCore) -> None:
        self._core = core
        """The store, summarizer, publisher, map and policy this shares with the rest of the
        memory service, and the queries over them."""
        self._arrivals = Arrivals()
        """What the game said on arriving in each room this run (a known move's news)."""

    # -- action outcomes ------------------------------------------------------------------

    def record_action_outcome(
        self, game_state: GameState, outcome: TurnOutcome
    ) -> MemoryEntry | None:
        # the recent turns, plus what was done here since arriving that may have opened the way;
        # both read from the game state, which carries the episode's turns
        earlier = game_state.turns
        recent = earlier[-self._core.policy.memory_history_window :] if earlier else []
        history = sorted(
            {t.turn: t for t in [*prerequisites(earlier), *recent]}.values(),
            key=lambda t: (t.episode, t.turn),
        )
        game_state.record_turn(outcome)
        self._cover(game_state, outcome)
        news = self._arrivals.news(outcome)
        source = outcome.location_before
        if source is None:
            log.warning("turn %s: location before the action is unknown; not stored", outcome.turn)
            return None
        if outcome.won:
            return by_rules(
                self._core,
                outcome,
                history,
                self._core.location_memories(source),
                win_hint(outcome),
                lambda: record_win_here(self._core, outcome),
            )
        dark = dark_arrival(outcome)
        if dark is not None and not self._core.summarizer.llm_first:
            # a room the game shows dark is remembered so at once: light before coming back
            record_dark_room(self._core, outcome, dark, died=False)
        elif dark is not None and not outcome.died:
            # with a model, the rules propose that lesson and the model's answer is the turn's
            # memory (a death here is the death's lesson to propose)
            lesson = dark_lesson(self._core, outcome, dark, died=False)
            if lesson is not None:
                existing = self._core.location_memories(source)
                return by_rules(
                    self._core,
                    outcome,
                    history,
                    existing,
                    dark_hint(outcome, lesson, died=False),
                    lambda: record_dark_room(self._core, outcome, dark, died=False, planned=lesson),
                    self._triggers(outcome, existing),
                )
        why = diagnose(outcome, earlier) if outcome.died else None
        if why is not None:
            given = outcome.tests
            why = as_tested(
                why, given.death_by if given is not None else self._core.claims.blame(outcome)
            )
        if why is not None and why.cause in (DeathCause.DARKNESS, DeathCause.LIGHT):
            # the room is the cause, not the command taken there
            death = why
            planned = (
                dark_lesson(self._core, outcome, why) if self._core.summarizer.llm_first else None
            )
            return by_rules(
                self._core,
                outcome,
                history,
                self._core.location_memories(source),
                dark_hint(outcome, planned) if planned is not None else None,
                lambda: record_dark_room(self._core, outcome, death, planned=planned),
            )
        existing = self._core.location_memories(source)
        if why is not None and why.cause is not DeathCause.COMBAT and not why.blames_command:
            # the world's ending, remembered by record_ending, not this command's: offline
            # nothing here; a model may leave the lesson a player could act on
            return by_rules(
                self._core,
                outcome,
                history,
                existing,
                world_ending_hint(why),
                lambda: None,
                self._triggers(outcome, existing),
            )
        if why is not None and self._core.summarizer.llm_first:
            # the command's or an attacker's death: the model sees the rules' danger as a hint;
            # the attacker's lesson is the rules' own memory (what they propose), never a
            # rewrite of the model's answer
            death = why

            def danger() -> MemoryEntry | None:
                entry = store_decision(
                    self._core,
                    outcome,
                    history,
                    existing,
                    death_decision(outcome, existing),
                    death.cause.value,
                )
                if death.cause is DeathCause.COMBAT:
                    return as_attacker_lesson(self._core, entry, outcome, death)
                return entry

            return by_rules(
                self._core,
                outcome,
                history,
                existing,
                death_hint(outcome, why, existing),
                danger,
                self._triggers(outcome, existing),
            )
        found = verdict(outcome)
        if not outcome.died and found in (Verdict.FAILURE, Verdict.NO_OP):
            # one truth per action: a success remembered here says when it did not work
            worked = success_of(existing, outcome.action)
            if worked is not None:
                return by_rules(
                    self._core,
                    outcome,
                    history,
                    existing,
                    qualify_hint(worked, outcome),
                    lambda: qualify(self._core, worked, outcome),
                )
            if plain_failure(outcome) or lasting_no_op(outcome):
                return by_rules(
                    self._core,
                    outcome,
                    history,
                    existing,
                    failure_hint(outcome, existing),
                    lambda: record_failure(self._core, outcome),
                )
            if found is Verdict.NO_OP and not self._core.summarizer.llm_first:
                return None  # it already was so: nothing learned about the place
        reason = why.cause.value if why is not None else None
        entry = self._record_progress(outcome, history, existing, reason, news)
        if why is not None and why.cause is DeathCause.COMBAT:
            return as_attacker_lesson(self._core, entry, outcome, why)
        if found is Verdict.CHANGED and not outcome.died:
            if self._core.summarizer.llm_first:  # the model's answer may have replaced some
                existing = self._core.location_memories(source)
            entry = retire_failure(self._core, outcome, existing, history, entry)
        return entry

    def _record_progress(
        self,
        outcome: TurnOutcome,
        history: list[TurnOutcome],
        existing: list[MemoryEntry],
        death_reason: str | None = None,
        news: list[str] | None = None,
    ) -> MemoryEntry | None:
        """A turn that was no plain failure: a move, a map fact or the summarizer's memory.
        `news`: what a move's answer said that no arrival in its room said before."""
        record = (
            self._core.store.location(outcome.location_after)
            if outcome.location_after is not None
            else None
        )
        first_visit = outcome.moved and (record is None or record.visits <= 1)
        news = news if self._core.summarizer.llm_first else None
        triggers = self._triggers(outcome, existing, news)
        if not triggers:
            return None
        move = move_of(outcome)
        plain_move = move and not first_visit and set(triggers) <= _MOVE_TRIGGERS
        if plain_move and not failed_here(existing, outcome.action):
            return by_rules(
                self._core,
                outcome,
                history,
                existing,
                move_hint(outcome, record.name if record is not None else "", news or []),
                lambda: record_move(self._core, outcome, move),
                triggers,
            )
        hint = turn_verdict(outcome, existing) if self._core.summarizer.llm_first else None
        request = SynthesisRequest(
            outcome=outcome, triggers=triggers, existing=existing, history=history, hint=hint
        )
        decision = synthesize(self._core, request)
        if decision is None:
            return None
        return store_decision(self._core, outcome, history, existing, decision, death_reason)

    def _triggers(
        self, outcome: TurnOutcome, existing: list[MemoryEntry], news: list[str] | None = None
    ) -> list[Trigger]:
        """The triggers the turn fires; a move already remembered from here fires neither the
        room's text nor a long response (old news), unless its answer said something new
        (`news`: with a model, a remembered move with a new outcome reaches it)."""
        record = (
            self._core.store.location(outcome.location_after)
            if outcome.location_after is not None
            else None
        )
        first_visit = outcome.moved and (record is None or record.visits <= 1)
        triggers = detect_triggers(
            outcome,
            first_visit=first_visit,
            long_response_chars=self._core.policy.long_response_chars,
        )
        move = move_of(outcome)
        known = any(
            e.via == move.get("via") and e.leads_to == move.get("leads_to") for e in existing
        )
        if move and not first_visit and known and not news:
            triggers = [t for t in triggers if t not in (LOCATION_TRIGGER, LONG_RESPONSE_TRIGGER)]
        return triggers

    def _cover(self, game_state: GameState, outcome: TurnOutcome) -> None:
        """Mark the turn's own messages (its command and the game's answer) as read."""
        for message in reversed(game_state.conversation_history[-4:]):
            if message.turn != outcome.turn:
                break
            if message.text == outcome.response or message.text == f"> {outcome.action}":
                self._core.covered.add((message.episode, message.index))
