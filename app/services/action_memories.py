"""Action outcomes: endings, the failure ledger, map facts, synthesis, notes and pruning."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cairn.errors import SummarizerError
from cairn.events import events
from cairn.interfaces.summarizer import RulesVerdict, SynthesisRequest
from cairn.models.game import GameState, TurnOutcome
from cairn.models.kinds import WorldEvent
from cairn.models.memory import (
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
    SynthesisDecision,
)
from cairn.services import policy as pruning
from cairn.services.causes import (
    DARK_TAG,
    LESSON_TAG,
    Diagnosis,
    attacker_lesson_text,
    attacker_lesson_title,
    blamed_command,
    dark_arrival,
    dark_lesson_text,
    dark_lesson_title,
    dark_words,
    death_words,
    diagnose,
    ends_in_death,
    is_move,
    with_death,
    with_ways_in,
)
from cairn.services.endings import CAUSE_WORDS, DeathCause, ending_text
from cairn.services.memory_core import VISIBLE, MemoryCore, log
from cairn.services.memory_rules import (
    adds_content,
    ledger_of,
    location_name,
    move_of,
    plain_failure,
    prerequisites,
    success_of,
)
from cairn.services.outcomes import (
    Verdict,
    action_key,
    failed_commands,
    failure_text,
    failure_title,
    lasting_no_op,
    later_note,
    ledger_answer,
    ledger_key,
    normalize_command,
    procedure_steps,
    said,
    verdict,
    why_not,
    with_note,
    with_steps,
)
from cairn.services.preconditions import needed_items, with_needs
from cairn.services.replies import is_junk
from cairn.services.rules_hint import failure_hint, move_hint, qualify_hint, turn_verdict
from cairn.services.similarity import is_similar, short_title
from cairn.services.supersession import resolve
from cairn.services.triggers import LOCATION as LOCATION_TRIGGER
from cairn.services.triggers import LONG_RESPONSE as LONG_RESPONSE_TRIGGER
from cairn.services.triggers import detect_triggers

_MOVE_TRIGGERS = frozenset({LOCATION_TRIGGER, LONG_RESPONSE_TRIGGER})
"""Triggers a new way into a known room fires: a map fact, no summarizer call."""


class ActionMemories(MemoryCore):
    """What one turn, an agent's note or the end of an episode leaves in memory."""

    # -- action outcomes ------------------------------------------------------------------

    def record_action_outcome(
        self, game_state: GameState, outcome: TurnOutcome
    ) -> MemoryEntry | None:
        # the recent turns, plus what was done here since arriving that may have opened the way;
        # both read from the game state, which carries the episode's turns
        earlier = game_state.turns
        recent = earlier[-self._policy.memory_history_window :] if earlier else []
        history = sorted(
            {t.turn: t for t in [*prerequisites(earlier), *recent]}.values(),
            key=lambda t: (t.episode, t.turn),
        )
        game_state.record_turn(outcome)
        self._cover(game_state, outcome)
        source = outcome.location_before
        if source is None:
            log.warning("turn %s: location before the action is unknown; not stored", outcome.turn)
            return None
        if outcome.won:
            return self._record_win_here(outcome)
        dark = dark_arrival(outcome)
        if dark is not None:
            # a room the game shows dark is remembered so at once: light before coming back
            self._record_dark_room(outcome, dark, died=False)
        why = diagnose(outcome, earlier) if outcome.died else None
        if why is not None and why.cause in (DeathCause.DARKNESS, DeathCause.LIGHT):
            # the room is the cause, not the command taken there
            return self._by_rules(
                outcome,
                history,
                self.location_memories(source),
                self._dark_hint(outcome, why),
                lambda: self._record_dark_room(outcome, why),
            )
        if why is not None and why.cause is not DeathCause.COMBAT and not why.blames_command:
            return None  # the world's ending, remembered by record_ending, not this command's
        existing = self.location_memories(source)
        found = verdict(outcome)
        if not outcome.died and found in (Verdict.FAILURE, Verdict.NO_OP):
            # one truth per action: a success remembered here says when it did not work
            worked = success_of(existing, outcome.action)
            if worked is not None:
                return self._by_rules(
                    outcome,
                    history,
                    existing,
                    qualify_hint(worked, outcome),
                    lambda: self._qualify(worked, outcome),
                )
            if plain_failure(outcome) or lasting_no_op(outcome):
                return self._by_rules(
                    outcome,
                    history,
                    existing,
                    failure_hint(outcome, existing),
                    lambda: self._record_failure(outcome),
                )
            if found is Verdict.NO_OP and not self._summarizer.llm_first:
                return None  # it already was so: nothing learned about the place
        entry = self._record_progress(outcome, history, existing)
        if why is not None and why.cause is DeathCause.COMBAT:
            return self._as_attacker_lesson(entry, outcome, why)
        if found is Verdict.CHANGED and not outcome.died:
            if self._summarizer.llm_first:  # the model's answer may have replaced some
                existing = self.location_memories(source)
            entry = self._retire_failure(outcome, existing, history, entry)
        return entry

    # -- LLM-first: with a model, the rules' verdict is a hint --------------------------------

    def _by_rules(
        self,
        outcome: TurnOutcome,
        history: list[TurnOutcome],
        existing: list[MemoryEntry],
        hint: RulesVerdict | None,
        write: Callable[[], MemoryEntry | None],
        triggers: Sequence[str] = (),
    ) -> MemoryEntry | None:
        """A turn the rules write themselves (a failure, a success that did nothing this time,
        a new way between known rooms). Offline, `write` does it. With a model
        (`ISummarizer.llm_first`), the summarizer decides, `hint` (what the rules make of the
        turn and the memory they would write) shown to it: an answer that repeats the rules'
        memory word for word keeps `write`'s, plus what else it supersedes (a TENTATIVE guess
        this turn contradicts); another answer is stored as synthesis stores it. When the model
        fails, the rules decide alone (`write`)."""
        if hint is None or not self._summarizer.llm_first:
            return write()
        fired = list(triggers) or detect_triggers(
            outcome, first_visit=False, long_response_chars=self._policy.long_response_chars
        )
        request = SynthesisRequest(
            outcome=outcome, triggers=fired, existing=existing, history=history, hint=hint
        )
        decision = self._synthesize(request)
        if decision is None:
            return write()
        if not hint.agrees(decision):
            return self._store_decision(outcome, history, existing, decision)
        entry = write()
        if entry is None:
            return None
        resolution = resolve(decision, existing, self._policy.max_supersessions)
        assert outcome.location_before is not None
        visible = {e.id for e in self.location_memories(outcome.location_before)} - {entry.id}
        supersede = [i for i in resolution.supersede if i in visible]
        invalidate = [i for i in resolution.invalidate if i in visible and i not in supersede]
        if supersede or invalidate:
            with self._store.transaction() as tx:
                for old_id in supersede:
                    tx.supersede(old_id, entry.id)
                    tx.after_commit(self._superseded_callback(old_id, entry.id))
                for old_id in invalidate:
                    tx.supersede(old_id, None)
        return entry

    def _synthesize(self, request: SynthesisRequest) -> SynthesisDecision | None:
        """The summarizer's decision on a turn, counted; None when it failed (logged, counted
        and published as a summary failure)."""
        self.summarizer_calls["synthesis"] += 1
        log.debug(
            "turn %s: synthesis for triggers %s", request.outcome.turn, ", ".join(request.triggers)
        )
        try:
            return self._summarizer.synthesize(request)
        except SummarizerError as exc:  # a programming error is not a summary that failed
            self._failed("synthesis", exc)
            return None

    def _record_progress(
        self, outcome: TurnOutcome, history: list[TurnOutcome], existing: list[MemoryEntry]
    ) -> MemoryEntry | None:
        """A turn that was no plain failure: a move, a map fact or the summarizer's memory."""
        source = outcome.location_before
        assert source is not None
        record = (
            self._store.location(outcome.location_after)
            if outcome.location_after is not None
            else None
        )
        first_visit = outcome.moved and (record is None or record.visits <= 1)
        triggers = detect_triggers(
            outcome, first_visit=first_visit, long_response_chars=self._policy.long_response_chars
        )
        move = move_of(outcome)
        known = any(
            e.via == move.get("via") and e.leads_to == move.get("leads_to") for e in existing
        )
        if move and not first_visit and known:
            # A move already remembered from here: the room text that follows is old news.
            triggers = [t for t in triggers if t not in (LOCATION_TRIGGER, LONG_RESPONSE_TRIGGER)]
        if not triggers:
            return None
        plain_move = move and not first_visit and set(triggers) <= _MOVE_TRIGGERS
        if plain_move and not self._failed_here(existing, outcome.action):
            return self._by_rules(
                outcome,
                history,
                existing,
                move_hint(outcome, record.name if record is not None else ""),
                lambda: self._record_move(outcome, move),
                triggers,
            )
        hint = turn_verdict(outcome, existing) if self._summarizer.llm_first else None
        request = SynthesisRequest(
            outcome=outcome, triggers=triggers, existing=existing, history=history, hint=hint
        )
        decision = self._synthesize(request)
        if decision is None:
            return None
        return self._store_decision(outcome, history, existing, decision)

    def _store_decision(
        self,
        outcome: TurnOutcome,
        history: list[TurnOutcome],
        existing: list[MemoryEntry],
        decision: SynthesisDecision,
    ) -> MemoryEntry | None:
        """The summarizer's memory of a turn, stored at its source with what it supersedes."""
        source = outcome.location_before
        assert source is not None
        move = move_of(outcome)
        if not decision.should_remember or not decision.memory_title.strip():
            return None
        text = decision.memory_text.strip()
        if is_junk(text):
            log.info("synthesis kept only banners or stock replies (%r); skipped", text[:80])
            return None
        if outcome.died:
            words = ending_text(outcome.response)
            if words and words not in text:
                text = f'{text} The game said: "{words}"'
        if decision.category is MemoryCategory.SUCCESS and (
            outcome.score_delta > 0 or procedure_steps(text)
        ):
            # a procedure or a score: what had to be held, so it is not replayed before
            text = with_needs(text, needed_items(outcome, history))
        same = [
            e
            for e in existing
            if e.title.strip().lower() == decision.memory_title.strip().lower()
            and e.category is decision.category
        ]
        if same and not any(adds_content(text, e.text) for e in same):
            log.info(
                "synthesis repeated an existing memory title %r; skipped", decision.memory_title
            )
            return None
        first_turn = min(
            (h.turn for h in history if h.location_before == source), default=outcome.turn
        )
        entry = self._new_entry(
            scope=MemoryScope.LOCATION,
            category=decision.category,
            status=decision.status,
            title=decision.memory_title.strip(),
            text=text,
            importance=decision.importance,
            **move,  # triggers are logged, not stored
            episode=outcome.episode,
            turn_start=first_turn if decision.multi_step else outcome.turn,
            turn_end=outcome.turn,
            score_delta=outcome.score_delta,
            location_id=source,
            location_name=outcome.location_before_name or None,
        )
        resolution = resolve(decision, existing, self._policy.max_supersessions)
        # the same title with more to say (a procedure that now has its steps) replaces the old
        supersede = list(dict.fromkeys([*resolution.supersede, *(e.id for e in same)]))
        with self._store.transaction() as tx:
            tx.add(entry)
            for old_id in supersede:
                tx.supersede(old_id, entry.id)
                tx.after_commit(self._superseded_callback(old_id, entry.id))
            for old_id in resolution.invalidate:
                if old_id not in supersede:
                    tx.supersede(old_id, None)
            self._announce(tx, entry)
        return entry

    # -- one truth per action ----------------------------------------------------------------

    def _qualify(self, earlier: MemoryEntry, outcome: TurnOutcome) -> MemoryEntry | None:
        """A success remembered here that did nothing this time: superseded by itself with what
        differed ("Later, take leaflet: already held (Ep2, T1: ...)"), so that a success and a
        failure of one action never stand side by side. Each difference is said once: the same
        one again changes nothing."""
        command = normalize_command(outcome.action)
        reason = why_not(outcome)
        if f"Later, {command}: {reason} (" in earlier.text:
            return None
        note = later_note(
            command, reason, said(outcome.response), outcome.episode, outcome.turn
        )
        entry = earlier.model_copy(
            update={
                "id": self._clock.new_id(earlier.title),
                "created_at": self._clock.now(),
                "text": with_note(earlier.text, note),
                "superseded_by": None,
            }
        )
        return self._add_replacing(entry, [earlier])

    def _retire_failure(
        self,
        outcome: TurnOutcome,
        existing: list[MemoryEntry],
        history: list[TurnOutcome],
        entry: MemoryEntry | None,
    ) -> MemoryEntry | None:
        """An action the failure ledger here lists has now changed the game's state: it leaves
        the ledger (the ledger is superseded when it was its only command), and the memory of
        this turn, or the success of this action already remembered here, says it failed
        before; with neither, one is written ("'open door' worked here ...: "The door swings
        open." 'open door' had failed here before (Ep1). Steps first: (1) unlock door...")."""
        ledger = ledger_of(existing, outcome.action)
        if ledger is None:
            return entry
        key = action_key(outcome.action)
        listed = failed_commands(ledger.text)
        left = [c for c in listed if action_key(c) != key]
        answer = ledger_answer(ledger.text) if listed and action_key(listed[-1]) != key else ""
        when = f" (Ep{ledger.episode})" if ledger.episode is not None else ""
        before = f"'{normalize_command(outcome.action)}' had failed here before{when}."
        entry = entry or success_of(existing, outcome.action)  # a move already remembered
        if entry is None:
            steps = [
                t.action
                for t in prerequisites(history)
                if t.location_before == outcome.location_before
                and action_key(t.action) != key
            ]
            action = normalize_command(outcome.action)
            entry = self._new_entry(
                scope=MemoryScope.LOCATION,
                category=MemoryCategory.SUCCESS,
                title=f"'{action}' worked",
                text=with_needs(
                    with_steps(
                        f"'{action}' worked here (Ep{outcome.episode}, T{outcome.turn}): "
                        f'"{said(outcome.response)}" {before}',
                        list(dict.fromkeys(steps)),
                    ),
                    needed_items(outcome, history),
                ),
                importance=500,
                episode=outcome.episode,
                turn_start=outcome.turn,
                turn_end=outcome.turn,
                score_delta=outcome.score_delta,
                location_id=outcome.location_before,
                location_name=outcome.location_before_name or None,
            )
            added = True
        else:
            if before not in entry.text:
                entry = entry.model_copy(update={"text": with_note(entry.text, before)})
            added = False
        with self._store.transaction() as tx:
            if added:
                tx.add(entry)
                self._announce(tx, entry)
            else:
                tx.update(entry)
            if left:
                tx.update(
                    ledger.model_copy(
                        update={"title": failure_title(left), "text": failure_text(left, answer)}
                    )
                )
            else:
                tx.supersede(ledger.id, entry.id)
                tx.after_commit(self._superseded_callback(ledger.id, entry.id))
        return entry

    def _cover(self, game_state: GameState, outcome: TurnOutcome) -> None:
        """Mark the turn's own messages (its command and the game's answer) as read."""
        for message in reversed(game_state.conversation_history[-4:]):
            if message.turn != outcome.turn:
                break
            if message.text == outcome.response or message.text == f"> {outcome.action}":
                self._covered.add((message.episode, message.index))

    @staticmethod
    def _failed_here(existing: Sequence[MemoryEntry], action: str) -> bool:
        return ledger_of(existing, action) is not None

    def _record_move(self, outcome: TurnOutcome, move: dict[str, object]) -> MemoryEntry | None:
        """A new way between rooms already seen: a fact of the map, remembered with no
        summarizer call (a first visit, a score or a way that failed before still asks)."""
        action = normalize_command(outcome.action)
        after = outcome.location_after
        record = self._store.location(after) if after is not None else None
        known = record.name if record is not None else ""
        where = outcome.location_after_name or known or f"location {after}"
        return self._add_at_source(
            outcome,
            category=MemoryCategory.NOTE,
            title=f"'{action}' leads to {where}",
            text=f"'{action}' from here reaches {where} (L{outcome.location_after}).",
            importance=300,
            source=MemorySource.MOVE,
            **move,
        )

    def _add_at_source(self, outcome: TurnOutcome, **fields: Any) -> MemoryEntry | None:
        """Store one memory of this turn at the room where it was taken, in its own unit. The
        same memory again (category, title and text) is merged into the one there: nothing is
        added; the same title from the same source with other words (a win, later) supersedes
        the old one."""
        assert outcome.location_before is not None
        same = [
            e
            for e in self.location_memories(outcome.location_before)
            if e.category is fields.get("category")
            and e.title == fields.get("title")
            and e.source is fields.get("source", MemorySource.ACTION)
        ]
        if any(e.text == fields.get("text") for e in same):
            return None
        entry = self._new_entry(
            scope=MemoryScope.LOCATION,
            episode=outcome.episode,
            turn_start=outcome.turn,
            turn_end=outcome.turn,
            score_delta=outcome.score_delta,
            location_id=outcome.location_before,
            location_name=outcome.location_before_name or None,
            **fields,
        )
        return self._add_replacing(entry, same)

    def _record_failure(self, outcome: TurnOutcome) -> MemoryEntry | None:
        """One FAILURE memory per (room, object), listing every command that failed on it.

        No summarizer call: the game's refusal is the fact. A new command on the same object
        updates that memory in place (same id); a command already listed changes nothing.
        """
        source = outcome.location_before
        assert source is not None
        command = normalize_command(outcome.action)
        thing = ledger_key(command)
        tag = f"object:{thing}" if thing else "object:-"
        current = next(
            (
                e
                for e in self.location_memories(source)
                if e.category is MemoryCategory.FAILURE and tag in e.tags
            ),
            None,
        )
        commands = failed_commands(current.text) if current is not None else []
        if command in commands:
            return None
        commands.append(command)
        fields: dict[str, Any] = {
            "title": failure_title(commands),
            "text": failure_text(commands, outcome.response),
        }
        with self._store.transaction() as tx:
            if current is None:
                entry = self._new_entry(
                    scope=MemoryScope.LOCATION,
                    category=MemoryCategory.FAILURE,
                    importance=400,
                    tags=[tag],
                    source=MemorySource.FAILURE,
                    episode=outcome.episode,
                    turn_start=outcome.turn,
                    turn_end=outcome.turn,
                    location_id=source,
                    location_name=outcome.location_before_name or None,
                    **fields,
                )
                tx.add(entry)
            else:
                # agents sharing a memory space count their own turns: another agent's
                # memory may start after this turn, and a memory never ends before it starts
                if current.episode == outcome.episode and outcome.turn >= (current.turn_start or 0):
                    fields["turn_end"] = outcome.turn
                entry = current.model_copy(update=fields)
                tx.update(entry)
            self._announce(tx, entry)
        return entry

    # -- causes, stored where they lie ----------------------------------------------------------

    def _record_dark_room(
        self, outcome: TurnOutcome, found: Diagnosis, *, died: bool = True
    ) -> MemoryEntry | None:
        """A room the game describes as dark: the lesson is the room's ("Attic (L201) is dark:
        entering without a lit light ends in death (...). Ways in: 'up' from Kitchen (L203)."),
        written when the player first finds it dark and told again when the dark kills, never
        a danger of the move last taken there. The lesson already there gains the new ways in;
        a danger here that blamed a move for the same death words is superseded by it."""
        room = found.room
        assert room is not None
        here = self.location_memories(room)
        words = death_words(outcome.response) if died else dark_words(outcome.response)
        text = dark_lesson_text(found, outcome.episode, outcome.turn, words, died=died)
        earlier = next((e for e in here if DARK_TAG in e.tags), None)
        if earlier is not None:
            if died and not ends_in_death(earlier.text):
                text = with_death(earlier.text, text)
            else:
                text = with_ways_in(earlier.text, found.ways_in)
            if text == earlier.text:
                return None
            update: dict[str, Any] = {"text": text}
            if died:
                update["importance"] = max(earlier.importance, 950)
                update["source"] = MemorySource.ENDING
            entry = earlier.model_copy(update=update)
            with self._store.transaction() as tx:
                tx.update(entry)
                self._announce(tx, entry)
            return entry
        entry = self._new_entry(
            scope=MemoryScope.LOCATION,
            category=MemoryCategory.DANGER,
            title=dark_lesson_title(),
            text=text,
            importance=950 if died else 800,
            tags=[LESSON_TAG, DARK_TAG],
            source=MemorySource.ENDING if died else MemorySource.ACTION,
            episode=outcome.episode,
            turn_start=outcome.turn,
            turn_end=outcome.turn,
            location_id=room,
            location_name=found.room_name or None,
        )
        blamed = [
            e
            for e in here
            if died
            and e.category is MemoryCategory.DANGER
            and LESSON_TAG not in e.tags
            and (command := blamed_command(e.title)) is not None
            and is_move(command)
            and words
            and words in e.text
        ]
        return self._add_replacing(entry, blamed)

    def _dark_hint(self, outcome: TurnOutcome, found: Diagnosis) -> RulesVerdict:
        """The darkness lesson as the rules' hint to a model summarizer (`_by_rules`)."""
        return RulesVerdict(
            outcome=verdict(outcome).value,
            reason=(
                "died in a room last described as dark, with no light lit: the room is the"
                " cause, not the command taken there"
            ),
            category=MemoryCategory.DANGER,
            title=dark_lesson_title(),
            text=dark_lesson_text(
                found, outcome.episode, outcome.turn, death_words(outcome.response)
            ),
        )

    def _as_attacker_lesson(
        self, entry: MemoryEntry | None, outcome: TurnOutcome, found: Diagnosis
    ) -> MemoryEntry | None:
        """A death in a fight, as the summarizer remembered it (what it superseded stands): a
        memory that blames the command ("Died by 'north'") becomes the attacker's lesson at
        the room ("In the Troll Room (L10) the troll attacks and can kill ..."), so that the
        move last taken is no danger."""
        if entry is None or entry.category is not MemoryCategory.DANGER:
            return entry
        if f"'{normalize_command(outcome.action)}'" not in entry.title.lower():
            return entry
        lesson = entry.model_copy(
            update={
                "title": attacker_lesson_title(found.detail),
                "text": attacker_lesson_text(
                    found, outcome.episode, outcome.turn, death_words(outcome.response)
                ),
                "tags": list(
                    dict.fromkeys([*entry.tags, LESSON_TAG, f"cause:{DeathCause.COMBAT.value}"])
                ),
                "via": None,
                "leads_to": None,
            }
        )
        with self._store.transaction() as tx:
            tx.update(lesson)
        return lesson

    def _record_win_here(self, outcome: TurnOutcome) -> MemoryEntry | None:
        """The winning command, at the room where it won, in the game's words."""
        words = ending_text(outcome.response)
        action = normalize_command(outcome.action)
        return self._add_at_source(
            outcome,
            category=MemoryCategory.SUCCESS,
            title=f"Won the game by '{action}'",
            text=f"'{action}' here won the game: {words}",
            importance=1000,
            tags=["ending:won"],
            source=MemorySource.ENDING,
        )

    def record_ending(self, game_state: GameState, final: TurnOutcome) -> MemoryEntry | None:
        if not (final.won or final.died):
            return None
        room = final.location_before_name or (
            f"location {final.location_before}" if final.location_before is not None else ""
        )
        where = f" in {room}" if room else ""
        words = ending_text(final.response) or final.response.strip()
        action = normalize_command(final.action)
        if final.won:
            title = f"Won the game{where} at turn {final.turn}"
            category = MemoryCategory.SUCCESS
            kind = WorldEvent.GAME_WON
        else:
            found = diagnose(final, game_state.turns)
            cause = found.cause
            how = f"by '{action}'" if found.blames_command else f"({CAUSE_WORDS[cause]})"
            title = f"Died{where} at turn {final.turn} {how}"
            category = MemoryCategory.DANGER
            kind = WorldEvent.PLAYER_DIED
        last = game_state.conversation_history[-1].index if game_state.conversation_history else -1
        if any(e.title == title and e.text == words for e in self.world_memories()):
            game_state.scenario.last_world_message_index = last  # the same ending, merged
            return None
        entry = self._new_entry(
            scope=MemoryScope.WORLD,
            category=category,
            title=title,
            text=words,
            importance=1000 if final.won else 900,
            tags=[f"world:{kind}", "ending", f"episode:{final.episode}"]
            + ([] if final.won else [f"cause:{cause.value}"]),
            source=MemorySource.ENDING,
            episode=final.episode,
            turn_start=final.turn,
            turn_end=final.turn,
            score_delta=final.score_delta,
            location_id=final.location_before,
        )
        with self._store.transaction() as tx:
            tx.add(entry)
            tx.after_commit(lambda: setattr(game_state.scenario, "last_world_message_index", last))
            tx.after_commit(
                lambda: self._publisher.publish(
                    events.world_event_recorded, self, event_kind=kind, related={}
                )
            )
            self._announce(tx, entry)
        return entry

    def remember(
        self,
        game_state: GameState,
        text: str,
        importance: int,
        location_id: int | None = None,
    ) -> MemoryEntry | None:
        text = text.strip()
        if not text:
            return None
        importance = max(1, min(1000, int(importance)))
        with self._store.transaction() as tx:
            # the same words about another place are another note: dedupe per location
            here = (
                self._store.entries(location_id=location_id, statuses=VISIBLE)
                if location_id is not None
                else self._store.entries(scope=MemoryScope.WORLD, statuses=VISIBLE)
            )
            for note in here:
                if note.location_id != location_id:
                    continue
                if note.source is MemorySource.NOTE and is_similar(text, note.text):
                    if importance > note.importance:
                        tx.update(note.model_copy(update={"importance": importance}))
                    return None
            entry = self._new_entry(
                scope=MemoryScope.LOCATION if location_id is not None else MemoryScope.WORLD,
                category=MemoryCategory.NOTE,
                title=short_title(text),
                text=text,
                importance=importance,
                tags=["note"],
                source=MemorySource.NOTE,
                episode=game_state.episode,
                turn_start=game_state.turn,
                turn_end=game_state.turn,
                location_id=location_id,
                location_name=location_name(game_state, location_id),
            )
            tx.add(entry)
            self._announce(tx, entry)
        return entry

    def end_episode(self, game_state: GameState) -> None:
        game_state.turns = []
        with self._store.transaction() as tx:
            self.prune()
            # once the episode is stored: fold the store's recent part, archive SUPERSEDED
            tx.after_commit(self._store.checkpoint)

    def prune(self) -> list[str]:
        with self._store.transaction() as tx:
            return pruning.prune(self._prunable(), self._policy, tx)

    def _prunable(self) -> list[MemoryEntry]:
        """The memories of the scope keys pruning has work in (more visible memories than the
        cap, or more SUPERSEDED than it keeps), read key by key: the store's counts say which,
        so the others are never read (at 10,000 memories, reading them all cost an episode's
        end a tenth of a second)."""
        policy = self._policy
        found: list[MemoryEntry] = []
        for key, (visible, hidden) in self._store.scope_counts().items():
            if visible <= policy.cap_for(key[0]) and hidden <= policy.superseded_kept_per_key:
                continue
            scope, name = key
            if scope is MemoryScope.LOCATION and name.lstrip("-").isdigit():
                candidates = self._store.entries(scope=scope, location_id=int(name))
            elif scope is MemoryScope.NPC and name:
                candidates = self._store.entries(scope=scope, npc_id=name)
            else:
                candidates = self._store.entries(scope=scope)
            found.extend(e for e in candidates if pruning.scope_key(e) == key)
        return found
