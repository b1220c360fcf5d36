"""`cairn.container`, the composition root, in a checkout: its source is `container.py` at the
repository's top (the design's layout), loaded here under this name, once. Its module object is
the one `import cairn.container` gives, and tracebacks name `container.py`. (A built wheel holds
that file itself in this place: see setup.py. `container.pyi` names it for type checkers.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_SOURCE = Path(__file__).resolve().parent.parent / "container.py"
_spec = importlib.util.spec_from_file_location(__name__, _SOURCE)
if _spec is None or _spec.loader is None:  # pragma: no cover - a checkout always has it
    raise ImportError(f"cairn's composition root is missing: {_SOURCE}")
_module = importlib.util.module_from_spec(_spec)
sys.modules[__name__] = _module
try:
    _spec.loader.exec_module(_module)
except BaseException:
    del sys.modules[__name__]  # (as a failed import leaves nothing behind)
    raise
