"""Events: past-tense blinker signals, named `cairn.*`, in one cairn-owned Namespace.

Each signal's docstring lists the keyword arguments its receivers get; the sender is the
service that sent it. Connect with `connect(signal, receiver)`: it keeps a strong reference, so
a lambda or a nested function keeps receiving (blinker's own `signal.connect` holds a weak one,
and a receiver nobody else references is dropped at once, silently).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from blinker import NamedSignal, Namespace

cairn_signals = Namespace()
"""The only Namespace cairn's signals live in (never blinker's process-global one)."""

location_exited: NamedSignal = cairn_signals.signal("cairn.location-exited")
"""Sent with `location_id` after the visit being left was summarized (or skipped)."""

location_entered: NamedSignal = cairn_signals.signal("cairn.location-entered")
"""Sent with `location_id`, `from_location_id` after a move."""

memory_recorded: NamedSignal = cairn_signals.signal("cairn.memory-recorded")
"""Sent with `entry` after a memory was durably stored."""

memory_superseded: NamedSignal = cairn_signals.signal("cairn.memory-superseded")
"""Sent with `old_id`, `new_id` after a supersession was durably stored."""

world_event_recorded: NamedSignal = cairn_signals.signal("cairn.world-event-recorded")
"""Sent with `event_kind`, `related` after a world event was handled."""

summary_failed: NamedSignal = cairn_signals.signal("cairn.summary-failed")
"""Sent with `scope`, `error` when a summarizer call failed; nothing was lost."""

game_restored: NamedSignal = cairn_signals.signal("cairn.game-restored")
"""Sent with `checkpoint` (the MemoryCheckpoint) and `report` (the RestoreReport) after a
restore was stored; each memory it undid was announced by `memory_superseded` first."""

episode_ended: NamedSignal = cairn_signals.signal("cairn.episode-ended")
"""Sent with `episode`, `won`, `died` after an episode closed."""


def connect(
    signal: NamedSignal, receiver: Callable[..., Any], *, sender: Any = None
) -> Callable[..., Any]:
    """Connect `receiver` to `signal` (from any sender, or only `sender`), holding a strong
    reference so it keeps receiving; returns it (disconnect with `signal.disconnect(receiver)`).
    """
    if sender is None:
        signal.connect(receiver, weak=False)
    else:
        signal.connect(receiver, sender=sender, weak=False)
    return receiver
