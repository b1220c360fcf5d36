"""What a report shows, from a workdir: report.json, map.json, the store and the transcript."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from cairn.adapters.storage.map_repository import load_map
from cairn.errors import ReportError
from cairn.interfaces.store import IStoreReader
from cairn.models.memory import (
    LocationRecord,
    MemoryCategory,
    MemoryEntry,
    MemoryScope,
    MemorySource,
)
from cairn.report.svg_map import MapMarks
from cairn.services.map import MapGraph

REPORT_FILE = "report.json"
ARCHIVE_SHOWN = 2000
"""The newest archived (superseded) memories a report embeds: the archive only grows, and a
report reads what it shows, not every memory a long-lived store ever superseded."""


@dataclass
class RunData:
    """Everything one report page draws."""

    report: dict[str, Any]
    graph: MapGraph
    memories: list[MemoryEntry]
    locations: dict[int, LocationRecord] = field(default_factory=dict)
    start: int | None = None
    current: int | None = None
    baseline: dict[str, Any] | None = None
    older_archived: int = 0
    """Archived memories older than the ones in `memories` (counted, not read)."""

    @cached_property
    def marks(self) -> MapMarks:
        """The map's marks: visible memories, danger rooms and deaths per room, start, current."""
        counts: Counter[int] = Counter()
        danger: set[int] = set()
        deaths: Counter[int] = Counter()
        for entry in self.memories:
            if entry.location_id is None:
                continue
            if (
                entry.source is MemorySource.ENDING
                and entry.category is MemoryCategory.DANGER
                and entry.scope is MemoryScope.WORLD
            ):
                deaths[entry.location_id] += 1
            if entry.scope is not MemoryScope.LOCATION or not entry.visible:
                continue
            counts[entry.location_id] += 1
            if entry.category is MemoryCategory.DANGER:
                danger.add(entry.location_id)
        return MapMarks(
            memories=dict(counts),
            danger=frozenset(danger),
            deaths=dict(deaths),
            start=self.start,
            current=self.current,
            names={room: record.name for room, record in self.locations.items() if record.name},
        )


def load_report_json(folder: Path, *, what: str = "workdir") -> dict[str, Any]:
    """The report.json of a run's folder; ReportError naming the folder when there is none."""
    if not folder.is_dir():
        raise ReportError(f"{what} {folder} does not exist")
    path = folder / REPORT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise ReportError(
            f"{path}: no report.json in this {what} (run `cairn play` there first)"
        ) from error
    except (OSError, UnicodeDecodeError) as error:
        raise ReportError(f"{path}: cannot read: {error}") from error
    except json.JSONDecodeError as error:
        raise ReportError(f"{path}: not valid JSON (line {error.lineno}): {error.msg}") from error
    if not isinstance(data, dict) or not isinstance(data.get("episodes"), list):
        raise ReportError(f"{path}: not a cairn report (no list of episodes)")
    return data


def gather(
    workdir: Path,
    store: IStoreReader,
    *,
    map_file: str = "map.json",
    baseline: Path | None = None,
) -> RunData:
    """Read a workdir's run: its report.json (required), map, memories (through the store's
    public reads), start and current rooms (from the run's transcript), and the baseline's
    report.json when a baseline folder is given."""
    report = load_report_json(workdir)
    base = load_report_json(baseline, what="baseline") if baseline is not None else None
    start, current = run_ends(workdir, report)
    archived, older = shown_archive(store)
    return RunData(
        report=report,
        graph=MapGraph.from_snapshot(load_map(workdir / map_file)),
        memories=archived + store.entries(),
        locations=store.locations(),
        start=start,
        current=current,
        baseline=base,
        older_archived=older,
    )


def shown_archive(store: IStoreReader) -> tuple[list[MemoryEntry], int]:
    """The archived memories a report shows (the newest `ARCHIVE_SHOWN`) and how many older
    ones it leaves out."""
    return store.archived(newest=ARCHIVE_SHOWN), max(0, store.archived_count() - ARCHIVE_SHOWN)


def run_ends(workdir: Path, report: dict[str, Any]) -> tuple[int | None, int | None]:
    """The room the run started in and the room it ended in, from `runs/<id>/transcript.jsonl`
    (None, None when the transcript is gone)."""
    run_id = report.get("run_id")
    if not isinstance(run_id, str):
        return None, None
    path = workdir / "runs" / run_id / "transcript.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None, None
    # the first turn that names its room and the last one (a long run's transcript is large:
    # the lines between are not decoded)
    start = next((r for r in _rooms(lines, "location_before") if isinstance(r, int)), None)
    current = next(
        (r for r in _rooms(reversed(lines), "location_after") if isinstance(r, int)), None
    )
    return start, current


def _rooms(lines: Iterable[str], field: str) -> Iterator[object]:
    """`field` of each transcript line that is a JSON object, in the order given."""
    for line in lines:
        try:
            turn = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(turn, dict):
            yield turn.get(field)
