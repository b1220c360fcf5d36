"""Loading Jericho's interpreter for a story file: the one played, and a second one that
shares the first one's preprocessing."""

from __future__ import annotations

import ctypes
import warnings
from pathlib import Path
from typing import Any

from cairn.adapters.game.load_probe import probe_load
from cairn.errors import GameError


def load_interpreter(path: Path, seed: int | None, load_timeout: float | None = None) -> Any:
    """A FrotzEnv for `path`; Jericho's "not fully supported" warning is expected, not shown.

    The load is tried in a child process first (`probe_load`, `load_timeout` seconds at most):
    a story file whose load never ends is refused with a GameError instead of holding this
    process forever."""
    from jericho import FrotzEnv

    probe_load(path, seed, load_timeout)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return FrotzEnv(str(path), seed=seed)
    except Exception as exc:  # the interpreter reports any problem as a plain exception
        raise GameError(f"{path}: Jericho cannot load it: {exc}") from exc


def load_second(first: Any, path: Path, seed: int | None) -> Any:
    """A second FrotzEnv for the story `first` plays, without the ~60 ms Jericho spends on a
    load preprocessing the game's action templates (cairn never uses them): Jericho 3's
    `load` skips that for a story already in the env's per-story cache, which `first`'s
    load filled, so the second env starts with a copy of it. A Jericho whose env has no such
    cache, or that cannot be set up this way, gets a plain load."""
    import jericho.jericho as frotz

    cache = getattr(first, "_cache", None)
    if not isinstance(cache, dict) or str(path) not in cache:
        return load_interpreter(path, seed)
    try:
        env = frotz.FrotzEnv.__new__(frotz.FrotzEnv)
        env._cache = dict(cache)
        env._bindings = None
        env.frotz_lib = frotz._load_frotz_lib()
        env.load(str(path), seed)
        env.is_fully_supported = first.is_fully_supported
    except Exception:  # another Jericho's insides: the plain way
        return load_interpreter(path, seed)
    return env


class MemoryReader:
    """An interpreter's dynamic memory, read as often as every turn: copied into a buffer kept
    for it (Jericho's `get_state` copies the stack and more too, through numpy); `get_state`
    when the interpreter library has no `getRAM`."""

    def __init__(self, env: Any) -> None:
        """Read `env`'s memory."""
        self._env = env
        lib = getattr(env, "frotz_lib", None)
        self._direct = hasattr(lib, "getRAM") and hasattr(lib, "getRAMSize")
        self._buffer: ctypes.Array[ctypes.c_uint8] | None = None

    def read(self) -> bytes:
        """The dynamic memory as it is now."""
        if not self._direct:
            return bytes(self._env.get_state()[0])
        lib = self._env.frotz_lib
        if self._buffer is None:
            self._buffer = (ctypes.c_uint8 * int(lib.getRAMSize()))()
        lib.getRAM(self._buffer)
        return bytes(self._buffer)
