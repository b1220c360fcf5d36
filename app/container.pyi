# The names of `cairn.container` for type checkers: the module is `container.py` at the
# repository's top, loaded under this name by `container.py` here (see its docstring).
from container import Container as Container
from container import build_container as build_container
from container import build_summarizer as build_summarizer
from container import llm_kind as llm_kind
from container import make_clock as make_clock
from container import memory_kind as memory_kind
