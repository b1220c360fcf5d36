"""Run scenarios through the same container and bus as play; check what they left behind.

Each replay gets its own folder, settings from the scenario only (its `seed` becomes
`deterministic_seed`, so memory ids and timestamps repeat) and message timestamps from the
container's clock: two replays of a scenario write byte-identical memory files and prompts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.errors import CairnError, ScenarioError
from cairn.events import commands as c
from cairn.events.bus import MessageBus
from cairn.interfaces.game import GameObservation, IGame
from cairn.lessons.tester import ClaimTester
from cairn.models.game import (
    GameState,
    LocationState,
    Message,
    NPCInstance,
    QuestState,
    TurnOutcome,
)
from cairn.play.translator import StepTranslator, stamped_message
from cairn.replay.expectations import ReplayOutcome, evaluate
from cairn.replay.prepare import open_story, prepare_workdir, replay_settings
from cairn.replay.results import ReplayReport
from cairn.replay.scenario import load_scenario
from cairn.replay.scenario_document import ScenarioDocument
from cairn.replay.scenario_models import (
    ActStep,
    EndEpisodeStep,
    JerichoScenario,
    LocationStateStep,
    MoveStep,
    NarrativeScenario,
    NoteStep,
    NpcStep,
    ObjectiveStep,
    QuestStep,
    RestoreStep,
    SaveStep,
    SayStep,
    TurnStep,
)
from cairn.services.clock import SystemClock
from cairn.services.context import ContextRequest

if TYPE_CHECKING:
    from cairn.container import Container

GameFactory = Callable[[], IGame]


# -- entry points -----------------------------------------------------------------------------


def run_scenario(
    scenario: ScenarioDocument | Path | str,
    workdir: Path,
    *,
    roms: Path | None = None,
    update_expected: bool = False,
    game_factory: GameFactory | None = None,
) -> ReplayReport:
    """Replay one scenario into `workdir` and check its expectations.

    `game_factory` replaces opening the story file of a jericho scenario (tests, other games).
    Raises ScenarioError (or another CairnError) when the scenario cannot be run at all.
    """
    from cairn.container import build_container

    document = scenario if isinstance(scenario, ScenarioDocument) else load_scenario(scenario)
    spec = document.scenario
    prompt_files = document.prompt_paths()  # a document built in code is checked here
    settings = replay_settings(document, workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    container = build_container(settings)
    started = time.perf_counter()
    unknown = 0
    try:
        if isinstance(spec, NarrativeScenario):
            outcome, steps = NarrativeReplay(document, spec, container).run()
        else:
            game = (
                game_factory()
                if game_factory
                else open_story(document, spec, roms, settings.game_npcs)
            )
            replay = JerichoReplay(document, spec, container, game)
            outcome, steps = replay.run()
            unknown = replay.unknown_location_turns
    finally:
        container.store().close()
    seconds = time.perf_counter() - started
    checks = evaluate(
        spec.expect,
        outcome,
        line_of=document.line,
        prompt_files=prompt_files,
        update_expected=update_expected,
    )
    return ReplayReport(
        name=document.name,
        path=document.path,
        kind=spec.kind,
        workdir=workdir,
        checks=checks,
        steps=steps,
        seconds=seconds,
        memories=len(outcome.entries),
        visited=len(outcome.visited),
        remembered=len(outcome.remembered_locations()),
        outcome=outcome,
        unknown_location_turns=unknown,
    )


def replay_files(
    scenarios: Sequence[ScenarioDocument | Path],
    root: Path,
    *,
    roms: Path | None = None,
    update_expected: bool = False,
) -> list[ReplayReport]:
    """Replay each scenario in its own fresh subfolder of `root`; an error fails that one only."""
    reports: list[ReplayReport] = []
    used: set[str] = set()
    for item in scenarios:
        if isinstance(item, ScenarioDocument):
            path, stem = item.path, item.path.stem if item.path else item.name
        else:
            path, stem = Path(item), Path(item).stem
        name = _unique(_safe(stem), used)
        try:
            document = item if isinstance(item, ScenarioDocument) else load_scenario(item)
            folder = prepare_workdir(root, name)
            reports.append(
                run_scenario(document, folder, roms=roms, update_expected=update_expected)
            )
        except CairnError as exc:
            reports.append(
                ReplayReport(name=name, path=path, kind="?", workdir=None, error=str(exc))
            )
    return reports


# -- narrative --------------------------------------------------------------------------------


class _Replay:
    """What both kinds share: the bus, the clock for message timestamps, prompt snapshots."""

    def __init__(self, document: ScenarioDocument, container: Container) -> None:
        self.document = document
        self.container = container
        self.bus: MessageBus = container.bus()
        self.clock: SystemClock = container.clock()
        self.prompts: dict[int, str] = {}
        self.visited: list[int] = []
        self.reported: set[int] = set()

    def add_message(
        self,
        gs: GameState,
        text: str,
        *,
        role: str = "narrator",
        present: list[str] | None = None,
        mentioned: list[str] | None = None,
    ) -> Message:
        """A message at the current location, stamped by the container's clock."""
        return stamped_message(gs, text, self.clock, role, present, mentioned)

    def arrived(self, location_id: int) -> None:
        """Note a location reached (for coverage)."""
        self.reported.add(location_id)
        if location_id not in self.visited:
            self.visited.append(location_id)

    def snapshot(self, gs: GameState, at: str | None) -> None:
        """Assemble the prompts whose expectation names `at` (None: the end of the replay)."""
        for i, prompt in enumerate(self.document.scenario.expect.prompts):
            if prompt.at == at:
                request = ContextRequest.from_game_state(gs)
                self.prompts[i] = (
                    self.container.context_service().assemble(prompt.kind, request).text
                )

    def outcome(self, gs: GameState) -> ReplayOutcome:
        """Everything the checks read, taken before the store is closed."""
        store = self.container.store()
        return ReplayOutcome(
            entries=store.entries(),
            archived=store.archived() if self.document.scenario.expect.archived else [],
            game_state=gs,
            visited=list(self.visited),
            reported=set(self.reported),
            prompts=dict(self.prompts),
        )


def build_world(spec: NarrativeScenario) -> GameState:
    """The scenario's locations, NPCs, quests and acts as an engine's GameState (no location
    yet)."""
    gs = GameState()
    for loc in spec.locations:
        gs.locations[loc.id] = LocationState(
            id=loc.id, name=loc.name, danger_level=loc.danger_level
        )
    for npc in spec.npcs:
        gs.npcs[npc.id] = NPCInstance(
            instance_id=npc.id, name=npc.name or npc.id, current_location_id=npc.location
        )
    for quest in spec.quests:
        gs.quests[quest.id] = QuestState(
            id=quest.id, name=quest.name, objectives={o.id: o.name for o in quest.objectives}
        )
    gs.acts = {act.id: act.name for act in spec.acts}
    return gs


class NarrativeReplay(_Replay):
    """Sends a narrative scenario's steps through the bus, as a narrative engine would."""

    def __init__(
        self, document: ScenarioDocument, spec: NarrativeScenario, container: Container
    ) -> None:
        super().__init__(document, container)
        self.spec = spec
        self.gs = build_world(spec)
        self.reported.update(self.gs.locations)
        self.saves: dict[str, str] = {}
        """Saved games by name: the game state as JSON, as an engine's save file holds it."""

    def run(self) -> tuple[ReplayOutcome, int]:
        """Every step in order; prompts snapshotted after labelled steps and at the end."""
        for i, step in enumerate(self.spec.steps):
            try:
                self.step(step)
            except CairnError as exc:
                raise self.document.error(("steps", i), f"failed: {exc}") from exc
            if step.id is not None:
                self.snapshot(self.gs, step.id)
        self.snapshot(self.gs, None)
        return self.outcome(self.gs), len(self.spec.steps)

    def step(self, step: object) -> None:
        """Apply one step: a message, an NPC move, or a command through the bus."""
        gs = self.gs
        if isinstance(step, MoveStep):
            self.move(step.move, step.via)
        elif isinstance(step, SayStep):
            message = self.add_message(
                gs, step.say, role=step.role, present=step.present, mentioned=step.mentioned
            )
            if step.location is not None:
                message.location_id = step.location
                message.location_name = gs.locations[step.location].name or None
        elif isinstance(step, NpcStep):
            gs.npcs[step.npc].current_location_id = step.to
        elif isinstance(step, NoteStep):
            self.bus.handle(
                c.RememberNote(gs, step.note, step.importance, step.location, world=step.world)
            )
        elif isinstance(step, TurnStep):
            self.turn(step)
        elif isinstance(step, ObjectiveStep):
            self.bus.handle(c.CompleteObjective(gs, step.quest, step.complete_objective, step.tags))
        elif isinstance(step, QuestStep):
            self.bus.handle(c.CompleteQuest(gs, step.complete_quest, step.tags))
        elif isinstance(step, LocationStateStep):
            self.bus.handle(
                c.UpdateLocationState(
                    gs, step.update_location, step.danger_level, step.complete_encounter
                )
            )
        elif isinstance(step, EndEpisodeStep):
            self.bus.handle(c.EndEpisode(gs, won=step.end_episode.won, died=step.end_episode.died))
        elif isinstance(step, ActStep):
            self.bus.handle(c.ProgressAct(gs, step.progress_act, step.tags))
        elif isinstance(step, SaveStep):
            self.bus.handle(c.SaveGame(gs))
            self.saves[step.save] = gs.model_dump_json()
        elif isinstance(step, RestoreStep):
            self.gs = GameState.model_validate_json(self.saves[step.restore])
            self.bus.handle(c.RestoreGame(self.gs))
        else:
            raise ScenarioError(f"unknown step {step!r}")

    def move(self, to: int, via: str | None) -> None:
        """ChangeLocation to a declared location."""
        self.bus.handle(c.ChangeLocation(self.gs, to, self.gs.locations[to].name, via_action=via))
        self.arrived(to)

    def turn(self, step: TurnStep) -> None:
        """One game turn: the action, a move when it moved, the response, then RecordTurn."""
        gs = self.gs
        gs.turn += 1
        before = gs.scenario.current_location_id
        after = step.location_after if step.location_after is not None else before
        self.add_message(gs, f"> {step.turn}", role="player")
        if after is not None and after != before:
            self.move(after, step.turn)
        self.add_message(gs, step.response)
        names = {loc_id: loc.name for loc_id, loc in gs.locations.items()}
        outcome = TurnOutcome(
            episode=gs.episode,
            turn=gs.turn,
            action=step.turn,
            response=step.response,
            reasoning=step.reasoning,
            location_before=before,
            location_before_name=names.get(before, "") if before is not None else "",
            location_after=after,
            location_after_name=names.get(after, "") if after is not None else "",
            score_before=step.score_before,
            score_after=step.score_after,
            inventory_before=step.inventory_before,
            inventory_after=step.inventory_after,
            died=step.died,
            won=step.won,
        )
        self.bus.handle(c.RecordTurn(gs, outcome))


# -- jericho ----------------------------------------------------------------------------------


class JerichoReplay(_Replay):
    """Plays a story file's scripted actions or walkthrough, turn by turn, through the bus.

    Per step: the action as a player message; ChangeLocation(via_action=action) when the
    location id changed; the game text as a message; RecordTurn; CompleteObjective on a score
    gain. EndEpisode (won/died) closes each episode.
    """

    def __init__(
        self,
        document: ScenarioDocument,
        spec: JerichoScenario,
        container: Container,
        game: IGame,
    ) -> None:
        super().__init__(document, container)
        self.spec = spec
        self.game = game
        self.unknown_location_turns = 0

    def actions(self) -> list[str]:
        """The scripted actions, or the walkthrough (cut to `walkthrough_steps`)."""
        if self.spec.actions:
            return list(self.spec.actions)
        walk = self.game.walkthrough()
        if not walk:
            raise self.document.error(("walkthrough",), f"{self.game.name} has no walkthrough")
        return walk[: self.spec.walkthrough_steps] if self.spec.walkthrough_steps else walk

    def run(self) -> tuple[ReplayOutcome, int]:
        """Every episode; the final game state is the last episode's."""
        turns = 0
        gs = GameState()
        try:
            actions = self.actions()
            for episode in range(1, self.spec.episodes + 1):
                gs = GameState(episode=episode)
                turns += self.episode(gs, actions)
        finally:
            self.game.close()
        self.snapshot(gs, None)
        return self.outcome(gs), turns

    def episode(self, gs: GameState, actions: list[str]) -> int:
        """One episode from a reset, through the play loop's translator; returns the turns."""
        tester = ClaimTester(self.game)  # a lesson's claims asked of the game, as in play
        self.container.claim_tests().attach(tester)
        translator = StepTranslator(
            self.bus,
            clock=self.clock,
            on_arrive=lambda obs, _via: self._arrived_at(obs),
            follow=tester.follow,
        )
        obs = translator.start(gs, self.game.reset())
        turn = 0
        for turn, action in enumerate(actions, start=1):
            gs.turn = turn
            translator.player(gs, action)
            obs, _outcome = translator.step(gs, turn, action, obs, self.game.step(action))
            if obs.location_id is not None:
                self.reported.add(obs.location_id)
            if obs.done:
                break
        translator.finish(gs, obs)
        self.unknown_location_turns += translator.track.unknown_location_turns
        return turn

    def _arrived_at(self, obs: GameObservation) -> None:
        if obs.location_id is not None:
            self.arrived(obs.location_id)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "scenario"


def _unique(name: str, used: set[str]) -> str:
    candidate, n = name, 1
    while candidate in used:
        n += 1
        candidate = f"{name}-{n}"
    used.add(candidate)
    return candidate
