"""DeadlineLoop: runs an SDK's async calls under a total deadline, so a server that answers one
byte a second cannot hold a call past its budget (the SDKs' own timeouts are per read)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class DeadlineExceeded(TimeoutError):
    """Raised by `DeadlineLoop.run` when a call did not finish within its budget; the call was
    cancelled (its connection closed, its retry wait ended)."""


class DeadlineLoop:
    """An asyncio event loop in a daemon thread, started at the first call.

    `run` waits for a coroutine at most `seconds` in all: when they pass, the coroutine is
    cancelled there (httpx closes the connection of a cancelled request) and the caller gets
    `DeadlineExceeded`. Calls from several threads run side by side on the one loop. A
    KeyboardInterrupt in the waiting thread cancels the call too.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def run(self, make: Callable[[], Awaitable[T]], seconds: float) -> T:
        """The result of the coroutine `make()` returns, or DeadlineExceeded after `seconds`."""

        async def bounded() -> T:
            scope = asyncio.timeout(seconds)
            try:
                async with scope:
                    return await make()
            except TimeoutError as e:
                if scope.expired():
                    raise DeadlineExceeded(f"no answer within {seconds}s") from e
                raise

        future = asyncio.run_coroutine_threadsafe(bounded(), self._running())
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def close(self, closing: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        """Run `closing()` on the loop (when it ever started), then stop it and its thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            if closing is not None:
                asyncio.run_coroutine_threadsafe(closing(), loop).result(timeout=5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not thread.is_alive():
                loop.close()

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop
