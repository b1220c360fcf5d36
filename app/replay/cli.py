"""`cairn replay`: run scenarios (or a story file's walkthrough) and report each expectation.

Exit codes: 0 every expectation passed; 1 one failed, or a replay stopped on an error; 2 the
command line is wrong or a scenario file is refused (every refusal is printed, one
`file:line: field: reason` line each, and nothing is replayed or written)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from cairn.replay.scenario_document import ScenarioDocument


@click.command("replay")
@click.argument("scenarios", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for the replays, one fresh subfolder per scenario: new, empty, or one cairn"
    " replay made (default: a temporary folder, removed when everything passed).",
)
@click.option(
    "--update-expected", is_flag=True, help="Rewrite the expected prompt files that differ."
)
@click.option(
    "--roms",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    envvar="CAIRN_ROMS",
    help="Where story files are looked up after the scenario's own folder (default: $CAIRN_ROMS;"
    " none).",
)
@click.option(
    "--game",
    "game_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A story file whose walkthrough to replay (with --walkthrough).",
)
@click.option("--walkthrough", is_flag=True, help="Replay the --game story file's walkthrough.")
@click.option(
    "--episodes", type=click.IntRange(min=1), default=1, show_default=True, help="With --game."
)
@click.pass_context
def replay(
    ctx: click.Context,
    scenarios: tuple[Path, ...],
    workdir: Path | None,
    update_expected: bool,
    roms: Path | None,
    game_path: Path | None,
    walkthrough: bool,
    episodes: int,
) -> None:
    """Replay SCENARIO files through the memory pipeline; exit 1 when any expectation fails.

    A SCENARIO that is a folder stands for the scenario files directly inside it (*.yaml,
    *.yml), in name order; a folder holding none (`scenarios/cassettes` in `scenarios/*`) is
    skipped with a note. Every scenario is read and checked before any is replayed: a refused
    one is printed as `file:line: field: reason` and the command exits 2, replaying nothing.
    """
    from cairn.errors import ScenarioError
    from cairn.replay.prepare import scenario_files, walkthrough_document
    from cairn.replay.runner import replay_files
    from cairn.replay.scenario import load_scenario

    if walkthrough != (game_path is not None):
        raise click.UsageError("--game and --walkthrough go together")
    if not scenarios and game_path is None:
        raise click.UsageError("give SCENARIO files, or --game PATH --walkthrough")
    files, skipped = scenario_files(scenarios)
    for folder in skipped:
        click.echo(f"note: {folder} holds no scenario file (*.yaml, *.yml); skipped", err=True)
    if not files and game_path is None:
        raise click.UsageError(f"no scenario files in {', '.join(map(str, scenarios))}")
    items: list[ScenarioDocument | Path] = []
    refused: list[str] = []
    for path in files:
        try:
            items.append(load_scenario(path))
        except ScenarioError as exc:
            refused.append(str(exc))
    if refused:
        for message in refused:
            click.echo(message, err=True)
        click.echo(f"{len(refused)} scenario(s) refused; nothing replayed", err=True)
        ctx.exit(2)
    if game_path is not None:
        items.append(walkthrough_document(game_path, episodes))
    root = workdir or Path(tempfile.mkdtemp(prefix="cairn-replay-"))
    if workdir is not None:  # new, empty, or replays' own: see cairn.workdir
        from cairn.workdir import REPLAYS, claim_workdir

        claim_workdir(root, REPLAYS)
    reports = replay_files(items, root, roms=roms, update_expected=update_expected)
    for report in reports:
        click.echo(report.render())
        click.echo()
    failed = [r for r in reports if not r.passed]
    click.echo(
        f"{len(reports)} scenario(s): {len(reports) - len(failed)} passed, {len(failed)} failed"
    )
    if workdir is None and not failed:
        shutil.rmtree(root, ignore_errors=True)
        click.echo("(temporary replay folders removed: everything passed)")
    else:
        click.echo(f"replay folders: {root}")
    if failed:
        ctx.exit(1)
