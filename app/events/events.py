"""Events: past-tense blinker signals in one app-owned Namespace."""

from __future__ import annotations

from blinker import NamedSignal, Namespace

cairn_signals = Namespace()
"""The only Namespace cairn's signals live in (never blinker's process-global one)."""

location_exited: NamedSignal = cairn_signals.signal("location-exited")
"""Sent with `location_id` after the visit being left was summarized (or skipped)."""

location_entered: NamedSignal = cairn_signals.signal("location-entered")
"""Sent with `location_id`, `from_location_id` after a move."""

memory_recorded: NamedSignal = cairn_signals.signal("memory-recorded")
"""Sent with `entry` after a memory was durably stored."""

memory_superseded: NamedSignal = cairn_signals.signal("memory-superseded")
"""Sent with `old_id`, `new_id` after a supersession was durably stored."""

world_event_recorded: NamedSignal = cairn_signals.signal("world-event-recorded")
"""Sent with `event_kind`, `related` after a world event was handled."""

summary_failed: NamedSignal = cairn_signals.signal("summary-failed")
"""Sent with `scope`, `error` when a summarizer call failed; nothing was lost."""

episode_ended: NamedSignal = cairn_signals.signal("episode-ended")
"""Sent with `episode`, `won`, `died` after an episode closed."""
