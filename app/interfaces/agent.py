"""IAgent: chooses the next game command from what the play session shows it."""

from __future__ import annotations

from abc import ABC, abstractmethod

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from cairn.interfaces.game import GameObservation
from cairn.models.memory import MemoryEntry, Way
from cairn.models.vocabulary import Vocabulary


class AgentView(BaseModel):
    """Everything an agent may use for one decision.

    `prompt` is the ContextService's adventurer prompt (memories, reasoning, actions, notes).
    `memories` are the visible memories of the current location (empty with --no-memory).
    `tried_here` are the commands already sent at this location in this episode, each with
    whether it failed.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    episode: int
    turn: int
    max_turns: int | None = None
    """The episode's last turn (None: no limit known): the model is told "turn N of M"."""
    observation: GameObservation
    prompt: str = ""
    room_text: str = ""
    """The last room description seen at this location (the observation may be a refusal)."""
    memories: list[MemoryEntry] = Field(default_factory=list)
    world_notes: list[MemoryEntry] = Field(default_factory=list)
    """World-scope notes (things true everywhere, e.g. words the game does not know)."""
    nearby: list[MemoryEntry] = Field(default_factory=list)
    """The memories of adjacent locations the prompt shows (a dark room next door)."""
    objectives: list[str] = Field(default_factory=list)
    tried_here: dict[str, bool] = Field(default_factory=dict)
    unexplored_exits: list[str] = Field(default_factory=list)
    route_to_target: list[str] = Field(default_factory=list)
    route_to_unexplored: list[str] = Field(default_factory=list)
    vocabulary: Vocabulary | None = None
    """The words the game's parser knows (None: unknown); a guessed noun outside it is no
    thing the game can name."""


EMPTY_COMMAND = "\n"
"""The action that sends an empty line (Enter alone), which some games wait for ("press
Enter to go on"); any other blank action is taken as `look`."""


class AgentDecision(BaseModel):
    """The next command, the reasoning behind it and an optional note to remember.

    `action` is sent as typed (spaces tidied); `EMPTY_COMMAND` sends an empty line."""

    model_config = ConfigDict(extra="ignore")

    action: str = Field(min_length=1)
    reasoning: str = ""
    remember: str | None = None
    importance: int = Field(500, ge=1, le=1000)
    remember_everywhere: bool = False
    """Store the note in the world scope instead of at the current location."""
    remember_tags: SkipJsonSchema[list[str]] = Field(default_factory=list)
    """The note's tags (the offline player's: `trap:<room id>`, ...); not offered to a model."""
    remember_ways_in: SkipJsonSchema[list[Way]] = Field(default_factory=list)
    """The moves the note says lead into its room (a trap's); not offered to a model."""
    stand_in: SkipJsonSchema[bool] = False
    """The offline stand-in chose this command because the model could not (an LLM agent's
    fallback): counted as a stand-in turn. Set by the agent, never by a model."""
    request_tokens: SkipJsonSchema[int | None] = None
    """The estimated tokens of the whole model request this turn was asked with (system
    prompt, tools and messages); None when no model was asked (the session then counts the
    prompt). Set by the agent, never by a model."""


class IAgent(ABC):
    """A player: one decision per turn."""

    @abstractmethod
    def decide(self, view: AgentView) -> AgentDecision:
        """Choose the next command."""

    def new_episode(self, episode: int) -> None:  # noqa: B027 - optional hook
        """Forget per-episode state (default: nothing to forget)."""
