"""StepTranslator: the one place where a game step becomes commands, for play and for replay.

Per step, in this order: the command as a player message; ChangeLocation (via the command) when
the room changed; the game's text as a message; RecordTurn; CompleteObjective on a score gain,
titled as a player would write it. An episode starts with ChangeLocation to the first room and
ends with EndEpisode carrying the turn that ended it (the win, or the death), so the ending is
remembered in the game's words.

A step where the game cannot say where the player is goes to the last known room, tagged
`location_unknown` on its TurnOutcome, and is counted (`unknown_location_turns`): nothing is
dropped silently. Before any room is known there is no room to use: the turn is counted, and
the memory service records nothing at a location for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cairn.events import commands as c
from cairn.events.bus import MessageBus
from cairn.interfaces.game import GameObservation
from cairn.models.game import GameState, Message, TurnOutcome
from cairn.services.clock import SystemClock

ArrivalHook = Callable[[GameObservation, str | None], None]
Follower = Callable[[TurnOutcome], None]
"""Told of every step the game took, before it is recorded (`ClaimTester.follow`)."""


@dataclass
class EpisodeTrack:
    """What the translator follows within one episode."""

    last_id: int | None = None
    last_name: str = ""
    ending: TurnOutcome | None = None
    last: TurnOutcome | None = None
    died: bool = False
    unknown_location_turns: int = 0
    scored: list[TurnOutcome] = field(default_factory=list)


def turn_outcome(
    episode: int,
    turn: int,
    action: str,
    before: GameObservation,
    after: GameObservation,
    reasoning: str = "",
) -> TurnOutcome:
    """The TurnOutcome of one step: the location, score and inventory before and after it, and
    whether the step changed the world (the state an outcome is read from first)."""
    return TurnOutcome(
        episode=episode,
        turn=turn,
        action=action,
        response=after.text,
        reasoning=reasoning,
        location_before=before.location_id,
        location_before_name=before.location_name,
        location_after=after.location_id,
        location_after_name=after.location_name,
        score_before=before.score,
        score_after=after.score,
        inventory_before=before.inventory,
        inventory_after=after.inventory,
        died=after.died,
        won=after.won,
        world_changed=after.world_changed,
    )


class StepTranslator:
    """Turns observations into bus commands (see the module docstring)."""

    def __init__(
        self,
        bus: MessageBus,
        clock: SystemClock | None = None,
        on_arrive: ArrivalHook | None = None,
        follow: Follower | None = None,
    ) -> None:
        self._bus = bus
        self._clock = clock
        self._on_arrive = on_arrive
        self._follow = follow
        self.track = EpisodeTrack()

    def start(self, gs: GameState, obs: GameObservation) -> GameObservation:
        """A new episode: arrive in the first room, then its text as a message."""
        self.track = EpisodeTrack()
        obs = self._resolve(obs, count=False)
        self._arrive(gs, obs, via=None)
        self._message(gs, obs.text, present=obs.npcs_present, mentioned=obs.npcs_mentioned)
        return obs

    def step(
        self,
        gs: GameState,
        turn: int,
        action: str,
        before: GameObservation,
        after: GameObservation,
        reasoning: str = "",
    ) -> tuple[GameObservation, TurnOutcome]:
        """One step; returns the observation with its room resolved, and the turn's outcome."""
        gs.turn = turn
        unknown = after.location_id is None
        after = self._resolve(after, count=True)
        if after.location_id is not None and after.location_id != before.location_id:
            # a death that moves the player (a resurrection elsewhere) made no way there
            arrival = c.ChangeLocation(
                gs, after.location_id, after.location_name, action, connects=not after.died
            )
            self._bus.handle(arrival)
            if self._on_arrive is not None:
                self._on_arrive(after, action)
        self._message(gs, after.text, present=after.npcs_present, mentioned=after.npcs_mentioned)
        outcome = turn_outcome(gs.episode, turn, action, before, after, reasoning)
        if unknown:
            outcome = outcome.model_copy(update={"location_unknown": True})
        if self._follow is not None:
            self._follow(outcome)
        self._bus.handle(c.RecordTurn(gs, outcome))
        self.track.last = outcome
        if outcome.won or outcome.died:
            self.track.ending = outcome
            self.track.died = self.track.died or outcome.died
        if outcome.score_delta > 0:
            self.track.scored.append(outcome)
            self._bus.handle(
                c.CompleteObjective(
                    gs,
                    quest_id="score",
                    objective_id=f"ep{gs.episode}-t{turn}",
                    tags=[f"score:+{outcome.score_delta}"],
                    title=score_title(outcome),
                    turn=turn,
                )
            )
        return after, outcome

    def player(self, gs: GameState, action: str) -> None:
        """The command as a player message (before the game answers it)."""
        self._message(gs, f"> {action}", role="player")

    def finish(self, gs: GameState, last: GameObservation) -> None:
        """EndEpisode: won or died, with the turn that ended it."""
        won = last.won
        died = self.track.died and not won
        final = self.track.ending if (won or died) else None
        self._bus.handle(c.EndEpisode(gs, won=won, died=died, final=final))

    # -- helpers ------------------------------------------------------------------------------

    def _resolve(self, obs: GameObservation, *, count: bool) -> GameObservation:
        if obs.location_id is not None:
            self.track.last_id, self.track.last_name = obs.location_id, obs.location_name
            return obs
        if count:
            self.track.unknown_location_turns += 1
        if self.track.last_id is None:
            return obs
        return obs.model_copy(
            update={"location_id": self.track.last_id, "location_name": self.track.last_name}
        )

    def _arrive(self, gs: GameState, obs: GameObservation, via: str | None) -> None:
        """The first room (step's own arrivals send their command themselves: one frame less
        on every write path of a turn, `bench/turn_hops.py`)."""
        if obs.location_id is None:
            return
        self._bus.handle(c.ChangeLocation(gs, obs.location_id, obs.location_name, via_action=via))
        if self._on_arrive is not None:
            self._on_arrive(obs, via)

    def _message(
        self,
        gs: GameState,
        text: str,
        *,
        role: str = "narrator",
        present: list[str] | None = None,
        mentioned: list[str] | None = None,
    ) -> Message:
        return stamped_message(gs, text, self._clock, role, present, mentioned)


def stamped_message(
    gs: GameState,
    text: str,
    clock: SystemClock | None,
    role: str = "narrator",
    present: list[str] | None = None,
    mentioned: list[str] | None = None,
) -> Message:
    """A message at the current location, stamped by `clock` when given (replays use the
    container's clock so two replays are byte-identical)."""
    message = gs.add_message(text, role=role, npcs_present=present, npcs_mentioned=mentioned)
    if clock is not None:
        message.timestamp = clock.now()
    return message


def score_title(outcome: TurnOutcome) -> str:
    """"Scored 10 in Kitchen by 'open window'"."""
    where = f" in {outcome.location_before_name}" if outcome.location_before_name else ""
    action = " ".join(outcome.action.split())
    return f"Scored {outcome.score_delta}{where} by '{action}'"
