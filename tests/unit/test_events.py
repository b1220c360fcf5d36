"""Signals: app-owned namespace, receivers isolated from each other's failures."""

from __future__ import annotations

from typing import Any

import blinker
import pytest

from cairn.events import events
from cairn.events.publisher import EventPublisher


def test_signals_live_in_the_app_namespace_not_blinkers_global_one() -> None:
    assert events.cairn_signals["cairn.memory-recorded"] is events.memory_recorded
    assert blinker.signal("cairn.memory-recorded") is not events.memory_recorded


def test_a_failing_receiver_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    got: list[Any] = []

    def bad(sender: object, **kw: Any) -> None:
        raise RuntimeError("receiver broke")

    def good(sender: object, **kw: Any) -> None:
        got.append(kw["entry"])

    publisher = EventPublisher()
    events.memory_recorded.connect(bad, weak=False)
    try:
        with events.memory_recorded.connected_to(good):
            publisher.publish(events.memory_recorded, object(), entry="e1")
    finally:
        events.memory_recorded.disconnect(bad)
    assert got == ["e1"]
    assert publisher.failures == 1
    assert "receiver broke" in caplog.text
