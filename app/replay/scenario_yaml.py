"""Scenario YAML with line numbers: PyYAML's safe constructor over libyaml's parser (PyYAML's
own when libyaml is absent), composed within the bounds of `cairn.replay.limits` and without
anchors or aliases; the node tree it keeps maps a field's location back to its line, and every
problem is reported as `file:line: field: message`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from cairn.errors import ScenarioError
from cairn.replay.limits import MAX_ITEMS, MAX_YAML_DEPTH, MAX_YAML_NODES
from cairn.replay.scenario_models import STEP_TAG

Loc = tuple[str | int, ...]
"""A field location inside a scenario, as pydantic reports it: ("steps", 3, "present")."""


class SourceMap:
    """Line numbers (1-based) of the keys and items of a composed YAML document."""

    def __init__(self, root: yaml.Node | None) -> None:
        self._root = root

    def line(self, loc: Sequence[str | int]) -> int:
        """The line of the deepest node `loc` reaches; segments that name nothing are skipped
        (union tags, fields that are missing), so a missing field points at its parent."""
        node = self._root
        if node is None:
            return 1
        line = node.start_mark.line
        for seg in loc:
            if isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    if isinstance(key, yaml.ScalarNode) and key.value == str(seg):
                        line, node = key.start_mark.line, value
                        break
            elif (
                isinstance(node, yaml.SequenceNode)
                and isinstance(seg, int)
                and 0 <= seg < len(node.value)
            ):
                node = node.value[seg]
                line = node.start_mark.line
        return line + 1


def format_loc(loc: Sequence[str | int]) -> str:
    """`steps[3].present` from ("steps", 3, "step:say", "present"); a mapping's key that is
    wrong itself is `...locations[99] (key)` (before pydantic's "[key]" segment)."""
    out = ""
    for i, seg in enumerate(loc):
        key = i + 1 < len(loc) and loc[i + 1] == "[key]"
        if isinstance(seg, int) or key:
            out += f"[{seg}]" + (" (key)" if key else "")
        elif seg != "[key]" and not seg.startswith(STEP_TAG):
            out += f".{seg}" if out else seg
    return out or "(document)"


@dataclass(frozen=True)
class Problem:
    """One problem of a scenario file: its line, the field and what is wrong."""

    line: int
    field: str
    message: str


class ScenarioFileError(ScenarioError):
    """A ScenarioError with its problems: one `file:line: field: message` line each."""

    def __init__(self, path: Path | None, problems: Sequence[Problem]) -> None:
        self.path = path
        self.problems = list(problems)
        where = str(path) if path is not None else "<scenario>"
        super().__init__("\n".join(f"{where}:{p.line}: {p.field}: {p.message}" for p in problems))


def scenario_error(path: Path | None, problems: Sequence[Problem]) -> ScenarioFileError:
    """A ScenarioError listing each problem as `file:line: field: message`."""
    return ScenarioFileError(path, problems)


if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    _EventSource: type[Any] = CParser
else:  # pragma: no cover - PyYAML built without libyaml

    class _PyEventSource(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)

    _EventSource = _PyEventSource


class _TooLarge(Exception):
    """A document past a bound of `cairn.replay.limits`, at the node that crossed it."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


_INT_TAG = "tag:yaml.org,2002:int"
_INT_DIGITS = 4300
"""Python's default limit on the digits of a decimal string turned into an int
(`sys.get_int_max_str_digits`): a value shorter than this always converts."""


class _ScenarioLoader(yaml.composer.Composer, _EventSource, SafeConstructor, Resolver):  # type: ignore[misc]
    """PyYAML's composer and safe constructor over libyaml's events (PyYAML's own scanner and
    parser took most of the 22 s a 200,000-step scenario took to load), without anchors or
    aliases, and with nesting, items per list or mapping and values in all bounded while
    composing: a billion-laughs, self-referencing or oversized document fails at the node
    that crosses a bound, in linear time."""

    def __init__(self, stream: str) -> None:
        _EventSource.__init__(self, stream)
        yaml.composer.Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._depth = 0
        self._nodes = 0
        self._path: list[tuple[str | int, int]] = []
        """The field being composed, with the (0-based) line that names it."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            message = "anchors and aliases (&name, *name) are not allowed in a scenario"
            raise yaml.composer.ComposerError(None, None, message, event.start_mark)
        if self._depth >= MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", event.start_mark
            )
        self._check_items(parent, index)
        segment: tuple[str | int, int] | None = None
        if isinstance(parent, yaml.SequenceNode):
            segment = (index, event.start_mark.line)
        elif isinstance(parent, yaml.MappingNode) and isinstance(index, yaml.Node):
            name = index.value if isinstance(index, yaml.ScalarNode) else "?"
            segment = (str(name), index.start_mark.line)
        if segment is not None:
            self._path.append(segment)
        self._depth += 1
        try:
            self._nodes += 1
            if self._nodes > MAX_YAML_NODES:
                message = f"more than {MAX_YAML_NODES:,} YAML values in the scenario"
                raise _TooLarge(Problem(event.start_mark.line + 1, self._where(), message))
            node = super().compose_node(parent, index)
            if isinstance(node, yaml.ScalarNode) and node.tag == _INT_TAG:
                self._check_int(node)
            return node
        finally:
            self._depth -= 1
            if segment is not None:
                self._path.pop()

    def _check_int(self, node: yaml.ScalarNode) -> None:
        """Refuse an integer Python will not convert (more than 4,300 decimal digits), at its
        line and field, where the constructor would raise a bare ValueError."""
        if len(node.value) <= _INT_DIGITS:
            return
        try:
            self.construct_yaml_int(node)
        except ValueError:
            message = f"an integer of {len(node.value):,} characters is too long to be a number"
            raise _TooLarge(Problem(node.start_mark.line + 1, self._where(), message)) from None

    def _where(self) -> str:
        return format_loc([seg for seg, _ in self._path])

    def _check_items(self, parent: yaml.Node | None, index: Any) -> None:
        """Refuse an item past MAX_ITEMS in its list or mapping (`parent`), named by the field
        that holds that list or mapping, at that field's line."""
        if isinstance(parent, yaml.SequenceNode):
            count = index
        elif isinstance(parent, yaml.MappingNode) and index is None:
            count = len(parent.value)  # a key: the pairs composed so far
        else:
            return
        if count >= MAX_ITEMS:
            line = self._path[-1][1] + 1 if self._path else 1
            message = (
                f"more than {MAX_ITEMS:,} items (a list or mapping in a scenario holds at most "
                f"{MAX_ITEMS:,}; split the scenario)"
            )
            raise _TooLarge(Problem(line, self._where(), message))


def compose(text: str, path: Path) -> tuple[yaml.Node | None, Any]:
    """The node tree and the data of `text`; a ScenarioFileError naming the line at fault."""
    loader = _ScenarioLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except _TooLarge as exc:
        raise scenario_error(path, [exc.problem]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        context_mark = getattr(exc, "context_mark", None)
        if context and context_mark is not None and context_mark.line + 1 != line:
            context += f" that started at line {context_mark.line + 1}"
        message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
        raise scenario_error(path, [Problem(line, "(yaml)", message)]) from exc
    finally:
        loader.dispose()
    return node, data


def duplicates(node: yaml.Node | None, loc: Loc = ()) -> list[Problem]:
    """Each key given twice in a mapping of the document, at its second line."""
    problems: list[Problem] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
            if name in seen:
                field_name = format_loc((*loc, name))
                problems.append(Problem(key.start_mark.line + 1, field_name, "duplicate key"))
            seen.add(name)
            problems += duplicates(value, (*loc, name))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            problems += duplicates(item, (*loc, i))
    return problems
