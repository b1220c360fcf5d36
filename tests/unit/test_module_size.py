"""Modules of one concern (issue 30): no module of the package is over 500 lines (a longer
one holds more than one thing; split it where its concerns part)."""

from __future__ import annotations

from pathlib import Path

import cairn

LIMIT = 500


def test_no_module_in_the_package_is_over_500_lines() -> None:
    root = Path(cairn.__file__).parent
    long = {
        str(path.relative_to(root)): n
        for path in sorted(root.rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > LIMIT
    }
    assert long == {}
    assert len(list(root.rglob("*.py"))) > 100  # (the package was found)
