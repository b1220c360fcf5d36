"""The layers point down (issue 30; issue 39: checked by import-linter, not a home-made checker).

The contracts are in pyproject.toml's `[tool.importlinter]`, read from the top down: entry,
composition, application, agents, adapters, fiction, services, events, lessons, interfaces,
models, base. A module imports its own layer and the layers beneath it; adapters know no engine,
rules or lessons; agents no adapter; no two parts import each other round a cycle; every
top-level module is in a layer. `make lint` runs `lint-imports` on the package; here the same
contracts run on copies of the package with violations planted, to show that each is caught,
wherever the import hides (inside a function, under TYPE_CHECKING).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cairn

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

pytestmark = pytest.mark.skipif(
    not LINT_IMPORTS.exists(), reason="import-linter is not installed (pip install -e .[dev])"
)


def lint(folder: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the package `cairn` in `folder`, with `folder`'s pyproject.toml."""
    env = {**os.environ, "PYTHONPATH": str(folder)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def planted(tmp_path: Path, files: dict[str, str], config: str | None = None) -> Path:
    """A copy of the package (and of pyproject.toml, or `config`) with `files` added."""
    folder = tmp_path / "copy"
    shutil.copytree(
        Path(cairn.__file__).parent,
        folder / "cairn",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (folder / "pyproject.toml").write_text(
        config if config is not None else (ROOT / "pyproject.toml").read_text()
    )
    for name, source in files.items():
        (folder / "cairn" / name).write_text(source)
    return folder


def test_the_package_keeps_its_contracts() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 4 kept, 0 broken." in result.stdout


def test_an_import_pointing_up_is_caught_wherever_it_hides(tmp_path: Path) -> None:
    folder = planted(
        tmp_path,
        {
            # an adapter reaching for the engine
            "adapters/planted.py": "from cairn.services.map import MapGraph\n",
            # inside a function: a lazy import is still a dependency
            "services/planted_lazy.py": (
                "def f() -> None:\n    from cairn.agents import summarizer\n"
            ),
            # a type is a dependency too
            "models/planted_typing.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from cairn.play.session import PlaySession\n"
            ),
            # a module in no layer
            "planted_loose.py": "x = 1\n",
            # an agent reaching for a concrete client
            "agents/planted.py": "from cairn.adapters.llm import breaker\n",
        },
    )
    out = lint(folder).stdout
    assert "Contracts: 0 kept, 4 broken." in out
    for caught in (
        "cairn.adapters.planted -> cairn.services.map (l.1)",
        "cairn.services.planted_lazy -> cairn.agents.summarizer (l.2)",
        "cairn.models.planted_typing -> cairn.play.session (l.3)",
        "- cairn.planted_loose",
        "cairn.agents.planted -> cairn.adapters.llm.breaker (l.1)",
    ):
        assert caught in out, out


def test_two_parts_importing_each_other_are_a_cycle(tmp_path: Path) -> None:
    """`cairn.replay` uses `cairn.play`; one import back is a cycle, though both are use
    cases of one layer."""
    folder = planted(tmp_path, {"play/planted.py": "import cairn.replay.runner\n"})
    out = lint(folder).stdout
    assert "Contracts: 3 kept, 1 broken." in out
    assert "No cycles are allowed in cairn." in out and ".replay -> .play (1 import)" in out


def test_an_exception_no_module_takes_any_more_fails_the_check(tmp_path: Path) -> None:
    config = (ROOT / "pyproject.toml").read_text()
    stale = '    "cairn.runtime.demo -> cairn.container",\n]\nunmatched'
    assert stale in config
    config = config.replace(
        stale,
        '    "cairn.runtime.demo -> cairn.container",\n    "cairn.errors -> cairn.container",'
        "\n]\nunmatched",
        1,
    )
    result = lint(planted(tmp_path, {}, config))
    assert result.returncode != 0
    assert "No matches for ignored import cairn.errors -> cairn.container." in (
        result.stdout + result.stderr
    )
