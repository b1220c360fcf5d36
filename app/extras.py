"""Optional parts of cairn and the extras that install them.

The core (memory engine, stores, context builders, narrative replays) needs none of them:

- `cairn[jericho]`: Jericho (Z-machine games, GPL-2.0) and TextWorld (the compiled demo world);
- `cairn[anthropic]`: the Anthropic SDK (`--llm anthropic`);
- `cairn[openai]`: the OpenAI SDK (`--llm openai`: OpenAI or an OpenAI-compatible server);
- `cairn[postgres]`: psycopg and psycopg-pool;
- `cairn[all]`: all of them, the command line's full set.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from cairn.errors import MissingExtraError


def require(module: str, extra: str, *, for_what: str) -> ModuleType:
    """Import `module`, or raise MissingExtraError with the one-line install hint."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{for_what} needs {module}, which is not installed: pip install 'cairn[{extra}]'"
        ) from exc
