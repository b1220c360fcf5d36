"""Objectives: rediscovered every N turns from knowledge, memories and the map.

Two discoverers share one tracker:
- `MemoryObjectiveDiscoverer` (offline HEURISTIC): one objective per remembered scoring
  procedure not yet repeated this episode (target: its location), in the order they were first
  achieved (earlier scores are often prerequisites of later ones), then the nearest room with
  an unexplored exit.
- `LLMObjectiveDiscoverer`: the ContextService's objective prompt (location and adjacent
  memories, objectives, the map around the player as routes and as a Mermaid drawing with
  `L{id}` nodes, the knowledge base) sent to the `objective` role; answers are
  `ObjectivesAnswer` JSON.
  Location ids named as "Location N" or "L N" become targets. On an LLM failure it falls back
  to the offline discoverer and counts the failure.

Completion is tracked by the tracker: a scoring objective completes when its action scores at
its location; an exploration, fetch (`get`) or LLM objective with a target completes when the
player reaches the target (where the "Got ..." memory has the player take the item); the LLM
discoverer is shown the current objectives, numbered, and those it answers `completed` are
counted completed too. When discovery runs again is the session's (`objective_refresh.py`:
the schedule, a score change, a one-way event); the first discovery sees the game's opening.

Safety (`RouteGuard`, `route_guard.py`): no objective targets, and no route is followed into, a
remembered death, a dark room without a light, a noted trap or a blocked way; the tracker skips
objectives whose route needs one, so the player resumes exploring instead of retrying it.

Preconditions (`preconditions`): a scoring memory that says which items had to be held is no
objective while one is not; when memory knows where that item was got ("Got brass lantern" at a
room), fetching it there comes first.
"""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod

from pydantic import BaseModel, Field

from cairn.agents.data_fence import GAME_TEXT, MEMORIES, fenced, with_data_rule
from cairn.agents.explorer import normalize
from cairn.agents.explorer.words import light_sources
from cairn.agents.prompt_order import reading_order
from cairn.agents.structured import complete_structured
from cairn.errors import LLMError
from cairn.interfaces.llm import ILLMClient, LLMMessage, LLMRequest
from cairn.interfaces.memory_service import IMemoryService
from cairn.lessons.reading import holds, missing
from cairn.models.kinds import PromptKind, Role
from cairn.models.memory import MemoryCategory, MemoryEntry
from cairn.play.route_guard import RouteGuard, deadly_moves
from cairn.services.context.builders import ContextRequest
from cairn.services.context.context_service import ContextService
from cairn.services.map import MapGraph
from cairn.services.outcomes import got_items, quoted_commands

__all__ = [
    "IObjectiveDiscoverer",
    "LLMObjectiveDiscoverer",
    "MemoryObjectiveDiscoverer",
    "Objective",
    "ObjectiveInput",
    "ObjectiveTracker",
    "ObjectivesAnswer",
    "RouteGuard",
    "deadly_moves",
]

log = logging.getLogger(__name__)
_LOCATION_REF = re.compile(r"\b(?:Location\s+|L)(\d+)\b")
_TOP = 50
"""The most important memories discovery reads (scores, and where needed items were got)."""
_STABLE_FIRST = ("Knowledge",)
"""The objective prompt's section that changes least (once an episode), put first."""
_OBJECTIVE_SYSTEM = (
    "You discover objectives for a text-adventure agent. Identify specific objectives that"
    " use location ids, leverage memories and knowledge, avoid known dangers and pursue"
    " unexplored exits. In `completed`, give the numbers of the current objectives that the"
    " recent gameplay shows are done."
)


class Objective(BaseModel):
    """One objective; `target_location_id` when it names a place."""

    text: str
    kind: str = "llm"
    target_location_id: int | None = None
    action: str | None = None
    created_turn: int = 0
    completed_turn: int | None = None


class ObjectivesAnswer(BaseModel):
    """The objectives discovered from knowledge, memories and the map (the objectives JSON),
    and the numbers of the current objectives that are now done."""

    objectives: list[str] = Field(default_factory=list, max_length=8)
    completed: list[int] = Field(default_factory=list, max_length=8)
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
    current: list[Objective] = Field(default_factory=list)
    """The objectives active until now (a discoverer may mark those it finds done: their
    `completed_turn`; the tracker counts them completed)."""


class IObjectiveDiscoverer(ABC):
    """Finds the current objectives."""

    @abstractmethod
    def discover(self, data: ObjectiveInput) -> list[Objective]:
        """Objectives for now, most important first."""

    @property
    def guard(self) -> RouteGuard | None:
        """What says which routes are safe (None: every route is)."""
        return None


class MemoryObjectiveDiscoverer(IObjectiveDiscoverer):
    """Offline heuristic discovery (see the module docstring)."""

    def __init__(self, memory: IMemoryService | None, map_graph: MapGraph) -> None:
        self._memory = memory
        self._map = map_graph
        self._guard = RouteGuard(map_graph, memory)

    @property
    def guard(self) -> RouteGuard:
        return self._guard

    def discover(self, data: ObjectiveInput) -> list[Objective]:
        objectives: list[Objective] = []
        self._guard.light = bool(light_sources(data.inventory))
        self._guard.refresh()
        if self._memory is not None:
            top = self._memory.top_memories(limit=_TOP)
            scoring = [
                m
                for m in top
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
                if self._guard.unsafe_room(m.location_id) or self._guard.unsafe_step(
                    m.location_id, actions[0]
                ):
                    continue
                lacking = missing(m, data.inventory)
                if lacking:
                    # not before what it needed is held: fetch it where memory says it was got
                    objectives.extend(self._fetch(lacking, top, objectives, data.turn))
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
        target = self._guard.nearest_unexplored(here) if here is not None else None
        if target is not None:
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

    def _fetch(
        self,
        items: list[str],
        memories: list[MemoryEntry],
        planned: list[Objective],
        turn: int,
    ) -> list[Objective]:
        """Objectives to get `items` where memory says they were got ("Got brass lantern" at
        its room), each once; an item memory does not place adds none."""
        found: list[Objective] = []
        for item in items:
            got = next(
                (
                    m
                    for m in memories
                    if m.location_id is not None
                    and any(holds(item, [g]) for g in got_items(m.title))
                    and not self._guard.unsafe_room(m.location_id)
                ),
                None,
            )
            if got is None or got.location_id is None:
                continue
            action = f"take {item}"
            if any(o.action == action for o in [*planned, *found]):
                continue
            name = self._map.name_of(got.location_id) or got.location_name or "?"
            found.append(
                Objective(
                    text=f"Get {item} at Location {got.location_id} ({name}): needed first",
                    kind="get",
                    target_location_id=got.location_id,
                    action=action,
                    created_turn=turn,
                )
            )
        return found


class LLMObjectiveDiscoverer(IObjectiveDiscoverer):
    """Discovery by the `objective` model over the assembled objective prompt."""

    def __init__(
        self,
        client: ILLMClient,
        context: ContextService,
        fallback: IObjectiveDiscoverer,
    ) -> None:
        self._client = client
        self._context = context
        self._fallback = fallback
        self.failures = 0

    @property
    def guard(self) -> RouteGuard | None:
        return self._fallback.guard

    def discover(self, data: ObjectiveInput) -> list[Objective]:
        here = data.request.location_id
        extra = dict(data.request.extra_sections)  # (the map is the context's own sections)
        extra["knowledge"] = data.knowledge
        extra["objectives"] = ""  # shown below, numbered, once
        request = data.request.model_copy(update={"extra_sections": extra})
        prompt = self._context.assemble(PromptKind.OBJECTIVE, request)
        current = "\n".join(f"{n}. {o.text}" for n, o in enumerate(data.current, 1))
        # the knowledge base first: it stays the same the whole episode (a cache can serve it)
        user = (
            f"{fenced(reading_order(prompt.text, _STABLE_FIRST), MEMORIES)}\n\n"
            f"## Current objectives\n{current or '(none yet)'}\n\n"
            f"## Recent gameplay\n{fenced(data.recent_gameplay, GAME_TEXT)}\n\n"
            f"Score: {data.score}. Location: {here}. Inventory: {', '.join(data.inventory)}."
        )
        try:
            answer, _ = complete_structured(
                self._client,
                LLMRequest(
                    role=Role.OBJECTIVE,
                    system=with_data_rule(_OBJECTIVE_SYSTEM),
                    messages=[LLMMessage(role="user", content=user)],
                    max_tokens=600,
                ),
                ObjectivesAnswer,
            )
        except LLMError as exc:
            self.failures += 1
            log.warning("objective discovery failed (%s); using the offline heuristic", exc)
            return self._fallback.discover(data)
        for number in answer.completed:  # the model says these are done
            if 1 <= number <= len(data.current):
                data.current[number - 1].completed_turn = data.turn
        guard = self.guard
        if guard is not None:
            guard.refresh()
        objectives = [
            Objective(text=text, target_location_id=_target(text), created_turn=data.turn)
            for text in answer.objectives
            if text.strip()
        ]
        # an objective whose place is reached only through a remembered death is no objective
        return [
            o
            for o in objectives
            if guard is None
            or o.target_location_id is None
            or not guard.unsafe_room(o.target_location_id)
        ]


def _same_deed(action: str, wanted: str) -> bool:
    """The same verb on the same thing: `open door` does `open iron door`."""
    a, b = normalize(action).split(), normalize(wanted).split()
    return a == b or (len(a) > 1 and len(b) > 1 and a[0] == b[0] and a[-1] == b[-1])


def _target(text: str) -> int | None:
    found = _LOCATION_REF.search(text)
    return int(found.group(1)) if found else None


class ObjectiveTracker:
    """The current objectives and those completed, per episode.

    With a `RouteGuard` (the discoverer's, unless one is given), `target` skips objectives the
    route to which, from where the player is, needs a deadly or blocked step.
    """

    def __init__(self, discoverer: IObjectiveDiscoverer, guard: RouteGuard | None = None) -> None:
        self._discoverer = discoverer
        self._guard = guard if guard is not None else getattr(discoverer, "guard", None)
        self._here: int | None = None
        self.active: list[Objective] = []
        self.completed: list[Objective] = []
        self.discovered = 0

    def new_episode(self) -> None:
        self.active, self.completed, self.discovered = [], [], 0
        self._here = None
        if self._guard is not None:
            self._guard.new_episode()

    def rediscover(self, data: ObjectiveInput) -> list[Objective]:
        """New objectives; those of the current ones the discoverer finds done (an LLM's
        `completed`) are counted completed."""
        if data.request.location_id is not None:
            self._here = data.request.location_id
        current = list(self.active)
        self.active = self._discoverer.discover(data.model_copy(update={"current": current}))
        self.completed.extend(o for o in current if o.completed_turn is not None)
        self.discovered += len(self.active)
        return self.active

    def target(self) -> int | None:
        """The location of the first active objective that names one and is safe to reach."""
        for objective in self.active:
            target = objective.target_location_id
            if target is None:
                continue
            if self._guard is not None and (
                (self._guard.unsafe_room(target) and target != self._here)
                or (self._here is not None and not self._guard.safe_target(self._here, target))
            ):
                continue
            return target
        return None

    def observe(
        self,
        turn: int,
        location_before: int | None,
        location_after: int | None,
        action: str,
        score_gain: int,
    ) -> list[Objective]:
        """Mark what this turn completed (and a way that turned out blocked); return those.

        A score objective also completes by the same verb on the same thing (`open door` for
        `open iron door`); one whose place the player left without scoring there is dropped
        until the next discovery, so it does not pull the player back and forth.
        """
        if self._guard is not None:
            self._guard.note_turn(location_before, location_after, action)
        if location_after is not None:
            self._here = location_after
        done: list[Objective] = []
        left: list[Objective] = []
        for objective in self.active:
            if objective.kind == "score":
                hit = (
                    score_gain > 0
                    and location_before == objective.target_location_id
                    and _same_deed(action, objective.action or "")
                )
                if (
                    not hit
                    and location_before == objective.target_location_id
                    and location_after not in (None, location_before)
                ):
                    left.append(objective)
            else:
                hit = (
                    objective.target_location_id is not None
                    and location_after == objective.target_location_id
                )
            if hit:
                objective.completed_turn = turn
                done.append(objective)
        self.active = [o for o in self.active if o.completed_turn is None and o not in left]
        self.completed.extend(done)
        return done

    def texts(self) -> list[str]:
        return [o.text for o in self.active]
