"""`cairn report` (the HTML page of a run) and `cairn compare` (two runs, episode by episode)."""

from __future__ import annotations

from pathlib import Path

import click

from cairn.cli_options import settings_for, store_option, workdir_option

_run_folder = click.Path(file_okay=False, path_type=Path)


@click.command("report")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The HTML file to write (default: WORKDIR/report.html).",
)
@click.option(
    "--baseline",
    type=_run_folder,
    default=None,
    help="The workdir of a run to compare with (e.g. a --no-memory run): both on every curve.",
)
@workdir_option
@store_option
def report(
    output: Path | None, baseline: Path | None, workdir: Path | None, store: str | None
) -> None:
    """Write one self-contained HTML page: the map, the memories, the curves and LLM use."""
    from cairn.report.writer import write_report

    settings = settings_for(workdir, store, reading=True)
    path = write_report(settings, output=output, baseline=baseline)
    click.echo(f"report: {path}")


@click.command("compare")
@click.argument("run_a", type=_run_folder)
@click.argument("run_b", type=_run_folder)
def compare(run_a: Path, run_b: Path) -> None:
    """Print two runs' figures episode by episode (RUN_A, RUN_B: their workdirs)."""
    from cairn.report.compare import render_comparison
    from cairn.report.data import load_report_json

    first, second = load_report_json(run_a, what="run"), load_report_json(run_b, what="run")
    click.echo(render_comparison(first, second, str(run_a), str(run_b)))
