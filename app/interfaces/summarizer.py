"""ISummarizer: turns messages and turn outcomes into summaries and synthesis decisions."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from cairn.models.game import GameState, Message, NPCInstance, TurnOutcome
from cairn.models.kinds import WorldEvent
from cairn.models.memory import MemoryCategory, MemoryEntry, MemoryStatus, SynthesisDecision


class RulesVerdict(BaseModel):
    """What the rules alone make of a turn, shown to a model summarizer as a hint.

    `outcome` is the rules' verdict from the game's state first and its words second
    (`services.outcomes.Verdict`: changed, neutral, no_op, failure) and `reason` says why in a
    few words ("locked", "already held", "location, inventory"). When the rules would write a
    memory themselves (a failure ledger, a success that later did nothing, a new way between
    known rooms), `category`, `title` and `text` are that memory and `replaces` the ids of the
    memories it would update or supersede. A decision that repeats that memory word for
    word (`agrees`) keeps the rules' write as it is.
    """

    model_config = ConfigDict(extra="forbid")

    outcome: str
    reason: str = ""
    category: MemoryCategory | None = None
    title: str = ""
    text: str = ""
    replaces: list[str] = Field(default_factory=list)

    @property
    def writes(self) -> bool:
        """Whether the rules would write a memory of this turn themselves."""
        return self.category is not None and bool(self.title)

    def agrees(self, decision: SynthesisDecision) -> bool:
        """Whether `decision` is the rules' own memory, unchanged and ACTIVE."""
        return (
            self.writes
            and decision.should_remember
            and decision.category is self.category
            and decision.status is MemoryStatus.ACTIVE
            and _plain(decision.memory_title) == _plain(self.title)
            and _plain(decision.memory_text) == _plain(self.text)
        )


def _plain(text: str) -> str:
    """`text` with its whitespace collapsed, lower case: how `agrees` compares words."""
    return " ".join(text.split()).lower()


class SynthesisRequest(BaseModel):
    """Everything synthesis sees for one turn: its outcome, the triggers it fired, the memories
    already at its location, the recent turns before it and, for a model summarizer, the rules'
    verdict (`hint`; None when the rules decide alone)."""

    model_config = ConfigDict(extra="forbid")

    outcome: TurnOutcome
    triggers: list[str]
    existing: list[MemoryEntry] = Field(default_factory=list)
    history: list[TurnOutcome] = Field(default_factory=list)
    hint: RulesVerdict | None = None


class ISummarizer(ABC):
    """The summarizer agent port. Implementations raise SummarizerError on failure."""

    @property
    def llm_first(self) -> bool:
        """True for a model summarizer: every triggered turn goes to it, failures and known
        moves included, with the rules' verdict as a hint (`SynthesisRequest.hint`), and its
        answer decides. False (the default: the offline heuristics, test fakes): the rules
        write failures, no-ops and known moves themselves and ask only about the rest."""
        return False

    @abstractmethod
    def synthesize(self, request: SynthesisRequest) -> SynthesisDecision:
        """Decide whether and what to remember about a turn."""

    @abstractmethod
    def summarize_location_session(
        self,
        game_state: GameState,
        location_id: int,
        messages: Sequence[Message],
        left_out: Sequence[int] = (),
    ) -> str:
        """Summarize a visit to a location in 2-3 sentences ('' means nothing to keep).
        `left_out`: the turns of the visit that `messages` leaves out (other memories hold
        them): the summary is of what `messages` shows, and says nothing of those turns."""

    @abstractmethod
    def summarize_npc_interactions(
        self, game_state: GameState, npc: NPCInstance, messages: Sequence[Message]
    ) -> str:
        """Summarize interactions with one NPC in 2-3 sentences ('' means nothing to keep)."""

    @abstractmethod
    def summarize_world_update(
        self,
        game_state: GameState,
        event_kind: WorldEvent,
        messages: Sequence[Message],
        related: Mapping[str, str | list[str]],
    ) -> str:
        """Summarize story progress since the last world update ('' means nothing to keep).

        `related` holds the event's ids (`quest_id`, `objective_id`, `act_id`, ...) and the
        names the GameState gives them (`quest_name`, `objective_name`, `act_name`): a summary
        names them, never shows the ids.
        """
