"""The rules' verdict on a turn, as the hint a model summarizer sees (LLM-first synthesis).

Offline, the rules write failures, no-ops and new ways between known rooms themselves
(`ActionMemories`). With a model, those turns go to the summarizer too, and these functions say
what the rules make of them: the verdict from the game's state first and its words second, and
the memory the rules would write (the same title and text their own writer produces: a decision
that repeats it word for word keeps the rules' write as it is).
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.interfaces.summarizer import RulesVerdict
from cairn.models.game import TurnOutcome
from cairn.models.memory import MemoryCategory, MemoryEntry
from cairn.services.memory_rules import ledger_of
from cairn.services.outcomes import (
    Verdict,
    failure_text,
    failure_title,
    later_note,
    ledger_commands,
    ledger_key,
    normalize_command,
    said,
    verdict,
    why_not,
    with_note,
)


def turn_verdict(outcome: TurnOutcome, existing: Sequence[MemoryEntry] = ()) -> RulesVerdict:
    """The rules' verdict alone (no memory of their own): what changed, or why nothing did;
    for a turn that worked, whether the failure ledger here listed its action."""
    found = verdict(outcome)
    if found is Verdict.CHANGED:
        changed = [
            name
            for name, did in (
                ("location", outcome.moved),
                (f"score {outcome.score_delta:+d}", outcome.score_delta != 0),
                ("inventory", outcome.inventory_changed),
                ("the game's world (objects)", bool(outcome.world_changed)),
            )
            if did
        ]
        reason = f"the state changed: {', '.join(changed)}; a turn that changed it is no failure"
        ledger = ledger_of(existing, outcome.action)
        if ledger is not None:
            reason += (
                f"; it had failed here before (listed in '{ledger.title}'): "
                "the rules take it off that list"
            )
        return RulesVerdict(outcome=found.value, reason=reason)
    if found is Verdict.NEUTRAL:
        return RulesVerdict(outcome=found.value, reason="nothing changed and nothing was refused")
    return RulesVerdict(outcome=found.value, reason=why_not(outcome))


def failure_hint(outcome: TurnOutcome, existing: Sequence[MemoryEntry]) -> RulesVerdict | None:
    """The failure ledger the rules would write for a plain failure (one FAILURE memory per
    room and object listing every command that failed on it); None when its command is listed
    already (the rules change nothing). Mirrors `failure_ledger.record_failure`."""
    command = normalize_command(outcome.action)
    thing = ledger_key(command)
    tag = f"object:{thing}" if thing else "object:-"
    current = next(
        (e for e in existing if e.category is MemoryCategory.FAILURE and tag in e.tags), None
    )
    commands = ledger_commands(current) if current is not None else []
    if command in commands:
        return None
    commands.append(command)
    base = turn_verdict(outcome)
    return base.model_copy(
        update={
            "category": MemoryCategory.FAILURE,
            "title": failure_title(commands),
            "text": failure_text(commands, outcome.response),
            "replaces": [current.id] if current is not None else [],
        }
    )


def qualify_hint(earlier: MemoryEntry, outcome: TurnOutcome) -> RulesVerdict | None:
    """A success remembered here that did nothing this time: the rules supersede it with itself
    and what differed; None when that difference is said already. Mirrors
    `failure_ledger.qualify`."""
    command = normalize_command(outcome.action)
    reason = why_not(outcome)
    if f"Later, {command}: {reason} (" in earlier.text:
        return None
    note = later_note(command, reason, said(outcome.response), outcome.episode, outcome.turn)
    return turn_verdict(outcome).model_copy(
        update={
            "category": earlier.category,
            "title": earlier.title,
            "text": with_note(earlier.text, note),
            "replaces": [earlier.id],
        }
    )


def move_hint(
    outcome: TurnOutcome, known_name: str = "", news: Sequence[str] = ()
) -> RulesVerdict:
    """A new way between rooms already seen: the map fact the rules write. Mirrors
    `turn_writes.record_move` (`known_name`: the stored name of the room reached). A move
    remembered already whose answer said something new on arrival (`news`): the rules write
    nothing (the way is known) and say what was new."""
    action = normalize_command(outcome.action)
    after = outcome.location_after
    where = outcome.location_after_name or known_name or f"location {after}"
    if news:
        base = turn_verdict(outcome)
        count = f"{len(news)} sentence{'s' if len(news) > 1 else ''}"
        return base.model_copy(
            update={
                "reason": f"{base.reason}; '{action}' to {where} is remembered already, but on"
                f" arrival the game said {count} it never said there before (in the response)"
            }
        )
    return turn_verdict(outcome).model_copy(
        update={
            "category": MemoryCategory.NOTE,
            "title": f"'{action}' leads to {where}",
            "text": f"'{action}' from here reaches {where} (L{after}).",
        }
    )
