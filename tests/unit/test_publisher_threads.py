"""EventPublisher's deferral belongs to the thread whose unit of work it holds (issue 30):
one thread's failing unit must not drop, or send early, another thread's events."""

from __future__ import annotations

import threading

import pytest
from blinker import NamedSignal

from cairn.events.publisher import EventPublisher


def test_a_failing_unit_in_one_thread_keeps_another_threads_events() -> None:
    signal = NamedSignal("test.threads")
    received: list[str] = []
    signal.connect(lambda sender, **kw: received.append(kw["what"]), weak=False)
    publisher = EventPublisher()
    inside = threading.Event()
    failed = threading.Event()

    def committing() -> None:  # thread A: publishes inside its unit, commits after B failed
        with publisher.deferring():
            publisher.publish(signal, None, what="A's event")
            inside.set()
            failed.wait(5)
            assert received == []  # held until A's own unit ends

    a = threading.Thread(target=committing)
    a.start()
    inside.wait(5)
    with pytest.raises(RuntimeError), publisher.deferring():  # thread B's unit fails
        publisher.publish(signal, None, what="B's event")
        raise RuntimeError("B's unit failed")
    failed.set()
    a.join(5)
    assert received == ["A's event"]


def test_a_unit_ending_in_one_thread_does_not_send_another_threads_held_events() -> None:
    signal = NamedSignal("test.threads.early")
    received: list[str] = []
    signal.connect(lambda sender, **kw: received.append(kw["what"]), weak=False)
    publisher = EventPublisher()
    holding = threading.Event()
    release = threading.Event()
    seen_while_held: list[list[str]] = []

    def long_unit() -> None:
        with publisher.deferring():
            publisher.publish(signal, None, what="A's event")
            holding.set()
            release.wait(5)
            seen_while_held.append(list(received))

    a = threading.Thread(target=long_unit)
    a.start()
    holding.wait(5)
    with publisher.deferring():  # B's short unit commits while A's is still open
        publisher.publish(signal, None, what="B's event")
    assert received == ["B's event"]
    release.set()
    a.join(5)
    assert seen_while_held == [["B's event"]] and received == ["B's event", "A's event"]
