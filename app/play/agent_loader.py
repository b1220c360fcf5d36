"""`cairn play --agent module:Class`: play with your own agent.

The class (or any callable) is called with no arguments and must return an object with the
`IAgent` shape: `decide(view: AgentView) -> AgentDecision` (the action to send), and optionally
`new_episode(episode: int)`. It need not subclass `cairn.interfaces.agent.IAgent`.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from cairn.errors import ConfigError
from cairn.interfaces.agent import AgentDecision, AgentView, IAgent


class _Adapted(IAgent):
    """An object with `decide` (and maybe `new_episode`) as an IAgent."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def decide(self, view: AgentView) -> AgentDecision:
        decision = self._inner.decide(view)
        if isinstance(decision, str):  # a bare command is accepted too
            return AgentDecision(action=decision)
        return cast(AgentDecision, decision)

    def new_episode(self, episode: int) -> None:
        hook = getattr(self._inner, "new_episode", None)
        if callable(hook):
            hook(episode)


@contextmanager
def _current_folder_importable() -> Iterator[None]:
    """The current folder first on the import path while the agent's module is imported, as
    `python -m cairn` has it: the `cairn` script and `python -m cairn` find the same modules."""
    here = os.getcwd()
    added = here not in sys.path and "" not in sys.path
    if added:
        sys.path.insert(0, here)
    try:
        yield
    finally:
        if added and here in sys.path:
            sys.path.remove(here)


def load_agent(spec: str) -> IAgent:
    """The agent `module:Class` names; ConfigError naming what is wrong."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"--agent: expected module:Class, got {spec!r}")
    try:
        with _current_folder_importable():
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"--agent: cannot import {module_name!r}: {exc}") from exc
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ConfigError(f"--agent: {module_name} has no class or function {attribute!r}")
    try:
        agent = factory()
    except Exception as exc:
        raise ConfigError(f"--agent: {spec}() failed: {exc}") from exc
    if not callable(getattr(agent, "decide", None)):
        raise ConfigError(f"--agent: {spec} has no decide(view) method")
    return agent if isinstance(agent, IAgent) else _Adapted(agent)
