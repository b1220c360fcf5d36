"""cairn installed from its built wheel, with no extras, into a fresh virtual environment, and
used from a project that has its own `app` package and `container` module (the names cairn's
repository uses): the engine's names stay its own, `import cairn` works, the narrative
scenario replays, and play without the `jericho` extra is a one-line install hint."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_SKIP = {
    ".venv",
    ".git",
    "build",
    ".typecheck",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "cairn-runs",
}


def run(*args: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600, check=check
    )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding cairn's wheel (core only), built from a copy of this checkout."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "src"
    shutil.copytree(
        ROOT,
        source,
        symlinks=True,
        ignore=lambda folder, names: [
            n for n in names if n in _SKIP or n.endswith(".egg-info") or n.startswith(".cairn")
        ],
    )
    # the checkout's re-export and the package's composition root with one timestamp (a copy
    # step that copies only newer files once shipped the re-export as `cairn.container`)
    for same in (source / "container.py", source / "app" / "container.py"):
        os.utime(same, (1_700_000_000, 1_700_000_000))
    pip = [sys.executable, "-m", "pip"]
    run(*pip, "wheel", "--quiet", "--no-deps", "-w", base / "dist", source, cwd=base)
    (wheel,) = (base / "dist").glob("cairn-*.whl")
    run(sys.executable, "-m", "venv", base / "venv", cwd=base)
    python = base / "venv" / "bin" / "python"
    constraints = ROOT / "constraints.txt"
    run(python, "-m", "pip", "install", "--quiet", "-c", constraints, wheel, cwd=base)
    return base / "venv"


ENGINE = textwrap.dedent(
    """
    import logging
    import sys

    import app.adapters  # the engine's own packages, named as cairn's repository names its own
    import container

    import cairn
    from cairn import Memory, commands
    from cairn.container import build_container
    from cairn.models.game import GameState, LocationState, Message

    assert app.adapters.ENGINE == "mine" and container.ENGINE == "mine"
    gs = GameState()
    gs.locations[1] = LocationState(id=1, name="Tavern")
    bus = build_container(workdir="memories").bus()
    bus.handle(commands.ChangeLocation(game_state=gs, to_location_id=1, to_location_name="Tavern"))
    bus.handle(commands.RememberNote(game_state=gs, text="Grik guards the cage.", location_id=1))
    with Memory.open("memories") as memory:
        memory.add("The cellar key hangs behind the bar.", location_id=1)
        hits = memory.search("cellar key")
    assert hits and "cellar key" in hits[0].memory.text, hits
    ours = {"app", "cairn"}
    names = sorted(n for n in logging.root.manager.loggerDict if n.split(".")[0] in ours)
    assert names and all(n.startswith("cairn") for n in names), names
    assert "jericho" not in sys.modules and "anthropic" not in sys.modules
    print("engine ok", cairn.__file__)
    """
)


def test_the_wheel_works_beside_a_project_with_its_own_app_and_container(
    venv: Path, tmp_path: Path
) -> None:
    project = tmp_path / "engine"
    (project / "app").mkdir(parents=True)
    (project / "app" / "__init__.py").write_text("")
    (project / "app" / "adapters.py").write_text('ENGINE = "mine"\n')
    (project / "container.py").write_text('ENGINE = "mine"\n')
    (project / "engine.py").write_text(ENGINE)
    done = run(venv / "bin" / "python", "engine.py", cwd=project, check=False)
    assert done.returncode == 0, done.stderr
    assert "engine ok" in done.stdout and "site-packages" in done.stdout
    assert (project / "memories" / "Memories.md").is_file()


def test_a_core_install_replays_the_tavern_scenario(venv: Path, tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    shutil.copytree(ROOT / "scenarios", scenarios)
    done = run(
        venv / "bin" / "cairn", "replay", scenarios / "tavern_session.yaml",
        "--workdir", tmp_path / "replay", cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 scenario(s): 1 passed, 0 failed" in done.stdout


def test_play_without_the_jericho_extra_is_a_one_line_install_hint(
    venv: Path, tmp_path: Path
) -> None:
    done = run(
        venv / "bin" / "cairn", "play", "--workdir", tmp_path / "w", cwd=tmp_path, check=False
    )
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: playing a Z-machine game needs jericho, which is not installed:"
        " pip install 'cairn[jericho]'"
    ], done.stderr
    assert "Traceback" not in done.stderr
    assert (venv / "bin" / "cairn").is_file()
    version = run(venv / "bin" / "cairn", "--version", cwd=tmp_path)
    assert version.stdout.startswith("cairn, version ")
