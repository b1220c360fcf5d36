"""What pyproject.toml cannot say about cairn's packaging.

The import name is `cairn`; the repository keeps the design's layout: the package's folder is
`app/` and the composition root is `container.py` at the top. So:

- `package_dir` maps the package `cairn` to the folder `app/` (an editable install maps it
  there too, so tracebacks and coverage name the files git tracks), with every subpackage of
  `app/` under the `cairn.` name;
- the wheel's `cairn/container.py` is the top-level `container.py` itself (`BuildPy`), in place
  of `app/container.py`, which in a checkout loads that file as `cairn.container`, and of its
  type stub. The wheel installs no top-level `container` module: an engine's own keeps its name.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildPy(build_py):  # type: ignore[misc]
    """`build_py` that puts the composition root into the built package (see above)."""

    def run(self) -> None:
        super().run()
        package = Path(self.build_lib) / "cairn"
        if package.is_dir():
            self.copy_file(str(ROOT / "container.py"), str(package / "container.py"))
            (package / "container.pyi").unlink(missing_ok=True)


setup(
    package_dir={"cairn": "app"},
    packages=[
        "cairn",
        *(f"cairn.{name}" for name in find_namespace_packages("app", exclude=["*__pycache__*"])),
    ],
    cmdclass={"build_py": BuildPy},
)
