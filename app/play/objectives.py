"""Objectives (seed 000): rediscovered every N turns from knowledge, memories and the map.

Two discoverers share one tracker:
- `MemoryObjectiveDiscoverer` (offline HEURISTIC): one objective per remembered scoring
  procedure not yet repeated this episode (target: its location), in the order they were first
  achieved (earlier scores are often prerequisites of later ones), then the nearest room with
  an unexplored exit.
- `LLMObjectiveDiscoverer`: the ContextService's objective prompt (location and adjacent
  memories, objectives, Mermaid map with `L{id}` nodes and routing summary, world memories,
  notes, the knowledge base) sent to the `objective` role; answers are the seed-000 JSON.
  Location ids named as "Location N" or "L N" become targets. On an LLM failure it falls back
  to the offline discoverer and counts the failure.

Completion is tracked by the tracker: a scoring objective completes when its action scores at
its location; an exploration or LLM objective with a target completes when the player reaches
the target.
"""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod

from pydantic import BaseModel, Field

from app.agents.explorer import quoted_commands
from app.errors import LLMError
from app.interfaces.llm import ILLMClient, LLMMessage, LLMRequest, complete_structured
from app.interfaces.memory_service import IMemoryService
from app.models.memory import MemoryCategory
from app.services.context.builders import ContextRequest
from app.services.context.context_service import ContextService
from app.services.map_graph import MapGraph

log = logging.getLogger(__name__)
_LOCATION_REF = re.compile(r"\b(?:Location\s+|L)(\d+)\b")


class Objective(BaseModel):
    """One objective; `target_location_id` when it names a place."""

    text: str
    kind: str = "llm"
    target_location_id: int | None = None
    action: str | None = None
    created_turn: int = 0
    completed_turn: int | None = None


class ObjectivesAnswer(BaseModel):
    """The objectives discovered from knowledge, memories and the map (seed 000 JSON)."""

    objectives: list[str] = Field(default_factory=list, max_length=8)
    reasoning: str = ""


class ObjectiveInput(BaseModel):
    """What discovery looks at besides the stores."""

    model_config = {"arbitrary_types_allowed": True}

    request: ContextRequest
    turn: int
    score: int | None = None
    inventory: list[str] = Field(default_factory=list)
    done_here: set[tuple[int, str]] = Field(default_factory=set)
    knowledge: str = ""
    recent_gameplay: str = ""


class IObjectiveDiscoverer(ABC):
    """Finds the current objectives."""

    @abstractmethod
    def discover(self, data: ObjectiveInput) -> list[Objective]:
        """Objectives for now, most important first."""


class MemoryObjectiveDiscoverer(IObjectiveDiscoverer):
    """Offline heuristic discovery (see the module docstring)."""

    def __init__(self, memory: IMemoryService | None, map_graph: MapGraph) -> None:
        self._memory = memory
        self._map = map_graph

    def discover(self, data: ObjectiveInput) -> list[Objective]:
        objectives: list[Objective] = []
        if self._memory is not None:
            scoring = [
                m
                for m in self._memory.top_memories(limit=50)
                if m.category is MemoryCategory.SUCCESS and (m.score_delta or 0) > 0
            ]
            # in the order they were first achieved: earlier scores are often prerequisites
            scoring.sort(key=lambda m: (m.episode or 0, m.turn_end or 0))
            for m in scoring:
                actions = quoted_commands(m.text)
                if m.location_id is None or not actions:
                    continue
                if (m.location_id, actions[0]) in data.done_here:
                    continue
                name = self._map.name_of(m.location_id) or m.location_name or "?"
                objectives.append(
                    Objective(
                        text=f"Score again at Location {m.location_id} ({name}): {m.title}",
                        kind="score",
                        target_location_id=m.location_id,
                        action=actions[0],
                        created_turn=data.turn,
                    )
                )
        here = data.request.location_id
        nearest = self._map.nearest_unexplored(here) if here is not None else None
        if nearest is not None:
            target, _route = nearest
            exits = ", ".join(self._map.unexplored_exits(target))
            objectives.append(
                Objective(
                    text=f"Explore {exits} from Location {target} ({self._map.name_of(target)})",
                    kind="explore",
                    target_location_id=target,
                    created_turn=data.turn,
                )
            )
        return objectives


class LLMObjectiveDiscoverer(IObjectiveDiscoverer):
    """Discovery by the `objective` model over the assembled objective prompt."""

    def __init__(
        self,
        client: ILLMClient,
        context: ContextService,
        map_graph: MapGraph,
        fallback: IObjectiveDiscoverer,
    ) -> None:
        self._client = client
        self._context = context
        self._map = map_graph
        self._fallback = fallback
        self.failures = 0

    def discover(self, data: ObjectiveInput) -> list[Objective]:
        here = data.request.location_id
        extra = dict(data.request.extra_sections)
        extra["map"] = "\n".join(
            [
                self._map.render_mermaid(),
                "Node ids match location ids in memories (L180 = Location 180).",
                self._map.routing_summary(here) if here is not None else "",
            ]
        )
        extra["knowledge"] = data.knowledge
        request = data.request.model_copy(update={"extra_sections": extra})
        prompt = self._context.assemble("objective", request)
        user = (
            f"{prompt.text}\n\n## Recent gameplay\n{data.recent_gameplay}\n\n"
            f"Score: {data.score}. Location: {here}. Inventory: {', '.join(data.inventory)}.\n"
            "Identify specific objectives that use location ids, leverage memories and"
            " knowledge, avoid known dangers and pursue unexplored exits."
        )
        try:
            answer, _ = complete_structured(
                self._client,
                LLMRequest(
                    role="objective",
                    system="You discover objectives for a text-adventure agent.",
                    messages=[LLMMessage(role="user", content=user)],
                    max_tokens=600,
                ),
                ObjectivesAnswer,
            )
        except LLMError as exc:
            self.failures += 1
            log.warning("objective discovery failed (%s); using the offline heuristic", exc)
            return self._fallback.discover(data)
        return [
            Objective(text=text, target_location_id=_target(text), created_turn=data.turn)
            for text in answer.objectives
            if text.strip()
        ]


def _target(text: str) -> int | None:
    found = _LOCATION_REF.search(text)
    return int(found.group(1)) if found else None


class ObjectiveTracker:
    """The current objectives and those completed, per episode."""

    def __init__(self, discoverer: IObjectiveDiscoverer) -> None:
        self._discoverer = discoverer
        self.active: list[Objective] = []
        self.completed: list[Objective] = []
        self.discovered = 0

    def new_episode(self) -> None:
        self.active, self.completed, self.discovered = [], [], 0

    def rediscover(self, data: ObjectiveInput) -> list[Objective]:
        self.active = self._discoverer.discover(data)
        self.discovered += len(self.active)
        return self.active

    def target(self) -> int | None:
        """The location of the first active objective that names one."""
        return next(
            (o.target_location_id for o in self.active if o.target_location_id is not None), None
        )

    def observe(
        self,
        turn: int,
        location_before: int | None,
        location_after: int | None,
        action: str,
        score_gain: int,
    ) -> list[Objective]:
        """Mark what this turn completed; return those objectives."""
        done: list[Objective] = []
        for objective in self.active:
            if objective.kind == "score":
                hit = (
                    score_gain > 0
                    and location_before == objective.target_location_id
                    and action == objective.action
                )
            else:
                hit = (
                    objective.target_location_id is not None
                    and location_after == objective.target_location_id
                )
            if hit:
                objective.completed_turn = turn
                done.append(objective)
        self.active = [o for o in self.active if o.completed_turn is None]
        self.completed.extend(done)
        return done

    def texts(self) -> list[str]:
        return [o.text for o in self.active]
