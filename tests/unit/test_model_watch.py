"""ModelWatch: when a run stops for its model, and the one line a failed run ends with."""

from __future__ import annotations

from cairn.play.model_watch import ModelWatch


def watch(calls: int, failures: int, opened: int, fallback: str = "none") -> ModelWatch:
    return ModelWatch(
        server="OpenAI-compatible server at http://127.0.0.1:9/v1",
        calls=lambda: calls,
        failures=lambda: failures,
        circuit_opened=lambda: opened,
        last_failure=lambda: "connection failed:\n  Connection error.",
        fallback=fallback,
    )


def test_a_model_that_answered_and_never_tripped_the_circuit_is_no_failure() -> None:
    fine = watch(calls=10, failures=2, opened=0)
    assert not fine.must_stop() and fine.failure(1, 30) is None
    assert watch(calls=0, failures=0, opened=0).failure() is None  # nothing was asked


def test_the_circuit_opening_stops_the_run_unless_falling_back_was_chosen() -> None:
    down = watch(calls=10, failures=4, opened=1)
    assert down.must_stop() and down.stopped
    assert down.failure(2, 7) == (
        "the model at OpenAI-compatible server at http://127.0.0.1:9/v1 failed repeatedly, so"
        " its circuit opened (the last failure: connection failed: Connection error.); the run"
        " stopped after episode 2, turn 7 (--llm-fallback offline lets the offline player play"
        " on)"
    )
    offline = watch(calls=10, failures=4, opened=1, fallback="offline")
    assert not offline.must_stop() and offline.failure(2, 30) is None


def test_a_model_that_never_answered_fails_whatever_the_fallback() -> None:
    never = watch(calls=1, failures=1, opened=1, fallback="offline")
    assert not never.must_stop()
    assert never.failure(1, 30) == (
        "the model at OpenAI-compatible server at http://127.0.0.1:9/v1 never gave a usable"
        " answer (1 call; the last failure: connection failed: Connection error.)"
    )
