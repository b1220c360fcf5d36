"""The failure ledger: one FAILURE memory per (room, object) listing the commands that failed
on it; a success that did nothing this time, qualified; a ledger command that now worked, retired
(with the steps and items it needed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.fiction.turn_writes import as_of
from cairn.lessons.build import lesson_of
from cairn.models.game import TurnOutcome
from cairn.models.lesson import render
from cairn.models.memory import Ledger, MemoryCategory, MemoryEntry, MemoryScope, MemorySource
from cairn.services.memory_core import MemoryCore
from cairn.services.memory_rules import ledger_of, prerequisites, success_of
from cairn.services.outcomes import (
    action_key,
    failure_title,
    later_note,
    ledger_commands,
    ledger_key,
    ledger_last_answer,
    ledger_of_commands,
    normalize_command,
    render_ledger,
    said,
    why_not,
    with_note,
)
from cairn.services.preconditions import needed_items


def qualify(core: MemoryCore, earlier: MemoryEntry, outcome: TurnOutcome) -> MemoryEntry | None:
    """A success remembered here that did nothing this time: superseded by itself with what
    differed ("Later, take leaflet: already held (Ep2, T1: ...)"), so that a success and a
    failure of one action never stand side by side. Each difference is said once: the same
    one again changes nothing."""
    command = normalize_command(outcome.action)
    reason = why_not(outcome)
    if f"Later, {command}: {reason} (" in earlier.text:
        return None
    note = later_note(command, reason, said(outcome.response), outcome.episode, outcome.turn)
    entry = earlier.model_copy(
        update={
            "id": core.clock.new_id(earlier.title),
            "created_at": core.clock.now(),
            "text": with_note(earlier.text, note),
            "superseded_by": None,
        }
    )
    return core.add_replacing(as_of(entry, outcome), [earlier])


def retire_failure(
    core: MemoryCore,
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
    listed = ledger_commands(ledger)
    left = [c for c in listed if action_key(c) != key]
    answer = ledger_last_answer(ledger) if listed and action_key(listed[-1]) != key else ""
    when = f" (Ep{ledger.episode})" if ledger.episode is not None else ""
    before = f"'{normalize_command(outcome.action)}' had failed here before{when}."
    entry = entry or success_of(existing, outcome.action)  # a move already remembered
    if entry is None:
        steps = [
            t.action
            for t in prerequisites(history)
            if t.location_before == outcome.location_before and action_key(t.action) != key
        ]
        action = normalize_command(outcome.action)
        lesson = lesson_of(
            outcome, needs=needed_items(outcome, history), steps=steps, claims=core.claims
        )
        entry = core.new_entry(
            scope=MemoryScope.LOCATION,
            category=MemoryCategory.SUCCESS,
            title=f"'{action}' worked",
            text=render(
                f"'{action}' worked here (Ep{outcome.episode}, T{outcome.turn}): "
                f'"{said(outcome.response)}" {before}',
                lesson,
            ),
            lesson=lesson,
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
    with core.draft() as tx:
        if added:
            tx.add(entry)
            core.announce(tx, entry)
        else:
            tx.update(entry)
        if left:
            kept = Ledger(commands=left, answer=answer)
            tx.update(
                ledger.model_copy(
                    update={
                        "title": failure_title(left),
                        "text": render_ledger(kept),
                        "ledger": kept,
                    }
                )
            )
        else:
            tx.supersede(ledger.id, entry.id)
            tx.after_commit(core.superseded_callback(ledger.id, entry.id))
    return entry


def failed_here(existing: Sequence[MemoryEntry], action: str) -> bool:
    return ledger_of(existing, action) is not None


def record_failure(core: MemoryCore, outcome: TurnOutcome) -> MemoryEntry | None:
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
            for e in core.location_memories(source)
            if e.category is MemoryCategory.FAILURE and tag in e.tags
        ),
        None,
    )
    commands = ledger_commands(current) if current is not None else []
    if command in commands:
        return None
    commands.append(command)
    ledger = ledger_of_commands(commands, outcome.response)
    fields: dict[str, Any] = {
        "title": failure_title(commands),
        "text": render_ledger(ledger),
        "ledger": ledger,
    }
    with core.draft() as tx:
        if current is None:
            entry = core.new_entry(
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
        core.announce(tx, entry)
    return entry
