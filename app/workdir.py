"""Workdirs: the folders cairn writes into (new, empty, or its own and of the same game) and reads.

A folder cairn writes into holds a marker, `.cairn` (JSON: cairn's version and the game whose run
the folder holds). A command that writes accepts a folder that does not exist yet (it makes it),
an empty one, one with the marker (of the same game, or of no game yet), or one that holds
cairn's files from before the marker existed: its store (`Memories.md` starting with one of
cairn's section headings, `memories.sqlite3` that is an SQLite database), a `report.json` or
`map.json` of cairn's shape, or a subfolder `cairn replay` made. Anything else (`/`, a home
folder, a folder of other files) is refused before anything is written. A command that reads
never makes a folder: a missing one is an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from cairn.adapters.files import atomic_write_text, ensure_folder
from cairn.adapters.game.story_file import read_story_file
from cairn.adapters.input_files import MAX_REPORT_BYTES, MAX_SMALL_FILE_BYTES, read_named_file
from cairn.adapters.run_lock import RUN_LOCK, run_lock
from cairn.errors import StoreError, WorkdirError

if TYPE_CHECKING:
    from cairn.settings import CairnSettings

MARKER = ".cairn"
"""The file that marks a folder as cairn's workdir."""
REPLAY_MARKER = ".cairn-replay"
"""What `cairn replay` leaves in each scenario's folder (`cairn.replay.prepare.MARKER`)."""
CHOOSE = "choose another folder with --workdir NEW_FOLDER"


@dataclass(frozen=True)
class GameIdentity:
    """Which game a workdir's run is of."""

    key: str
    """The game's name everywhere: in the marker, as the default folder (`cairn-runs/<key>`)
    and as the postgres store's default memory space."""
    name: str
    """What `report.json` calls the game (a story file's stem): checked in a folder from
    before the marker."""
    title: str
    """The game in messages."""


def story_identity(path: Path) -> GameIdentity:
    """A story file's: its stem and the start of its SHA-256 (`mygame-0123456789abcdef`)."""
    digest = hashlib.sha256(read_story_file(path)).hexdigest()[:16]
    return GameIdentity(f"{path.stem}-{digest}", path.stem, f"{path.name} (sha256 {digest}...)")


def demo_identity(seed: int) -> GameIdentity:
    """The built-in demo world's, built with `seed` (`demo-world-1`)."""
    return GameIdentity(
        f"demo-world-{seed}", f"tw-cairn-demo-{seed}", f"the built-in demo world (seed {seed})"
    )


def named_identity(name: str) -> GameIdentity:
    """A game known by its name only (a game object given to `run_play`)."""
    return GameIdentity(name, name, f"the game {name!r}")


NARRATIVE_DEMO = GameIdentity("narrative-demo", "narrative-demo", "the narrative demo (cairn demo)")
REPLAYS = GameIdentity("replays", "replays", "cairn replay's scenario folders")


class WorkdirMarker(BaseModel):
    """The content of `.cairn`."""

    model_config = ConfigDict(extra="ignore")  # a later version may add fields

    made_by: Literal["cairn"] = "cairn"
    version: str
    game: str | None = None
    """The game's key (`GameIdentity.key`); None: no game yet (`memories import`)."""
    title: str | None = None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cairn")
    except PackageNotFoundError:
        return "unknown"


def _marker_for(game: GameIdentity | None) -> WorkdirMarker:
    return WorkdirMarker(
        version=_version(),
        game=None if game is None else game.key,
        title=None if game is None else game.title,
    )


def read_marker(folder: Path) -> WorkdirMarker | None:
    """The folder's marker; None when it has none. WorkdirError when `.cairn` is not cairn's."""
    path = folder / MARKER
    try:
        text = read_named_file(
            path,
            what="workdir marker",
            limit=MAX_SMALL_FILE_BYTES,
            error=lambda problem: WorkdirError(f"{path}: {problem}"),
        ).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise WorkdirError(f"{path}: cannot read cairn's workdir marker: {reason}") from exc
    try:
        return WorkdirMarker.model_validate_json(text)
    except ValidationError as exc:
        raise WorkdirError(f"{path}: not cairn's workdir marker; {CHOOSE}") from exc


class _RunFiles(NamedTuple):
    memory: str
    sqlite: str
    report: str
    map: str


def _run_files(settings: CairnSettings | None) -> _RunFiles:
    """The store, report and map file names (the configured ones, else the defaults)."""
    from cairn.settings import CairnSettings

    if settings is None:
        fields = CairnSettings.model_fields
        return _RunFiles(*(str(fields[f"{n}_file"].default) for n in _RunFiles._fields))
    return _RunFiles(*(str(getattr(settings, f"{n}_file")) for n in _RunFiles._fields))


_MEMORY_HEADINGS = (
    "# Location Memories",
    "# NPC Memories",
    "# World Memories",
    "# Recent Memories",
    "# Archived Memories",
    "## Location ",
    "## NPC ",
    "## World",
)


def _is_memory_file(path: Path) -> bool:
    """Empty, or its first line that is not blank is one of cairn's section headings."""
    with path.open("rb") as handle:
        head = handle.read(4096).decode("utf-8", errors="replace").removeprefix("\ufeff")
    first = next((line.strip() for line in head.splitlines() if line.strip()), "")
    return not first or first.startswith(_MEMORY_HEADINGS)


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"


def _json_object(path: Path) -> dict[str, object] | None:
    try:
        raw = read_named_file(
            path,
            what="JSON file",
            limit=MAX_REPORT_BYTES,
            error=lambda problem: WorkdirError(f"{path}: {problem}"),
        )
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, WorkdirError):  # missing, unreadable, no file, not JSON
        return None
    return data if isinstance(data, dict) else None


def _is_report(path: Path) -> bool:
    data = _json_object(path)
    return data is not None and "game" in data and isinstance(data.get("episodes"), list)


def _is_map(path: Path) -> bool:
    data = _json_object(path)
    return data is not None and "version" in data and isinstance(data.get("rooms"), list)


def _made_by_cairn(folder: Path, settings: CairnSettings | None) -> bool:
    """The folder holds cairn's files from before the marker (see the module docstring)."""
    files = _run_files(settings)
    checks = (
        (files.memory, _is_memory_file),
        (files.sqlite, _is_sqlite),
        (files.report, _is_report),
        (files.map, _is_map),
    )
    try:
        for name, looks_right in checks:
            path = folder / name
            if path.is_file() and not path.is_symlink() and looks_right(path):
                return True
        return any(
            (entry / REPLAY_MARKER).is_file() for entry in folder.iterdir() if entry.is_dir()
        )
    except OSError as exc:
        raise StoreError(f"{folder}: cannot read the folder: {exc.strerror or exc}") from exc


def _contents(folder: Path) -> list[str]:
    try:
        return sorted(entry.name for entry in folder.iterdir())
    except OSError as exc:
        raise StoreError(f"{folder}: cannot read the folder: {exc.strerror or exc}") from exc


def _marker_being_written(name: str) -> bool:
    return name.startswith(f"{MARKER}.") and name.endswith(".tmp")


def check_ours(folder: Path, settings: CairnSettings | None = None) -> WorkdirMarker | None:
    """Refuse (WorkdirError) a folder a command must not write into; return its marker (None:
    the folder is new, empty or holds cairn's files from before the marker)."""
    if not folder.exists():
        return None
    if not folder.is_dir():
        raise WorkdirError(f"{folder}: not a folder; {CHOOSE}")
    marker = read_marker(folder)
    if marker is not None:
        return marker
    # (a marker another command is writing this moment: its temp file, `_create_marker`)
    names = [n for n in _contents(folder) if not _marker_being_written(n)]
    if not names or _made_by_cairn(folder, settings):
        return None
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise WorkdirError(
        f"{folder}: not a folder cairn made (it holds {shown}); cairn writes only into a new or"
        f" empty folder or one of its own: {CHOOSE}"
    )


def _other_game(folder: Path, held: str, game: GameIdentity) -> WorkdirError:
    fresh = (
        ", or play with --fresh, which sets the old run aside into"
        f" {folder / 'backups'}/ (cairn keeps one game per workdir)"
    )
    return WorkdirError(f"{folder}: holds a run of {held}, not of {game.title}: {CHOOSE}{fresh}")


def _report_game(folder: Path, settings: CairnSettings | None) -> str | None:
    """The game named by the report.json of a folder from before the marker."""
    data = _json_object(folder / _run_files(settings).report)
    game = data.get("game") if data is not None else None
    return game if isinstance(game, str) else None


def claim_workdir(
    folder: Path, game: GameIdentity | None, settings: CairnSettings | None = None
) -> None:
    """Make `folder` the workdir of `game` (None: of no game in particular, e.g. an import):
    refuse a folder cairn did not make and a folder holding another game's run, else make the
    folder and mark it. A folder from before the marker is taken as the game's unless its
    report.json names another game."""
    marker = check_ours(folder, settings)
    if marker is None:
        if game is not None and folder.is_dir():
            held = _report_game(folder, settings)
            if held is not None and held != game.name:
                report = _run_files(settings).report
                raise _other_game(folder, f"{held!r} (its {report} says so)", game)
        ensure_folder(folder)
        marker = _create_marker(folder, _marker_for(game))
        if marker is None:
            return
    if marker.game is None:
        if game is not None:
            mark_workdir(folder, game)
    elif game is not None and marker.game != game.key:
        raise _other_game(folder, marker.title or repr(marker.game), game)


def mark_workdir(folder: Path, game: GameIdentity | None) -> None:
    """Mark `folder` (made if needed) as the workdir of `game`, replacing any marker."""
    ensure_folder(folder)
    try:
        atomic_write_text(folder / MARKER, _marker_for(game).model_dump_json(indent=2) + "\n")
    except OSError as exc:
        raise StoreError(f"{folder / MARKER}: cannot write: {exc.strerror or exc}") from exc


def _create_marker(folder: Path, marker: WorkdirMarker) -> WorkdirMarker | None:
    """Write the marker unless the folder has one; return the one found instead (two commands
    claiming one new folder at once: the second sees the first one's whole marker)."""
    path = folder / MARKER
    tmp = folder / f"{MARKER}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise StoreError(f"{path}: cannot write: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(marker.model_dump_json(indent=2) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            return read_marker(folder)
        except OSError:  # a file system without hard links: not atomic, but written whole
            os.replace(tmp, path)
    except OSError as exc:
        raise StoreError(f"{path}: cannot write: {exc.strerror or exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return None


def game_workdir(settings: CairnSettings, game: GameIdentity) -> CairnSettings:
    """`settings` with the game's own workdir when none was chosen (no --workdir, `workdir`
    setting or CAIRN_WORKDIR): `cairn-runs/<key>`, one folder per game."""
    if "workdir" in settings.model_fields_set:
        return settings
    return settings.model_copy(update={"workdir": settings.workdir / game.key})


def _holds_a_run(folder: Path, settings: CairnSettings) -> bool:
    names = (MARKER, *_run_files(settings))
    return any((folder / name).is_file() for name in names)


def reading_workdir(settings: CairnSettings) -> Path:
    """The folder a reading command reads: the one chosen, which must exist; by default
    `cairn-runs` when it holds a run itself, else the one game folder in it (several: an error
    naming them). Nothing is created."""
    folder = settings.workdir
    chosen = "workdir" in settings.model_fields_set
    if not folder.is_dir():
        what = "not a folder" if folder.exists() else "no such folder"
        where = "" if chosen else f" (cairn play writes into {folder}/GAME)"
        raise WorkdirError(f"{folder}: {what}{where}; give --workdir the folder of a run")
    if chosen or _holds_a_run(folder, settings):
        return folder
    try:
        games = sorted(p for p in folder.iterdir() if p.is_dir() and _holds_a_run(p, settings))
    except OSError as exc:
        raise StoreError(f"{folder}: cannot read the folder: {exc.strerror or exc}") from exc
    if len(games) > 1:
        raise WorkdirError(
            f"{folder}: holds the runs of {len(games)} games ({', '.join(map(str, games))});"
            " give --workdir the one to read"
        )
    return games[0] if games else folder


@contextlib.contextmanager
def held_for_play(folder: Path, claim: Callable[[], None]) -> Iterator[None]:
    """Claim `folder` for a play (`claim`: `claim_workdir`, say) and hold its run lock while
    the block runs (`cairn.adapters.run_lock`). A start that fails leaves the folders as they
    were: the folders it made (the workdir, `cairn-runs`) are removed again, and an empty
    workdir it found is emptied again, when they hold nothing but what the claim and the lock
    put there. So a mistyped `--game` or `--llm` leaves no `cairn-runs/<game>/.cairn` for the
    next `memories show` to find."""
    made = [path for path in (folder, *folder.parents) if not path.exists()]
    found_empty = not made and _is_empty(folder)

    def undo() -> None:
        if found_empty:
            _empty_again(folder)
        for path in made:  # deepest first
            if not _empty_again(path) or not _removed(path):
                return

    try:
        claim()
        with run_lock(folder):
            try:
                yield
            except BaseException:
                undo()  # under the lock: no other play is starting in the folder
                raise
    except WorkdirError:
        raise  # refused: the claim made nothing, or another play holds the folder
    except BaseException:
        undo()
        raise


def _is_empty(folder: Path) -> bool:
    try:
        return folder.is_dir() and not any(folder.iterdir())
    except OSError:
        return False


def _empty_again(folder: Path) -> bool:
    """Delete the marker and the run lock from `folder` when it holds nothing else; whether
    it is empty now (a folder already gone counts as empty)."""
    try:
        names = set(os.listdir(folder))
        if not names <= {MARKER, RUN_LOCK}:
            return False
        for name in names:
            (folder / name).unlink(missing_ok=True)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _removed(folder: Path) -> bool:
    try:
        folder.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True
