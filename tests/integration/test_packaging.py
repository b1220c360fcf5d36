"""The package `cairn` is the folder `app/`, mapped by the build (setup.py), not by symlinks;
the composition root `container.py` at the top is `cairn.container`, and each is imported one
way only (issue 30: "no symlinks")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cairn
import cairn.container
import cairn.models.memory

ROOT = Path(__file__).resolve().parents[2]
_GENERATED = {".venv", ".git", ".typecheck", ".mypy_cache", ".ruff_cache", ".pytest_cache", "build"}
_RUNS = (".cairn", "cairn-runs")
"""Generated folders (the type checker's link to `app/` among them) and play's default output."""


def test_the_repository_holds_no_symlinks() -> None:
    """A checkout without symlink support gets every file (a link would be a text file there),
    and tools that skip links see every module. Generated folders are not looked in."""
    links: list[str] = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _GENERATED and not d.startswith(_RUNS)]
        links += [
            str(Path(folder, name).relative_to(ROOT))
            for name in [*dirs, *files]
            if Path(folder, name).is_symlink()
        ]
    assert links == []


def test_cairn_is_the_app_folder_and_its_root_a_module_of_it() -> None:
    assert Path(cairn.__file__).parent == ROOT / "app"
    assert Path(cairn.models.memory.__file__) == ROOT / "app" / "models" / "memory.py"
    assert Path(cairn.container.__file__) == ROOT / "app" / "container.py"
    assert sys.modules["cairn.container"] is cairn.container
    assert cairn.container.Container.__module__ == "cairn.container"


def run_from_root(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_the_folders_own_names_are_refused_from_the_repository_root() -> None:
    """From the root, `import app...` would load a second copy (whose `MemoryEntry` is not
    cairn's): it is refused, naming the way in. The top-level `container.py` re-exports the
    package's composition root: the very same objects, no second copy."""
    folder = run_from_root("import app.models.memory")
    assert folder.returncode == 1
    assert "ImportError: cairn's package is imported as `cairn`" in folder.stderr
    root = run_from_root(
        "import container, cairn.container;"
        " assert container.Container is cairn.container.Container; print('same')"
    )
    assert root.stdout.strip() == "same", root.stderr
    both = run_from_root(
        "import cairn.container, sys; from cairn.container import Container;"
        " assert sys.modules['cairn.container'].Container is Container; print('one')"
    )
    assert both.stdout.strip() == "one", both.stderr
