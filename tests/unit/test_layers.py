"""The layers point down: a module imports its own layer and the layers beneath it, never one
above (issue 30, "imports that point downhill").

From the bottom up (`LAYERS`):

    base         errors, defaults, settings, extras, lazy_names, compact_json: anyone's
    models       the domain's values and their invariants (MemoryEntry, GameState, EpisodeStats,
                 the map's saved form, the compass vocabulary)
    interfaces   contracts only: ports (ABCs, Protocols) and the values they speak in
    lessons      a turn's lesson and the tests that confirm its claims against the game
    events       commands, signals, the publisher, the bus and its handlers (on ports only)
    services     the memory engine, context builders, the map graph, outcomes
    fiction      the interactive-fiction rules: what a turn teaches, as typed memory changes
    adapters     files, stores, games, LLM transports, the workdir's claim: base, models and
                 interfaces only
    agents       deciders (the summarizer, the players, retrievers): never an adapter
    application  play, replay, report, runtime: use cases that put the parts to work
    composition  container.py, the one composition root: builds every part
    entry        the command line, `cairn.Memory`, `cairn.testing`, the package itself

Every import counts: at the top, inside a function (a lazy import is still a dependency), and
under `TYPE_CHECKING` (a type is one too: that is how `graph` and `render` imported each
other). An exception is kept only in `ALLOWED`, with its reason; an entry no longer used fails
too, so the list only shrinks. Within a layer any import is fine, but no two modules may import
each other round a cycle.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import cairn

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "cairn.errors",
            "cairn.defaults",
            "cairn.settings",
            "cairn.file_names",
            "cairn.extras",
            "cairn.lazy_names",
            "cairn.compact_json",
        ),
    ),
    ("models", ("cairn.models",)),
    ("interfaces", ("cairn.interfaces",)),
    # what a turn teaches and how the game confirms it: pure functions over models and ports
    ("lessons", ("cairn.lessons",)),
    ("events", ("cairn.events",)),
    ("services", ("cairn.services",)),
    # the interactive-fiction rules: one implementation of the engine's ITurnInterpreter
    ("fiction", ("cairn.fiction",)),
    # the workdir's claim is a file on disk, like the stores: an adapter
    ("adapters", ("cairn.adapters", "cairn.workdir")),
    ("agents", ("cairn.agents",)),
    ("application", ("cairn.play", "cairn.replay", "cairn.report", "cairn.runtime")),
    ("composition", ("cairn.container",)),
    (
        "entry",
        (
            "cairn",
            "cairn.__main__",
            "cairn.cli",
            "cairn.cli_options",
            "cairn.cli_memories",
            "cairn.cli_report",
            "cairn.memory_api",
            "cairn.testing",
        ),
    ),
)
"""Each layer and the modules (with their submodules) it holds, from the bottom up."""

_ORDER = [name for name, _ in LAYERS]
_BELOW = {name: set(_ORDER[: i + 1]) for i, name in enumerate(_ORDER)}

MAY_IMPORT: dict[str, set[str]] = {
    **_BELOW,
    # adapters translate the outside world into the domain's values through its ports: they
    # know no engine (services, events), no decider (agents) and no use case
    "adapters": {"base", "models", "interfaces", "adapters"},
    # agents decide through ports; the concrete client or store is the container's to give
    "agents": _BELOW["agents"] - {"adapters"},
}
"""The layers a layer's modules may import."""

ALLOWED: dict[tuple[str, str], str] = {
    # The use cases' entry functions take settings and build the container themselves: their
    # callers (the command line, tests, benches, engines) pass settings, not parts. Each
    # builds the container once and takes every part from its providers; nothing below them
    # imports them, and the container imports none of them (no cycle).
    ("cairn.play.runner", "cairn.container"): (
        "run_play(settings) is the play run's entry (the CLI, 30 tests and the benches call"
        " it): it claims the workdir before anything is built, then builds the container"
    ),
    ("cairn.replay.runner", "cairn.container"): (
        "run_scenario(scenario, workdir) is `cairn replay`'s entry: the container is built"
        " from the scenario's own settings"
    ),
    ("cairn.report.writer", "cairn.container"): (
        "write_report and workdir_map_svg open the workdir's store through the container when"
        " the caller gives none (`cairn report`, `cairn map --format svg`)"
    ),
    ("cairn.runtime.demo", "cairn.container"): (
        "play_demo(settings) is `cairn demo`'s entry: one container on a store in memory for"
        " the expected memories, one on the settings' store"
    ),
}
"""Imports kept although they point up: (importer, imported module) -> why."""


@dataclass(frozen=True)
class Import:
    """One import of a cairn module: where it is and what it names."""

    path: Path
    line: int
    importer: str
    imported: str


def package_modules() -> dict[str, Path]:
    """Every module of the package by dotted name, with its source file."""
    root = Path(cairn.__file__).parent
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(["cairn", *parts])] = path
    return modules


def imports_of(name: str, source: str, path: Path, known: set[str]) -> list[Import]:
    """The cairn modules `source` (the module `name`) imports, wherever the import stands.

    `from package import name` counts as importing the submodule when `known` has it."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                for alias in node.names
            ]
        for target in dict.fromkeys(targets):  # `from m import a, b`: m once
            if target == "cairn" or target.startswith("cairn."):
                found.append(Import(path, node.lineno, name, target))
    return found


def layer_of(module: str) -> str | None:
    """The layer of the longest prefix that holds `module`; None when no layer does."""
    holding = [
        (len(prefix), layer)
        for layer, prefixes in LAYERS
        for prefix in prefixes
        if module == prefix or module.startswith(prefix + ".")
    ]
    return max(holding)[1] if holding else None


def uphill(found: list[Import], allowed: dict[tuple[str, str], str]) -> list[str]:
    """A line for each import that points up and is not allowed (`path:line: what`)."""
    problems = []
    for item in found:
        source, target = layer_of(item.importer), layer_of(item.imported)
        if source is None or target is None:
            continue  # test_every_module_is_in_a_layer names it
        if target in MAY_IMPORT[source] or (item.importer, item.imported) in allowed:
            continue
        may = ", ".join(layer for layer in _ORDER if layer in MAY_IMPORT[source])
        problems.append(
            f"{_shown(item.path)}:{item.line}: {item.importer} ({source}) imports {item.imported}"
            f" ({target}); {source} may import only {may}"
        )
    return problems


def _shown(path: Path) -> Path:
    """`path` from the working directory when it is under it (as the editor opens it)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def cycles(found: list[Import]) -> list[list[str]]:
    """The groups of modules that import each other, round a cycle (Tarjan's strongly
    connected components of more than one module)."""
    edges: dict[str, set[str]] = {}
    for item in found:
        if item.importer != item.imported:
            edges.setdefault(item.importer, set()).add(item.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(edges.get(module, ())):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = [stack.pop()]
            while group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return groups


def all_imports() -> list[Import]:
    modules = package_modules()
    known = set(modules)
    found: list[Import] = []
    for name, path in modules.items():
        found += imports_of(name, path.read_text(encoding="utf-8"), path, known)
    return found


def test_every_module_is_in_a_layer() -> None:
    assert [m for m in package_modules() if layer_of(m) is None] == []


def test_no_import_points_uphill() -> None:
    problems = uphill(all_imports(), ALLOWED)
    assert problems == [], "imports pointing up:\n" + "\n".join(problems)


def test_no_modules_import_each_other() -> None:
    """A cycle has no bottom: neither module can be read, tested or moved without the other
    (the map graph and its renderings were one)."""
    assert cycles(all_imports()) == []


def test_every_allowed_exception_is_still_needed() -> None:
    """An exception that no module takes any more is struck off the list."""
    used = {(i.importer, i.imported) for i in all_imports()}
    assert [pair for pair in ALLOWED if pair not in used] == []


# -- the check itself: an adapter that reached for a service is caught, wherever it hides ----


def _check(name: str, source: str) -> list[str]:
    path = Path(name.replace(".", "/") + ".py")
    known = set(package_modules())
    return uphill(imports_of(name, source, path, known), ALLOWED)


def test_an_adapter_importing_a_service_fails_the_check() -> None:
    source = "from cairn.services.map import MapGraph\n"
    problems = _check("cairn.adapters.storage.new_store", source)
    assert problems == [
        "cairn/adapters/storage/new_store.py:1: cairn.adapters.storage.new_store (adapters)"
        " imports cairn.services.map (services); adapters may import only base, models,"
        " interfaces, adapters"
    ]


def test_lazy_relative_and_type_only_imports_count() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from cairn.play.session import PlaySession\n"
        "def f() -> None:\n"
        "    from ...agents import summarizer\n"
        "    import cairn.container\n"
    )
    problems = _check("cairn.services.context.new_builder", source)
    assert [p.split(": ", 1)[0] for p in problems] == [
        "cairn/services/context/new_builder.py:3",
        "cairn/services/context/new_builder.py:5",
        "cairn/services/context/new_builder.py:6",
    ]
    assert "imports cairn.agents.summarizer (agents)" in problems[1]


def test_a_layer_may_import_itself_and_below() -> None:
    source = "from cairn.models.memory import MemoryEntry\nfrom cairn.interfaces import store\n"
    assert _check("cairn.services.new_service", source) == []
    assert _check("cairn.agents.new_agent", "from cairn.adapters.files import atomic_write_text\n")
