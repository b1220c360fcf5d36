"""ModelWatch: whether a run's model is answering, so a run it never answered fails, and one it
stopped answering stops (unless falling back to the offline stand-ins was chosen)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

FALLBACK_HINT = "--llm-fallback offline lets the offline player play on"


@dataclass
class ModelWatch:
    """A run's model, watched through its figures.

    `server` names the model server (`ILLMClient.server`); `calls` and `failures` read the
    usage meter's totals (a call whose answer could not be used is a failure too);
    `circuit_opened` says how often the circuit breaker opened and `last_failure` what the
    last counted failure said; `fallback` is the `llm_fallback` setting.
    """

    server: str
    calls: Callable[[], int]
    failures: Callable[[], int]
    circuit_opened: Callable[[], int]
    last_failure: Callable[[], str | None]
    fallback: str = "none"
    stopped: bool = False
    """The run stopped because the model stopped answering."""

    def must_stop(self) -> bool:
        """Asked after every turn: True (and remembered) once the circuit has opened and no
        fallback was chosen: the model is not answering, and the stand-ins may not play."""
        if not self.stopped and self.fallback == "none" and self.circuit_opened() > 0:
            self.stopped = True
        return self.stopped

    def answered(self) -> int:
        """Calls whose answer was used."""
        return max(0, self.calls() - self.failures())

    def failure(self, episode: int | None = None, turn: int | None = None) -> str | None:
        """At the run's end (its last episode and turn): one line naming the server when the
        model never gave a usable answer or the run stopped for it; None when the model did
        its part."""
        calls = self.calls()
        last = " ".join((self.last_failure() or "none recorded").split())
        if calls and not self.answered():
            plural = "" if calls == 1 else "s"
            what = f"never gave a usable answer ({calls} call{plural}; the last failure: {last})"
        elif self.stopped:
            what = f"failed repeatedly, so its circuit opened (the last failure: {last})"
        else:
            return None
        where = ""
        if self.stopped:
            at = f" after episode {episode}, turn {turn}" if episode is not None else ""
            where = f"; the run stopped{at} ({FALLBACK_HINT})"
        return f"the model at {self.server} {what}{where}"
