"""Package attributes imported on first use (PEP 562), so importing a package stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name in `homes` is read from its module
    (`homes[name]`, relative to the package) the first time it is asked for."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{home}"), name)

    return __getattr__
