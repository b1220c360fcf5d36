"""What pyproject.toml cannot say about cairn's packaging.

The import name is `cairn`; the repository keeps the design's layout: the package's folder is
`app/`. `package_dir` maps the package `cairn` to the folder `app/` (an editable install maps
it there too, so tracebacks and coverage name the files git tracks), with every subpackage of
`app/` under the `cairn.` name. The composition root is the package's own module
(`app/container.py`); the top-level `container.py` only re-exports it for the checkout and is
not installed: an engine's own `container` module keeps its name.
"""

from __future__ import annotations

from setuptools import find_namespace_packages, setup

setup(
    package_dir={"cairn": "app"},
    packages=[
        "cairn",
        *(f"cairn.{name}" for name in find_namespace_packages("app", exclude=["*__pycache__*"])),
    ],
)
