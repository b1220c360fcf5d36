"""`cairn memories check`: every problem in a memory file by line, its notes and its memories."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cairn.adapters.input_files import read_memory_file
from cairn.adapters.storage.gc_pause import gc_paused
from cairn.adapters.storage.markdown_parse import parse
from cairn.models.memory import ParseProblem


def read_text(path: Path) -> str:
    """The file's text; undecodable bytes are kept (surrogateescape) so a rewrite preserves them."""
    return read_memory_file(path).decode("utf-8", errors="surrogateescape")


@dataclass
class FileCheck:
    """What `cairn memories check` finds in a memory file."""

    problems: list[ParseProblem]
    """What cairn cannot read or would lose, by line."""
    notes: list[int]
    """Where a person's notes start (kept verbatim: content, not problems)."""
    memories: int
    """The memories read."""
    blocks: int = 0
    """The memory blocks read: more than `memories` when an appended part (the recent part,
    the archive) holds a later version of a memory (its later block is the one read)."""


_UNDECODABLE = re.compile("[\udc80-\udcff]")
"""The characters `read_text` keeps bytes that are not UTF-8 as."""


def check_file(path: Path) -> FileCheck:
    """Every problem in a memory file, with line numbers, its notes and its memories (one
    parse, in time linear in the file's size)."""
    text = read_text(path).removeprefix("\ufeff").replace("\r\n", "\n")
    with gc_paused():  # (as a store's load: the objects made all stay alive until the end)
        parsed = parse(text, str(path))
    problems = parsed.problems
    line, at = 1, 0
    for match in _UNDECODABLE.finditer(text):
        start = match.start()
        line += text.count("\n", at, start)
        at = start
        if not problems or problems[-1].line != line or problems[-1].message != _NOT_UTF8:
            problems.append(ParseProblem(path=str(path), line=line, message=_NOT_UTF8))
    problems.sort(key=lambda p: p.line)
    blocks = text.count("\n**[") + text.startswith("**[")  # (header lines: see ArchiveFile.count)
    return FileCheck(problems, parsed.notes, len(parsed.cache.memories), blocks)


_NOT_UTF8 = "bytes that are not UTF-8"


def check_memory_file(path: Path) -> list[ParseProblem]:
    """Every problem in a memory file, with line numbers (empty when the file is valid)."""
    return check_file(path).problems
