"""MessageBus: hands each command to its one handler inside one unit of work."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from cairn.errors import UnknownCommandError
from cairn.events.commands import Command
from cairn.events.publisher import EventPublisher
from cairn.interfaces.store import IMemoryStore

log = logging.getLogger(__name__)

Handler = Callable[[Any], Any]


@dataclass(frozen=True)
class OnFirstUse:
    """A handler's method whose object is built when a command first needs it (a library
    write builds its editor, not the memory service, the map it loads or the LLM client)."""

    build: Callable[[], Any]
    method: str


class MessageBus:
    """Dispatches commands. All store writes a command makes are committed together, once."""

    def __init__(
        self,
        handlers: Mapping[type[Command], Handler | OnFirstUse],
        store: IMemoryStore,
        publisher: EventPublisher | None = None,
    ) -> None:
        self._handlers = dict(handlers)
        self._store = store
        self._publisher = publisher or EventPublisher()

    def handle(self, command: Command) -> Any:
        """Run the handler of `command` and return what it returns."""
        handler = self._handlers.get(type(command))
        if handler is None:
            raise UnknownCommandError(f"no handler registered for {type(command).__name__}")
        if isinstance(handler, OnFirstUse):
            handler = self._handlers[type(command)] = getattr(handler.build(), handler.method)
        log.debug("handling %s", type(command).__name__)
        # events raised while handling are sent after the unit of work commits (Cosmic
        # Python's collect_new_events): a receiver never sees a state that is not stored
        with self._publisher.deferring(), self._store.transaction():
            return handler(command)

    def steady(self) -> AbstractContextManager[None]:
        """A block whose store reads look for others' writes once (`IStoreReader.steady`):
        a play turn, whose commands are units of their own. It holds no lock."""
        return self._store.steady()

    @contextmanager
    def unit(self) -> Iterator[None]:
        """One unit of work for every command handled inside: their store writes are
        committed together, once, when the block ends (none when it raises), and their events
        are sent after that commit."""
        with self._publisher.deferring(), self._store.transaction():
            yield
