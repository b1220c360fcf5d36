"""A headless Chromium driven over the Chrome DevTools Protocol (a websocket), for browser tests.

Nothing is downloaded: the browser is the system's `/usr/bin/chromium`, started with a fresh
profile and flags that keep it off the network; the port is read from `DevToolsActivePort`.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

import websocket

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


class Page:
    """One tab: send commands, collect the events that arrive meanwhile."""

    def __init__(self, url: str) -> None:
        self._ws = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Run one command; its result (AssertionError with the protocol's error)."""
        self._next += 1
        ident = self._next
        self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == ident:
                assert "error" not in message, (method, message["error"])
                result: dict[str, Any] = message.get("result", {})
                return result
            self.events.append(message)

    def wait_for(self, event: str, timeout: float = 30.0) -> dict[str, Any]:
        """The first event named `event` (already received or arriving within `timeout`)."""
        deadline = time.monotonic() + timeout
        while True:
            for message in self.events:
                if message.get("method") == event:
                    return message
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {event} within {timeout} s"
            self._ws.settimeout(remaining)
            self.events.append(json.loads(self._ws.recv()))

    def drain(self, seconds: float = 0.3) -> None:
        """Collect whatever events arrive in the next `seconds`."""
        self._ws.settimeout(seconds)
        try:
            while True:
                self.events.append(json.loads(self._ws.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self._ws.settimeout(30)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-able)."""
        answer = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in answer, answer["exceptionDetails"]
        return answer["result"].get("value")

    def click(self, x: float, y: float) -> None:
        """A real left click (press and release) at viewport coordinates."""
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def close(self) -> None:
        self._ws.close()


class Chromium:
    """`with Chromium(profile) as browser: page = browser.page()`; the process ends on exit."""

    def __init__(self, profile: Path, width: int = 1400, height: int = 1000) -> None:
        self.profile = profile
        self.size = (width, height)
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Chromium:
        self.profile.mkdir(parents=True, exist_ok=True)
        self._process = subprocess.Popen(
            [
                str(CHROMIUM),
                *FLAGS,
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                f"--window-size={self.size[0]},{self.size[1]}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def port(self, timeout: float = 30.0) -> int:
        """The DevTools port Chromium chose, from `DevToolsActivePort` in the profile."""
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self._process is not None and self._process.poll() is None, "chromium exited"
            if marker.is_file() and (lines := marker.read_text().split()):
                return int(lines[0])
            time.sleep(0.05)
        raise AssertionError(f"chromium wrote no {marker} within {timeout} s")

    def page(self) -> Page:
        """The browser's first tab."""
        listing = f"http://127.0.0.1:{self.port()}/json/list"
        with urllib.request.urlopen(listing, timeout=30) as answer:  # the local DevTools port
            targets = json.load(answer)
        [target] = [t for t in targets if t.get("type") == "page"][:1]
        return Page(target["webSocketDebuggerUrl"])
