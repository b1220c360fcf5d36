"""Write a workdir's report page: open its store (through the composition root), gather, render."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cairn.adapters.files import atomic_write_text
from cairn.errors import ReportError
from cairn.report.data import RunData, gather, load_report_json, run_ends, shown_archive
from cairn.report.page import render_page
from cairn.report.svg_map import map_svg
from cairn.services.map import MapGraph

if TYPE_CHECKING:
    from cairn.interfaces.store import IStoreReader
    from cairn.settings import CairnSettings

HTML_FILE = "report.html"
"""The page `cairn play` writes beside report.json."""


def write_report(
    settings: CairnSettings,
    *,
    output: Path | None = None,
    baseline: Path | None = None,
    store: IStoreReader | None = None,
) -> Path:
    """Render the report of `settings.workdir` into `output` (default: WORKDIR/report.html);
    the path written. ReportError when the workdir holds no report.json or the baseline none.
    `store`: the workdir's store, open (a run's own, which has read its memories already; left
    open); by default the store is opened through the composition root, and closed."""
    from cairn.container import build_container

    workdir = settings.workdir
    load_report_json(workdir)  # fail before opening (and creating) a store in a wrong folder
    if baseline is not None:
        load_report_json(baseline, what="baseline")
    if store is not None:
        data = gather(workdir, store, map_file=settings.map_file, baseline=baseline)
    else:
        opened = build_container(settings).store()
        try:
            data = gather(workdir, opened, map_file=settings.map_file, baseline=baseline)
        finally:
            opened.close()
    path = output if output is not None else workdir / HTML_FILE
    try:
        atomic_write_text(path, render_page(data))
    except OSError as error:
        raise ReportError(f"{path}: cannot write the report: {error}") from error
    return path


def workdir_map_svg(settings: CairnSettings, graph: MapGraph) -> str:
    """The report's map of `graph` alone, marked with the workdir's memories (and the last
    run's start and current rooms when its report.json is there)."""
    from cairn.container import build_container

    try:
        report = load_report_json(settings.workdir)
    except ReportError:
        report = {}
    store = build_container(settings).store()
    try:
        archived, older = shown_archive(store)
        data = RunData(
            report, graph, archived + store.entries(), store.locations(), older_archived=older
        )
    finally:
        store.close()
    data.start, data.current = run_ends(settings.workdir, report)
    return map_svg(graph, data.marks)
