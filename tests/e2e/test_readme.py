"""The README's "Use it in your engine" example runs as printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_engine_example_in_the_readme_runs(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Use it in your engine") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    code = match.group(1)
    assert len(code.splitlines()) <= 20 and "from cairn import" in code
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "The lamp oil is in the cellar." in done.stdout
    assert (tmp_path / "saves" / "memories" / "Memories.md").is_file()
